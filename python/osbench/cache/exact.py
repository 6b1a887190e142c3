"""Exact hit-ratio curves, one per engine, on checked arguments: the native engine in one pass
for LRU and OPT (Mattson stack distances) and one replay per capacity on many threads for the
others; the reference engine one replay per capacity."""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from osbench import _native
from osbench.cache import _args, reference
from osbench.cache.policies import OFFLINE
from osbench.traces import Trace


def native(
    t: Trace,
    policy: str,
    caps: list[int],
    parameters: dict[str, Any],
    threads: Optional[int],
    sizes: Optional[np.ndarray] = None,
    costs: Optional[np.ndarray] = None,
) -> np.ndarray:
    """Hit ratios of the native engine at each capacity (``parameters`` resolved)."""
    ids, n_ids = t.dense()
    next_use = t.next_use() if policy in OFFLINE else None
    hits = _native.cache_curve(
        policy, ids, n_ids, np.array(caps, dtype=np.uint64), next_use, parameters, threads, sizes, costs
    )
    n = len(ids)
    return hits / n if n else np.zeros(len(caps))


def reference_curve(
    trace: Any, policy: str, caps: list[int], parameters: dict[str, Any], sizes: Any, costs: Any
) -> np.ndarray:
    """Hit ratios of the reference engine at each capacity: one replay each."""
    keys = _args.reference_keys(trace)
    n = len(keys)
    size_arr = _args.sizes(trace, sizes, n)
    cost_arr = _args.costs(costs, policy, n)
    size_list = None if size_arr is None else size_arr.tolist()
    cost_list = None if cost_arr is None else cost_arr.tolist()
    return np.array(
        [sum(reference.replay(keys, policy, c, size_list, cost_list, **parameters)) / n if n else 0.0 for c in caps]
    )
