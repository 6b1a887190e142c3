"""The :class:`Trace` wrapper: keys with optional sizes and times, their dense ids and next uses
computed once and kept."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any, Optional

import numpy as np

from osbench import _checks, _native
from osbench.errors import ArgumentError, ArgumentTypeError

NEVER = np.iinfo(np.uint64).max
"""Next-use value of an access whose key never comes back."""


class Trace:
    """Keys of a trace, with optional per-access sizes and times (and ``fields``, further
    per-access columns by name).

    ``keys`` is kept as given when it is not an integer array (the reference engine accepts any
    hashable keys); integer keys become a contiguous int64 or uint64 array.
    """

    def __init__(
        self, keys: Any, sizes: Any = None, times: Any = None, name: str = "", fields: Optional[dict[str, Any]] = None
    ) -> None:
        keys = _sequence(keys)
        try:
            arr: Optional[np.ndarray] = np.asarray(keys)
        except (ValueError, TypeError):  # ragged nested lists: left for the engine to refuse
            arr = None
        if arr is not None and arr.ndim == 1 and arr.dtype.kind in "fO":  # numpy's guess for ints beyond int64
            try:
                ints = _checks.integers_of("trace", keys)
            except ArgumentError:  # beyond 64 bits: kept as given, for the reference engine
                ints = None
            arr = arr if ints is None else ints
        if arr is not None and arr.ndim == 1 and (arr.dtype.kind in "iu" or arr.size == 0):
            self.keys: Any = _checks.int_array("trace", arr)
        elif (isinstance(keys, np.ndarray) and keys.ndim != 1) or (arr is not None and arr.ndim == 0):
            shape = keys.shape if isinstance(keys, np.ndarray) else ()
            raise ArgumentError(f"trace is not accepted: it must be 1-D, got an array of shape {shape}")
        else:
            self.keys = keys if isinstance(keys, (list, tuple, np.ndarray)) else list(keys)
        self.sizes = None if sizes is None else np.asarray(sizes)
        self.times = None if times is None else np.asarray(times)
        self.name = name
        # Further per-access columns a format carries (request logs: input/output lengths...).
        self.fields: dict[str, np.ndarray] = {k: np.asarray(v) for k, v in (fields or {}).items()}
        self._dense: Optional[tuple[np.ndarray, int]] = None
        self._next_use: Optional[np.ndarray] = None
        self._id_keys: Optional[np.ndarray] = None

    def __len__(self) -> int:
        return len(self.keys)

    def __repr__(self) -> str:
        label = f" {self.name!r}" if self.name else ""
        return f"<Trace{label} of {len(self)} accesses>"

    def native_keys(self) -> np.ndarray:
        """The keys as an int64/uint64 array, or a clear error if they are not integers."""
        return _checks.int_array("trace", self.keys)

    def dense(self) -> tuple[np.ndarray, int]:
        """(ids, n_ids): each key's dense id (uint32, in order of first appearance) and the
        number of distinct keys. Computed natively once, then kept."""
        if self._dense is None:
            ids, n = _native.dense_ids(self.native_keys())
            self._dense = (ids, int(n))
        return self._dense

    def id_keys(self) -> np.ndarray:
        """The key of each dense id (uint64, id order; a negative key as its two's complement,
        as libCacheSim's 64-bit object ids): what policies that hash keys hash. Computed once,
        then kept."""
        if self._id_keys is None:
            ids, n = self.dense()
            keys = self.native_keys()
            out = np.empty(n, dtype=np.uint64)
            out[ids] = keys.view(np.uint64) if keys.dtype == np.int64 else keys
            self._id_keys = out
        return self._id_keys

    @property
    def n_distinct(self) -> int:
        return self.dense()[1]

    def next_use(self) -> np.ndarray:
        """For each access, the index of the next access to the same key (NEVER if none)."""
        if self._next_use is None:
            ids, n = self.dense()
            self._next_use = _native.next_use(ids, n)
        return self._next_use


def _sequence(keys: Any) -> Any:
    """The keys of a trace argument, if it is a 1-D sequence: an array (numpy's, or anything
    numpy converts), a list, a tuple, a range... A set has no order, ``bytes`` and ``str`` are
    text, and a masked array's masked entries are no keys: each is refused, never read as
    something else."""
    if isinstance(keys, np.ma.MaskedArray):
        if np.ma.is_masked(keys):
            raise ArgumentError(
                f"trace is not accepted: a masked array with {int(np.ma.count_masked(keys))} masked entries "
                "(keep the others with trace.compressed(), or fill them with trace.filled(key))"
            )
        return np.asarray(keys.data)
    if isinstance(keys, np.ndarray) or (
        isinstance(keys, Sequence) and not isinstance(keys, (str, bytes, bytearray, memoryview))
    ):
        return keys
    if hasattr(keys, "__array__") and not isinstance(keys, (str, bytes)):
        return np.asarray(keys)
    kind = type(keys).__name__
    why = {"set": "a set has no order", "frozenset": "a set has no order", "dict": "a dict is no sequence"}.get(
        kind, f"a {kind} is no sequence of keys"
    )
    raise ArgumentTypeError(
        f"trace=<a {kind}> is not accepted: {why}; a trace is a 1-D sequence of keys (a list, a tuple, a "
        "numpy array or an osbench.traces.Trace)"
    )


def as_trace(trace: Any) -> Trace:
    """A :class:`Trace` from a Trace or any 1-D sequence of keys."""
    return trace if isinstance(trace, Trace) else Trace(trace)


def next_use_reference(keys: Sequence[Hashable]) -> list[int]:
    """Plain-Python next-use times (the reference engine's own; ``NEVER`` if none)."""
    out = [int(NEVER)] * len(keys)
    seen: dict[Hashable, int] = {}
    for i in range(len(keys) - 1, -1, -1):
        out[i] = seen.get(keys[i], int(NEVER))
        seen[keys[i]] = i
    return out


__all__ = ["NEVER", "Trace", "as_trace", "next_use_reference"]
