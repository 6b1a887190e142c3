"""The :class:`Trace` wrapper: keys with optional sizes and times, their dense ids and next uses
computed once and kept."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any, Optional

import numpy as np

from osbench import _checks, _native

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
        try:
            arr: Optional[np.ndarray] = np.asarray(keys)
        except (ValueError, TypeError):  # ragged nested lists: left for the engine to refuse
            arr = None
        if arr is not None and arr.ndim == 1 and (arr.dtype.kind in "iu" or arr.size == 0):
            self.keys: Any = _checks.int_array("trace", arr)
        else:
            self.keys = keys if isinstance(keys, (list, tuple, np.ndarray)) else list(keys)
        self.sizes = None if sizes is None else np.asarray(sizes)
        self.times = None if times is None else np.asarray(times)
        self.name = name
        # Further per-access columns a format carries (request logs: input/output lengths...).
        self.fields: dict[str, np.ndarray] = {k: np.asarray(v) for k, v in (fields or {}).items()}
        self._dense: Optional[tuple[np.ndarray, int]] = None
        self._next_use: Optional[np.ndarray] = None

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

    @property
    def n_distinct(self) -> int:
        return self.dense()[1]

    def next_use(self) -> np.ndarray:
        """For each access, the index of the next access to the same key (NEVER if none)."""
        if self._next_use is None:
            ids, n = self.dense()
            self._next_use = _native.next_use(ids, n)
        return self._next_use


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
