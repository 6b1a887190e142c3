"""Exact hit-ratio curves, one per engine, on checked arguments: the native engine in one pass
for LRU and OPT (Mattson stack distances) and one replay per capacity on many threads for the
others; the reference engine one replay per capacity."""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from osbench import _native
from osbench.cache import _args, reference
from osbench.cache.policies import HASHES_KEYS, OFFLINE
from osbench.cache.reference import admission as ref_admission
from osbench.traces import Trace


def native(
    t: Trace,
    policy: str,
    caps: list[int],
    parameters: dict[str, Any],
    threads: Optional[int],
    sizes: Optional[np.ndarray] = None,
    costs: Optional[np.ndarray] = None,
    admission: tuple[Optional[str], dict[str, Any]] = (None, {}),
) -> np.ndarray:
    """Hit ratios of the native engine at each capacity (``parameters`` and the filter
    ``admission``, a name or None and its parameters, resolved)."""
    ids, n_ids = t.dense()
    next_use = t.next_use() if policy in OFFLINE else None
    hits = _native.cache_curve(
        policy,
        ids,
        n_ids,
        np.array(caps, dtype=np.uint64),
        next_use,
        parameters,
        threads,
        sizes,
        costs,
        *admission,
        keys=t.id_keys() if policy in HASHES_KEYS else None,
    )
    n = len(ids)
    return hits / n if n else np.zeros(len(caps))


def reference_curve(
    trace: Any,
    policy: str,
    caps: list[int],
    parameters: dict[str, Any],
    sizes: Any,
    costs: Any,
    admission: tuple[Optional[str], dict[str, Any]] = (None, {}),
) -> np.ndarray:
    """Hit ratios of the reference engine at each capacity: one replay each (behind a fresh
    filter each, if ``admission`` names one)."""
    keys = _args.reference_keys(trace)
    n = len(keys)
    size_arr = _args.sizes(trace, sizes, n)
    cost_arr = _args.costs(costs, policy, n)
    size_list = None if size_arr is None else size_arr.tolist()
    cost_list = None if cost_arr is None else cost_arr.tolist()
    name, filter_params = admission

    def flags(c: int) -> list[bool]:
        if name is None:
            return reference.replay(keys, policy, c, size_list, cost_list, **parameters)
        return ref_admission.replay(keys, policy, c, name, filter_params, size_list, cost_list, **parameters)

    return np.array([sum(flags(c)) / n if n else 0.0 for c in caps])
