"""Admission filters, the readable way: one class per filter, one file per filter (the
reference engine's side of the core's filter table, ``osbench.cache.ADMISSIONS``).

Every class has the same interface::

    gate = Bloom(capacity)     # capacity as the cache's; then the filter's parameters
    gate.seen(key, size)       # every access, hit or miss (AdaptSize's statistics)
    gate.admit(key, size)      # on a miss: may the object enter?

:func:`access` puts a cache behind a filter in libCacheSim's order (``cache_get_base``):
the filter sees the access; a hit is a hit; on a miss the filter is asked (before the cache's
size check) and a rejected object is a miss left out of the cache. A cache class whose lookup
of a missing object changes its state (ARC's ghost hits) defines ``access_gated`` to ask the
filter between its lookup and its insertion, as libCacheSim does.

:data:`FILTER_CLASSES` is the registry: one row per filter, the same names as the core's table
(a test holds them together).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any, Optional

from osbench.cache import reference
from osbench.cache.policies import OFFLINE
from osbench.cache.reference.admission.adaptsize import AdaptSize
from osbench.cache.reference.admission.bloom import Bloom
from osbench.cache.reference.admission.prob import Prob
from osbench.cache.reference.admission.size import Size
from osbench.cache.reference.admission.sizeprob import SizeProb
from osbench.traces import next_use_reference

FILTER_CLASSES: dict[str, Any] = {
    "size": Size,
    "prob": Prob,
    "sizeprob": SizeProb,
    "bloom": Bloom,
    "adaptsize": AdaptSize,
}
"""Each filter's class, by the name the filter table gives it."""


def make(name: str, capacity: int, **parameters: Any) -> Any:
    """A fresh filter for a cache of ``capacity``, with the parameters it reads."""
    return FILTER_CLASSES[name](capacity, **parameters)


def access(
    cache: Any,
    gate: Any,
    key: Hashable,
    next_use: Optional[int] = None,
    size: Optional[int] = None,
    cost: Optional[float] = None,
) -> bool:
    """One access of ``cache`` behind ``gate``: True on a hit. ``size`` None: unit sizes."""
    unit = 1 if size is None else size
    gate.seen(key, unit)
    gated = getattr(cache, "access_gated", None)
    if gated is not None:
        return bool(gated(key, next_use, size, gate))
    if key in cache:
        return _step(cache, key, next_use, size, cost)
    if gate.admit(key, unit):
        _step(cache, key, next_use, size, cost)
    return False


def _step(cache: Any, key: Hashable, next_use: Optional[int], size: Optional[int], cost: Optional[float]) -> bool:
    if cost is not None:
        return bool(cache.access(key, None, 1 if size is None else size, cost))
    if size is not None:
        return bool(cache.access(key, next_use, size))
    if next_use is not None:
        return bool(cache.access(key, next_use))
    return bool(cache.access(key))


def replay(
    keys: Sequence[Hashable],
    policy: str,
    capacity: int,
    admission: str,
    admission_params: Optional[dict[str, Any]] = None,
    sizes: Optional[Sequence[int]] = None,
    costs: Optional[Sequence[float]] = None,
    **parameters: Any,
) -> list[bool]:
    """:func:`osbench.cache.reference.replay` behind a fresh filter ``admission`` (its
    parameters resolved in ``admission_params``); one hit flag per access."""
    cache = reference.make(policy, capacity, **parameters)
    gate = make(admission, capacity, **(admission_params or {}))
    future: Sequence[Optional[int]] = next_use_reference(keys) if policy in OFFLINE else [None] * len(keys)
    n = len(keys)
    size_list: Sequence[Optional[int]] = [None] * n if sizes is None else [int(s) for s in sizes]
    cost_list: Sequence[Optional[float]] = [None] * n if costs is None else [float(c) for c in costs]
    return [access(cache, gate, k, f, s, c) for k, f, s, c in zip(keys, future, size_list, cost_list)]


__all__ = ["FILTER_CLASSES", "access", "make", "replay", *(cls.__name__ for cls in FILTER_CLASSES.values())]
