"""Traces: the :class:`Trace` wrapper and the generators the lecture uses.

A trace is a sequence of keys. Every cache function takes a :class:`Trace` or any 1-D
array-like of integers (the full int64 and uint64 range; the reference engine also takes any
hashable keys). A :class:`Trace` maps its keys to dense ids and computes each access's next use
once, and keeps them, so one trace replayed through many policies and capacities pays for that
once.

Every generator takes a ``seed`` and draws from ``numpy.random.default_rng(seed)``: the same
seed gives the same trace, whichever engine replays it.
"""

from __future__ import annotations

import os
from collections.abc import Hashable, Sequence
from typing import Any, Optional

import numpy as np

from osbench import _checks, _native, datasets
from osbench.errors import ArgumentError

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


# ---------------------------------------------------------------------------- generators


def zipf(n_keys: int, alpha: float, length: int, seed: int = 0) -> Trace:
    """Independent draws where the key of rank r (1-based) has probability proportional to
    r**-alpha. Keys are ``rank - 1``, so key 0 is the most popular."""
    n_keys = _checks.positive_int("n_keys", n_keys)
    length = _checks.non_negative_int("length", length)
    if not np.isfinite(alpha) or alpha < 0:
        raise ArgumentError(f"alpha={alpha!r} is not accepted: it must be a finite number >= 0")
    rng = np.random.default_rng(seed)
    weights = np.arange(1, n_keys + 1, dtype=np.float64) ** -float(alpha)
    cdf = np.cumsum(weights)
    cdf /= cdf[-1]
    keys = np.searchsorted(cdf, rng.random(length), side="right")
    return Trace(np.minimum(keys, n_keys - 1).astype(np.int64), name=f"zipf({n_keys}, {alpha})")


def loop(n_keys: int, length: int) -> Trace:
    """0, 1, ..., n_keys-1, 0, 1, ...: a cyclic scan. Slightly larger than the cache, every
    online policy misses every time."""
    n_keys = _checks.positive_int("n_keys", n_keys)
    length = _checks.non_negative_int("length", length)
    return Trace(np.arange(length, dtype=np.int64) % n_keys, name=f"loop({n_keys})")


def scan(n_hot: int, length: int, scan_length: int, period: int, seed: int = 0) -> Trace:
    """A hot set of ``n_hot`` keys drawn uniformly, polluted every ``period`` accesses by a
    scan of ``scan_length`` keys that are never used again (a batch of one-off requests)."""
    n_hot = _checks.positive_int("n_hot", n_hot)
    length = _checks.non_negative_int("length", length)
    scan_length = _checks.non_negative_int("scan_length", scan_length)
    period = _checks.positive_int("period", period)
    rng = np.random.default_rng(seed)
    out = np.empty(length, dtype=np.int64)
    next_cold = n_hot  # one-off keys count up from here
    i = 0
    while i < length:
        hot = min(period, length - i)
        out[i : i + hot] = rng.integers(0, n_hot, size=hot)
        i += hot
        cold = min(scan_length, length - i)
        out[i : i + cold] = np.arange(next_cold, next_cold + cold)
        next_cold += cold
        i += cold
    return Trace(out, name=f"scan(hot={n_hot}, scan={scan_length}/{period})")


def drift(n_keys: int, length: int, n_hot: int, phases: int, p_hot: float = 0.9, seed: int = 0) -> Trace:
    """The hot set moves: the trace has ``phases`` equal phases; in each, a fraction ``p_hot``
    of accesses go uniformly to that phase's own ``n_hot`` keys, the rest uniformly to all
    ``n_keys`` keys. Counts learned in one phase are stale in the next."""
    n_keys = _checks.positive_int("n_keys", n_keys)
    length = _checks.non_negative_int("length", length)
    n_hot = _checks.positive_int("n_hot", n_hot)
    phases = _checks.positive_int("phases", phases)
    if not 0.0 <= p_hot <= 1.0:
        raise ArgumentError(f"p_hot={p_hot!r} is not accepted: it must be a probability in [0, 1]")
    if n_hot * phases > n_keys:
        raise ArgumentError(f"n_hot*phases={n_hot * phases} is not accepted: it must be at most n_keys={n_keys}")
    rng = np.random.default_rng(seed)
    phase = np.minimum(np.arange(length) * phases // max(length, 1), phases - 1)
    hot_keys = phase * n_hot + rng.integers(0, n_hot, size=length)
    any_keys = rng.integers(0, n_keys, size=length)
    keys = np.where(rng.random(length) < p_hot, hot_keys, any_keys)
    return Trace(keys.astype(np.int64), name=f"drift(hot={n_hot} x {phases} phases)")


def belady_sequence() -> Trace:
    """1, 2, 3, 4, 1, 2, 5, 1, 2, 3, 4, 5: FIFO misses more with 4 frames than with 3."""
    return Trace(np.array([1, 2, 3, 4, 1, 2, 5, 1, 2, 3, 4, 5], dtype=np.int64), name="belady")


# ---------------------------------------------------------------------------- readers

ORACLE_GENERAL = np.dtype([("time", "<u4"), ("id", "<u8"), ("size", "<u4"), ("next_access", "<i8")])
"""libCacheSim's oracleGeneral record: 24 packed little-endian bytes."""


def read_oracle_general(path: Any) -> Trace:
    """Read a libCacheSim ``oracleGeneral`` binary trace (uncompressed).

    Keys are the object ids, ``sizes`` the object sizes and ``times`` the timestamps. A file
    whose length is not a whole number of 24-byte records is refused, naming the byte offset
    where the partial record starts."""
    path = datasets.resolve(path)
    n_bytes = os.path.getsize(path)
    if n_bytes % ORACLE_GENERAL.itemsize:
        whole = n_bytes - n_bytes % ORACLE_GENERAL.itemsize
        raise ArgumentError(
            f"{path}: not an oracleGeneral trace: {n_bytes} bytes is not a multiple of 24; "
            f"a truncated record starts at byte offset {whole}"
        )
    records = np.fromfile(path, dtype=ORACLE_GENERAL)
    return Trace(
        records["id"].copy(), sizes=records["size"].copy(), times=records["time"].copy(), name=os.path.basename(path)
    )


def write_oracle_general(trace: Any, path: Any, sizes: Any = None) -> None:
    """Write a trace as libCacheSim ``oracleGeneral`` records (atomically), so the same
    accesses can be replayed by both tools. Times are access indices; ``next_access`` is the
    index of the key's next access, -1 when there is none. Sizes default to the trace's own,
    else 1 (libCacheSim counts bytes, so unit sizes make its capacity count objects)."""
    from osbench import _files

    t = as_trace(trace)
    keys = t.native_keys()
    n = len(keys)
    records = np.zeros(n, dtype=ORACLE_GENERAL)
    records["time"] = np.arange(n, dtype=np.uint64).astype(np.uint32)
    records["id"] = keys.view(np.uint64)
    sizes = t.sizes if sizes is None else np.asarray(sizes)
    records["size"] = 1 if sizes is None else sizes
    nxt = t.next_use()
    records["next_access"] = np.where(nxt == NEVER, -1, nxt.astype(np.int64))
    _files.write_bytes(path, records.tobytes())


# Readers and writers of trace files (npy, text/CSV, oracleGeneral, struct binary, zstd,
# Mooncake and Azure request logs). Imported last: they build on Trace above.
from osbench.traces.formats import FORMATS, TraceFileError, read, write  # noqa: E402

__all__ = [
    "FORMATS",
    "NEVER",
    "ORACLE_GENERAL",
    "Trace",
    "TraceFileError",
    "as_trace",
    "belady_sequence",
    "drift",
    "loop",
    "next_use_reference",
    "read",
    "read_oracle_general",
    "scan",
    "write",
    "write_oracle_general",
    "zipf",
]
