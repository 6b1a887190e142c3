"""Argument checks shared by every topic: one clear message per mistake.

Each error names the argument, the value given, and what is accepted.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable
from typing import Any

import numpy as np

from osbench.errors import ArgumentError, ArgumentTypeError

ENGINES = ("native", "reference")


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


def positive_int(name: str, value: Any, maximum: int = 2**64 - 1) -> int:
    """A positive integer (bool is not an integer here)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ArgumentTypeError(f"{name}={value!r} is not accepted: it must be a positive integer")
    if not 0 < int(value) <= maximum:
        raise ArgumentError(f"{name}={value!r} is not accepted: it must be a positive integer up to {maximum}")
    return int(value)


def non_negative_int(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ArgumentTypeError(f"{name}={value!r} is not accepted: it must be a non-negative integer")
    if int(value) < 0:
        raise ArgumentError(f"{name}={value!r} is not accepted: it must be a non-negative integer")
    return int(value)


def int_array(name: str, value: Any) -> np.ndarray:
    """A 1-D integer array for the native engine: int64 or uint64, C-contiguous.

    Smaller integer types are widened; floats, strings, objects and 2-D arrays are refused.
    """
    try:
        arr = np.asarray(value)
    except (ValueError, TypeError) as exc:  # ragged nested lists and the like
        raise ArgumentTypeError(f"{name} is not accepted: {exc}") from None
    if arr.ndim != 1:
        raise ArgumentError(f"{name} is not accepted: it must be 1-D, got an array of shape {arr.shape}")
    if arr.size == 0:
        return np.zeros(0, dtype=np.int64)
    if arr.dtype.kind not in "iu":
        raise ArgumentTypeError(
            f"{name} is not accepted: the native engine takes integer keys (int64 or uint64), got dtype {arr.dtype}"
        )
    if arr.dtype != np.uint64:
        arr = arr.astype(np.int64, copy=False)
    return np.ascontiguousarray(arr)


def power_of_two(name: str, value: Any, why: str = "") -> int:
    """A positive power of two (page sizes where the offset is the low bits of an address)."""
    value = positive_int(name, value, maximum=2**62)
    if value & (value - 1):
        raise ArgumentError(f"{name}={value!r} is not accepted: it must be a power of two{why}")
    return value


def positive_float(name: str, value: Any) -> float:
    """A finite positive number."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ArgumentTypeError(f"{name}={value!r} is not accepted: it must be a positive number")
    value = float(value)
    if not (value > 0 and value < float("inf")):
        raise ArgumentError(f"{name}={value!r} is not accepted: it must be a finite positive number")
    return value


def probability(name: str, value: Any) -> float:
    """A number in [0, 1]."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ArgumentTypeError(f"{name}={value!r} is not accepted: it must be a number in [0, 1]")
    value = float(value)
    if not 0.0 <= value <= 1.0:
        raise ArgumentError(f"{name}={value!r} is not accepted: it must be a number in [0, 1]")
    return value
