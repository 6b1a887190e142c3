"""The argument checks of the cache functions, used by both engines: one place that refuses a
bad argument, with the project's message (``name=value is not accepted: what is accepted``),
before either engine runs. Every policy fact comes from the table (:mod:`.policies`)."""

from __future__ import annotations

import numbers
from collections.abc import Hashable
from typing import Any, Callable, Optional

import numpy as np

from osbench import _checks
from osbench.cache.policies import COSTED_POLICIES, MIN_CAPACITY, OFFLINE, PARAMETERS, POLICIES
from osbench.errors import ArgumentError, ArgumentTypeError
from osbench.traces import Trace, as_trace


def policy(value: Any) -> str:
    """A policy name from the table."""
    return _checks.choice("policy", value, POLICIES)


def capacity(name: str, policy: str, value: Any) -> int:
    """A positive integer, at least the policy's minimum capacity."""
    value = _checks.positive_int(name, value)
    least = MIN_CAPACITY.get(policy, 1)
    if value < least:
        raise ArgumentError(
            f"{name}={value} is not accepted for policy={policy!r}: it must be at least {least} "
            "(a queue of the policy would hold no object)"
        )
    return value


def parameters(policy: str, bit_on_insert: Any) -> dict[str, Any]:
    """The keyword parameters for the policy: those it reads (its row of the table); one it
    does not read is refused unless left at its default."""
    given = {"bit_on_insert": bit_on_insert}
    defaults = {"bit_on_insert": False}
    for name, value in given.items():
        if not isinstance(value, bool):
            raise ArgumentTypeError(f"{name}={value!r} is not accepted: it must be True or False")
        if value != defaults[name] and name not in PARAMETERS[policy]:
            readers = ", ".join(p for p, read in PARAMETERS.items() if name in read)
            raise ArgumentError(f"{name}={value!r} is not accepted for policy={policy!r}: it is read by {readers} only")
    return {name: value for name, value in given.items() if name in PARAMETERS[policy]}


def online(policy: str, costs: bool) -> None:
    """An online cache: refuse an offline policy, and costs for a policy that takes none."""
    if policy in OFFLINE:
        raise ArgumentError(
            f"policy={policy!r} needs the future (each access's next use), so it has no online form; "
            "use osbench.cache.replay"
        )
    if costs and policy not in COSTED_POLICIES:
        raise ArgumentError(
            f"costs=True is not accepted for policy={policy!r}: costs are taken by {', '.join(COSTED_POLICIES)} only"
        )


flag = _checks.flag


def sizes(trace: Any, value: Any, n: int) -> Optional[np.ndarray]:
    """Validated per-access sizes as uint64 (``True``: the trace's own), or None for unit sizes."""
    if value is None:
        return None
    if value is True:
        value = trace.sizes if isinstance(trace, Trace) else None
        if value is None:
            raise ArgumentError(
                "sizes=True is not accepted: the trace carries no sizes (pass an array, one size per access)"
            )
    arr = np.asarray(value)
    if arr.ndim != 1 or len(arr) != n:
        raise ArgumentError(
            f"sizes is not accepted: it must be 1-D with one size per access ({n}), got shape {arr.shape}"
        )
    if n and (arr.dtype.kind not in "iu" or arr.min() < 1):
        raise ArgumentError("sizes is not accepted: sizes must be positive integers (bytes)")
    return np.ascontiguousarray(arr, dtype=np.uint64)


def costs(value: Any, policy: str, n: int) -> Optional[np.ndarray]:
    """Validated per-access costs as float64, or None for none (GDSF's fixed scale)."""
    if value is None:
        return None
    if policy not in COSTED_POLICIES:
        raise ArgumentError(
            f"costs is not accepted for policy={policy!r}: costs are taken by {', '.join(COSTED_POLICIES)} only"
        )
    arr = np.asarray(value)
    if arr.ndim != 1 or len(arr) != n:
        raise ArgumentError(
            f"costs is not accepted: it must be 1-D with one cost per access ({n}), got shape {arr.shape}"
        )
    if arr.dtype.kind not in "iuf":
        raise ArgumentTypeError(f"costs is not accepted: costs must be numbers, got dtype {arr.dtype}")
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    bad = ~(np.isfinite(arr) & (arr > 0))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ArgumentError(
            f"costs is not accepted: costs must be finite positive numbers, got {arr[i]!r} at access {i}"
        )
    return arr


def sample_rate(rate: Any, name: str = "sample") -> float:
    """A SHARDS sampling rate in (0, 1]."""
    if isinstance(rate, bool) or not isinstance(rate, numbers.Real):
        raise ArgumentTypeError(f"{name}={rate!r} is not accepted: it must be a sampling rate in (0, 1]")
    if not 0.0 < float(rate) <= 1.0:
        raise ArgumentError(f"{name}={rate!r} is not accepted: it must be a sampling rate in (0, 1]")
    return float(rate)


def reference_keys(trace: Any) -> list[Hashable]:
    """The keys of a trace as a list, for the reference engine (any hashable keys)."""
    keys = as_trace(trace).keys
    return keys.tolist() if isinstance(keys, np.ndarray) else list(keys)


# ------------------------------------------------------------------ one online access


_MAX_SIZE = 2**64 - 1
_INFINITY = float("inf")
_SIZE_RANGE = f"it must be a positive integer up to {_MAX_SIZE}"


def online_access(access: Callable[[Any, Optional[int], Optional[float]], bool], sized: bool, costed: bool) -> Any:
    """``access(key, size=None, cost=None)`` for an online cache made with ``sizes=sized`` and
    ``costs=costed``: each access's size and cost checked (see :func:`online_size` and
    :func:`online_cost`), then handed to the engine's ``access(key, size, cost)``. The common
    call of each kind of cache is checked first, inline: it runs once per access."""

    def checked(key: Any, size: Any = None, cost: Any = None) -> bool:
        return access(online_key(key), online_size(size, sized), online_cost(cost, costed))

    if not sized and not costed:

        def by_key(key: Any, size: Any = None, cost: Any = None) -> bool:
            if size is None and cost is None and type(key) is int:
                return access(key, None, None)
            return checked(key, size, cost)

        return by_key
    if sized and not costed:

        def by_size(key: Any, size: Any = None, cost: Any = None) -> bool:
            if cost is None and type(key) is int and type(size) is int and 0 < size <= _MAX_SIZE:
                return access(key, size, None)
            return checked(key, size, cost)

        return by_size
    return checked


def online_key(key: Any) -> Any:
    """The key of one online access (or of ``key in cache``): a bool is refused, as ``True``
    would be the key 1 (the native engine takes integers in [-2**63, 2**64), the reference any
    hashable key)."""
    if isinstance(key, (bool, np.bool_)):
        raise ArgumentTypeError(f"key={key!r} is not accepted: a bool is no key (True would be the key 1)")
    return key


def online_size(size: Any, sized: bool) -> Optional[int]:
    """The ``size`` of one online access: required in a cache made with sizes, refused otherwise."""
    if size is None:
        if sized:
            raise ArgumentTypeError(
                "size is required: this cache counts bytes (made with sizes=True), so call access(key, size)"
            )
        return None
    if not sized:
        raise ArgumentTypeError(
            f"size={size!r} is not accepted: this cache counts objects; make it with sizes=True to give sizes"
        )
    if isinstance(size, bool) or not isinstance(size, numbers.Integral):
        raise ArgumentTypeError(f"size={size!r} is not accepted: it must be a positive integer")
    if not 0 < int(size) <= _MAX_SIZE:
        raise ArgumentError(f"size={size!r} is not accepted: {_SIZE_RANGE}")
    return int(size)


def online_cost(cost: Any, costed: bool) -> Optional[float]:
    """The ``cost`` of one online access: a finite positive real number, required in a cache
    made with costs, refused otherwise."""
    if cost is None:
        if costed:
            raise ArgumentTypeError(
                "cost is required: this cache was made with costs=True, so call access(key, cost=...)"
            )
        return None
    if not costed:
        raise ArgumentTypeError(
            f"cost={cost!r} is not accepted: this cache takes no costs; make a gdsf cache with costs=True to give costs"
        )
    if isinstance(cost, bool) or not isinstance(cost, numbers.Real):
        raise ArgumentTypeError(f"cost={cost!r} is not accepted: it must be a positive number")
    try:
        value = float(cost)
    except OverflowError:  # an int too large for a float
        value = _INFINITY
    if not 0 < value < _INFINITY:
        raise ArgumentError(f"cost={cost!r} is not accepted: it must be a finite positive number")
    return value
