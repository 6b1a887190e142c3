"""The argument checks of the cache functions, used by both engines: one place that refuses a
bad argument, with the project's message (``name=value is not accepted: what is accepted``),
before either engine runs. Every policy fact comes from the table (:mod:`.policies`)."""

from __future__ import annotations

import numbers
from collections.abc import Hashable, Iterable
from typing import Any, Callable, Optional

import numpy as np

from osbench import _checks, _native
from osbench.cache.policies import COSTED_POLICIES, OFFLINE, PARAMETER_NAMES, PARAMETERS, POLICIES, TABLE
from osbench.errors import ArgumentError, ArgumentTypeError
from osbench.traces import Trace, as_trace


def policy(value: Any) -> str:
    """A policy name from the table."""
    return _checks.choice("policy", value, POLICIES)


def capacity(name: str, policy: str, value: Any) -> int:
    """A positive integer, at least the policy's minimum capacity at its default parameters
    (:func:`parameters` checks it under others)."""
    value = _checks.positive_int(name, value)
    _native.cache_parameters(policy, name, [value])
    return value


_KINDS: dict[str, Callable[[Any], bool]] = {
    "flag": lambda v: isinstance(v, bool),
    "int": lambda v: isinstance(v, numbers.Integral) and not isinstance(v, bool),
    "real": lambda v: isinstance(v, numbers.Real) and not isinstance(v, bool),
}


def split(options: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Keyword arguments split into policy parameters (the names in the table) and the rest."""
    params = {k: v for k, v in options.items() if k in PARAMETER_NAMES}
    return params, {k: v for k, v in options.items() if k not in PARAMETER_NAMES}


def unknown(options: dict[str, Any]) -> None:
    """Refuse keyword arguments that are no policy's parameter."""
    if options:
        name = sorted(options)[0]
        raise ArgumentTypeError(
            f"{name}={options[name]!r} is not accepted: it is not a parameter of any policy "
            f"(the parameters: {', '.join(sorted(PARAMETER_NAMES))})"
        )


def parameters(
    policy: str, given: dict[str, Any], capacities: Iterable[int] = (), name: str = "capacity"
) -> dict[str, Any]:
    """The policy's parameters resolved by its row of the table: those given (each one it
    reads, of the right kind, in its range), the others at their defaults; every capacity in
    ``capacities`` (argument ``name``) checked against the minimum they leave. A parameter the
    policy does not read is refused unless given at the default of the policies that read it."""
    params, other = split(given)
    unknown(other)
    kept = {}
    for key, value in params.items():
        if key not in PARAMETERS[policy]:
            readers = [p for p, read in PARAMETERS.items() if key in read]
            if type(value) is bool and all(value is TABLE[p].params[key].default for p in readers):
                continue  # a flag left at its default: what a caller passing it to every policy gives
            raise ArgumentError(
                f"{key}={value!r} is not accepted for policy={policy!r}: it is read by {', '.join(readers)} only"
            )
        declared = TABLE[policy].params[key]
        if not _KINDS[declared.kind](value):
            raise ArgumentTypeError(f"{key}={value!r} is not accepted: {declared.accepts}")
        kept[key] = bool(value) if declared.kind == "flag" else int(value) if declared.kind == "int" else value
    return dict(_native.cache_parameters(policy, name, list(capacities), kept))


def min_capacity(policy: str, parameters: dict[str, Any]) -> int:
    """The smallest capacity the policy takes under its (checked) ``parameters``."""
    return int(_native.cache_min_capacity(policy, parameters))


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


_OPTIONAL = {
    "size": (
        "this cache counts bytes (made with sizes=True), so call access(key, size)",
        "this cache counts objects; make it with sizes=True to give sizes",
    ),
    "cost": (
        "this cache was made with costs=True, so call access(key, cost=...)",
        "this cache takes no costs; make a gdsf cache with costs=True to give costs",
    ),
}
"""An online access's optional arguments: why each is required, and why refused."""


def _given(name: str, value: Any, taken: bool) -> bool:
    """Whether one online access gives its optional ``name`` (:data:`_OPTIONAL`): it must when
    the cache was made to take it (``taken``), and must not otherwise."""
    required, refused = _OPTIONAL[name]
    if value is None:
        if taken:
            raise ArgumentTypeError(f"{name} is required: {required}")
        return False
    if not taken:
        raise ArgumentTypeError(f"{name}={value!r} is not accepted: {refused}")
    return True


def online_size(size: Any, sized: bool) -> Optional[int]:
    """The ``size`` of one online access: required in a cache made with sizes, refused otherwise."""
    if not _given("size", size, sized):
        return None
    if isinstance(size, bool) or not isinstance(size, numbers.Integral):
        raise ArgumentTypeError(f"size={size!r} is not accepted: it must be a positive integer")
    if not 0 < int(size) <= _MAX_SIZE:
        raise ArgumentError(f"size={size!r} is not accepted: {_SIZE_RANGE}")
    return int(size)


def online_cost(cost: Any, costed: bool) -> Optional[float]:
    """The ``cost`` of one online access: a finite positive real number, required in a cache
    made with costs, refused otherwise."""
    if not _given("cost", cost, costed):
        return None
    if isinstance(cost, bool) or not isinstance(cost, numbers.Real):
        raise ArgumentTypeError(f"cost={cost!r} is not accepted: it must be a positive number")
    try:
        value = float(cost)
    except OverflowError:  # an int too large for a float
        value = _INFINITY
    if not 0 < value < _INFINITY:
        raise ArgumentError(f"cost={cost!r} is not accepted: it must be a finite positive number")
    return value
