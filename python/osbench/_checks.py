"""Argument checks shared by every topic: one clear message per mistake.

Each error names the argument, the value given, and what is accepted.
"""

from __future__ import annotations

import math
import numbers
import os
from collections.abc import Iterable
from typing import Any, Callable, Optional

import numpy as np

from osbench._engines import ENGINES
from osbench._format import size
from osbench.errors import ArgumentError, ArgumentTypeError


def engine(value: Any) -> str:
    """Validate an ``engine=`` argument."""
    if value not in ENGINES:
        raise ArgumentError(f"engine={value!r} is not accepted: use one of {', '.join(ENGINES)}")
    return str(value)


def choice(name: str, value: Any, accepted: Iterable[str]) -> str:
    """Validate a name chosen from a registry (a policy, a distribution...)."""
    accepted = tuple(accepted)
    if not isinstance(value, str) or value not in accepted:
        raise ArgumentError(f"{name}={value!r} is not accepted: use one of {', '.join(accepted)}")
    return value


def _number(name: str, value: Any, accepts: Callable[[Any], bool], what: str, kind: str = "", *, integer: bool) -> Any:
    """A number (never a bool) that ``accepts`` holds for: with ``integer`` an int (a refusal shows
    the value as given), else a float (a refusal shows that float). Refusals say it must be
    ``what``; a value of another type is told ``kind`` where that is worded apart (else ``what``)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral if integer else numbers.Real):
        raise ArgumentTypeError(f"{name}={value!r} is not accepted: it must be {kind or what}")
    convert: Callable[[Any], Any] = int if integer else float
    x = convert(value)
    if not accepts(x):
        shown = value if integer else x
        raise ArgumentError(f"{name}={shown!r} is not accepted: it must be {what}")
    return x


def positive_int(name: str, value: Any, maximum: int = 2**64 - 1) -> int:
    """A positive integer (bool is not an integer here)."""
    up_to = f"a positive integer up to {maximum}"
    return _number(name, value, lambda v: 0 < v <= maximum, up_to, "a positive integer", integer=True)


def non_negative_int(name: str, value: Any, maximum: Optional[int] = None) -> int:
    """A non-negative integer (bool is not an integer here), at most ``maximum`` when given."""
    if maximum is None:
        return _number(name, value, lambda v: v >= 0, "a non-negative integer", integer=True)
    up_to = f"a non-negative integer up to {maximum}"
    return _number(name, value, lambda v: 0 <= v <= maximum, up_to, "a non-negative integer", integer=True)


def one_d(name: str, value: Any) -> np.ndarray:
    """``value`` as a 1-D numpy array (of any dtype, not copied when it is one)."""
    try:
        arr = np.asarray(value)
    except (ValueError, TypeError) as exc:  # ragged nested lists and the like
        raise ArgumentTypeError(f"{name} is not accepted: {exc}") from None
    if arr.ndim != 1:
        raise ArgumentError(f"{name} is not accepted: it must be 1-D, got an array of shape {arr.shape}")
    return arr


def int_array(name: str, value: Any, what: str = "integer keys") -> np.ndarray:
    """A 1-D integer array for the native engine: int64 or uint64, C-contiguous.

    Smaller integer types are widened; floats, strings, objects and 2-D arrays are refused.
    """
    arr = one_d(name, value)
    if arr.size == 0:
        return np.zeros(0, dtype=np.int64)
    if arr.dtype.kind in "fO":  # numpy's guess for a list of ints beyond int64
        ints = integers_of(name, value)
        arr = arr if ints is None else ints
    if arr.dtype.kind not in "iu":
        raise ArgumentTypeError(
            f"{name} is not accepted: the native engine takes {what} (int64 or uint64), got dtype {arr.dtype}"
        )
    if arr.dtype != np.uint64:
        arr = arr.astype(np.int64, copy=False)
    return np.require(arr, requirements=["C", "A"])  # a contiguous view may still be misaligned


def integers_of(name: str, items: Any) -> Optional[np.ndarray]:
    """A list or tuple of Python integers as int64, or as uint64 when they need it (numpy alone
    makes floats of ``[2**64 - 1, 5]``, which would lose the keys); None when ``items`` is no such
    sequence (the caller decides what else it may be). Integers that no 64-bit type holds, or
    negative ones beside ones of 2**63 or more, are refused."""
    if not isinstance(items, (list, tuple)) or not all(
        isinstance(k, numbers.Integral) and not isinstance(k, (bool, np.bool_)) for k in items
    ):
        return None
    values = [int(k) for k in items]
    lo, hi = (min(values), max(values)) if values else (0, 0)
    if -(2**63) <= lo and hi < 2**63:
        return np.array(values, dtype=np.int64)
    if 0 <= lo and hi < 2**64:
        return np.array(values, dtype=np.uint64)
    if lo < -(2**63) or hi >= 2**64:
        bad = lo if lo < -(2**63) else hi
        why = "it is outside the 64-bit range"
    else:
        bad, why = lo, f"a negative key beside {hi}: one 64-bit type holds [-2**63, 2**63) or [0, 2**64)"
    raise ArgumentError(f"{name} is not accepted: {bad} at index {values.index(bad)}: {why}")


def power_of_two(name: str, value: Any, why: str = "") -> int:
    """A positive power of two (page sizes where the offset is the low bits of an address)."""
    value = positive_int(name, value, maximum=2**62)
    if value & (value - 1):
        raise ArgumentError(f"{name}={value!r} is not accepted: it must be a power of two{why}")
    return value


def positive_float(name: str, value: Any) -> float:
    """A finite positive number."""
    return _number(
        name, value, lambda x: 0 < x < float("inf"), "a finite positive number", "a positive number", integer=False
    )


def probability(name: str, value: Any) -> float:
    """A number in [0, 1]."""
    return _number(name, value, lambda x: 0.0 <= x <= 1.0, "a number in [0, 1]", integer=False)


def fraction(name: str, value: Any) -> float:
    """A number in [0, 1): a share that cannot be the whole."""
    return _number(name, value, lambda x: 0.0 <= x < 1.0, "a number in [0, 1)", integer=False)


def flag(name: str, value: Any) -> bool:
    """True or False (not 1, not "yes")."""
    if not isinstance(value, (bool, np.bool_)):
        raise ArgumentTypeError(f"{name}={value!r} is not accepted: it must be True or False")
    return bool(value)


def seed(value: Any) -> Optional[int]:
    """A random seed: None (fresh entropy) or a non-negative integer, as
    ``numpy.random.default_rng`` takes it."""
    if value is None:
        return None
    return _number("seed", value, lambda v: v >= 0, "a non-negative integer or None", integer=True)


def real(name: str, value: Any, *, minimum: float = -math.inf, above: bool = False) -> float:
    """A finite real number at least ``minimum`` (``above``: greater than it)."""
    what = f"a finite number {'>' if above else '>='} {minimum:g}" if minimum > -math.inf else "a finite number"
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ArgumentTypeError(f"{name}={value!r} is not accepted: it must be {what}")
    x = float(value)
    if not math.isfinite(x) or x < minimum or (above and x == minimum):
        raise ArgumentError(f"{name}={value!r} is not accepted: it must be {what}")
    return x


def int_list(name: str, value: Any) -> list[int]:
    """A non-empty sequence of integers (each one checked by the caller)."""
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise ArgumentTypeError(
            f"{name}={value!r} is not accepted: it must be a sequence of integers, e.g. [{value!r}]"
            if isinstance(value, numbers.Integral)
            else f"{name}={value!r} is not accepted: it must be a sequence of integers"
        )
    items = list(np.asarray(value).ravel().tolist()) if isinstance(value, np.ndarray) else list(value)
    if not items:
        raise ArgumentError(f"{name}=[] is not accepted: give at least one")
    return items


def available_memory() -> Optional[int]:
    """Bytes of memory the machine can give without swapping (``MemAvailable`` on Linux), or
    None where it cannot be told."""
    try:
        with open("/proc/meminfo", "rb") as f:
            for line in f:
                if line.startswith(b"MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (OSError, ValueError, AttributeError):
        return None


def affordable(name: str, value: Any, nbytes: float, what: str) -> None:
    """Refuse an argument whose result would not fit in the memory free: ``nbytes`` (what
    ``name=value`` needs) against :func:`available_memory`, so that a huge request fails at
    once, with a clear message, instead of exhausting the machine."""
    free = available_memory()
    if free is not None and nbytes > free:
        raise ArgumentError(
            f"{name}={value!r} is not accepted: {what} would need about {size(nbytes)} of memory, "
            f"more than the {size(free)} free"
        )
