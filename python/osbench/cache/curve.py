"""Hit-ratio curves: many capacities at once, exact or estimated from a sample (SHARDS)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Optional

import numpy as np

from osbench import _checks
from osbench.cache import _args, exact, shards
from osbench.cache import admission as _admission
from osbench.cache.policies import OFFLINE
from osbench.errors import ArgumentError
from osbench.traces import as_trace


def curve(
    trace: Any,
    policy: str,
    capacities: Iterable[int],
    *,
    engine: str = "native",
    threads: Optional[int] = None,
    sizes: Any = None,
    costs: Any = None,
    sample: Optional[float] = None,
    admission: Optional[str] = None,
    admission_params: Optional[dict[str, Any]] = None,
    **parameters: Any,
) -> np.ndarray:
    """Hit ratios of ``policy`` at each capacity (a float array, in the order given).

    LRU and OPT are stack algorithms: the native engine computes all capacities in one pass
    over the trace (Mattson stack distances). Other policies replay once per capacity, on
    ``threads`` threads (default: every CPU this process may use,
    ``len(os.sched_getaffinity(0))``). ``sizes`` and ``costs`` as in
    :func:`~osbench.cache.replay` (with sizes, capacities count bytes; with either, every
    policy replays once per capacity).

    ``sample=rate`` (0 < rate <= 1) estimates the curve from a SHARDS spatial sample
    (:func:`~osbench.cache.spatial_sample`, Waldspurger et al., FAST 2015): the accesses to
    about ``rate`` of the keys, replayed at capacities ``capacity * rate`` (LRU: the paper's
    scaled stack distances; other policies: a mini-simulation), with the paper's SHARDS_adj
    correction. Where ``capacity * rate`` would be under ``SHARDS_MIN_OBJECTS`` (100)
    objects, a sample that small is dominated by whether a few hot keys fell in it, so a larger
    one is used: LRU counts those capacities exactly, with a stack bounded at the largest of
    them in the same pass as the sampling (memory ~ that capacity, time ~ one replay); other
    policies sample at the power-of-two rate that leaves 100 to 200 objects (the whole trace
    under 200). Asking only for capacities of at least ``100 / rate`` objects keeps the whole
    estimate on the small sample. Native engine, unit sizes.

    ``admission`` and ``admission_params``: an admission filter, as for
    :func:`~osbench.cache.replay`; every capacity then replays with its own fresh filter (a
    filter breaks the stack property, and AdaptSize tunes itself to the capacity).

    ``parameters``: the policy's, as for :func:`~osbench.cache.replay`.
    """
    policy = _args.policy(policy)
    engine = _checks.engine(engine)
    caps = [_checks.positive_int("capacities", c) for c in _checks.int_list("capacities", capacities)]
    parameters = _args.parameters(policy, parameters, caps, "capacities")
    gate = _admission.check(admission, admission_params)
    if threads is not None:
        threads = _checks.positive_int("threads", threads, maximum=1024)
    if sample is not None and gate[0] is not None:
        raise ArgumentError("sample is not accepted with admission: sampled curves have no admission filter")
    if sample is not None:
        sample = _args.sample_rate(sample)
        if sizes is not None or costs is not None or engine != "native":
            raise ArgumentError(
                "sample is not accepted with sizes, costs or engine='reference': sampled curves are native, unit-size"
            )
        if policy in OFFLINE:
            raise ArgumentError(f"sample is not accepted for policy={policy!r}: offline policies need the whole future")
        return shards.sampled_curve(as_trace(trace), policy, caps, sample, parameters, threads)
    if engine == "reference":
        return exact.reference_curve(trace, policy, caps, parameters, sizes, costs, gate)
    t = as_trace(trace)
    n = len(t)
    return exact.native(
        t, policy, caps, parameters, threads, _args.sizes(t, sizes, n), _args.costs(costs, policy, n), gate
    )
