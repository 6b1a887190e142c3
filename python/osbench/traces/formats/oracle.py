"""``oracleGeneral``: libCacheSim's binary records, 24 packed little-endian bytes
``uint32 time, uint64 id, uint32 size, int64 next_access`` (-1 = never again), read and
written, so traces move between the two tools; ``next_access`` comes back in
``trace.fields["next_access"]``."""

from __future__ import annotations

from typing import Any

import numpy as np

from osbench.errors import ArgumentError
from osbench.traces.formats._io import Source, fitting
from osbench.traces.formats.format import Format, Layout, Options
from osbench.traces.trace import NEVER, Trace, as_trace

ORACLE_GENERAL = np.dtype([("time", "<u4"), ("id", "<u8"), ("size", "<u4"), ("next_access", "<i8")])
"""libCacheSim's oracleGeneral record: 24 packed little-endian bytes."""


def layout(path: str, src: Source, options: Options) -> Layout:
    return Layout(ORACLE_GENERAL, "id", "size", "time", extra="next_access")


def oracle_general_bytes(trace: Any, sizes: Any = None, times: bool = True) -> bytes:
    """A trace as libCacheSim ``oracleGeneral`` records: times are the trace's (when
    ``times`` and it has them), else access indices; ``next_access`` the index of the key's
    next access (-1 if none), sizes as given, else the trace's own, else 1. A time or a size
    that uint32 cannot hold, or a size below 1, is refused (never replaced)."""
    t = as_trace(trace)
    keys = t.native_keys()
    n = len(keys)
    records = np.zeros(n, dtype=ORACLE_GENERAL)
    stamps = t.times if times else None
    if stamps is not None:
        try:
            records["time"] = fitting("times", stamps, np.dtype(np.uint32))
        except ArgumentError as exc:
            raise ArgumentError(
                f"{exc}: oracleGeneral holds integer times from 0 to 2**32-1 (write the trace without "
                "times, Trace(keys, sizes=sizes), to store access indices instead)"
            ) from None
    else:
        if n > 2**32:
            raise ArgumentError(
                f"trace is not accepted: {n} accesses, but oracleGeneral's uint32 time holds access indices below 2**32"
            )
        records["time"] = np.arange(n, dtype=np.uint64).astype(np.uint32)
    records["id"] = keys.view(np.uint64)
    sizes = t.sizes if sizes is None else np.asarray(sizes)
    if sizes is not None:
        if np.shape(sizes) != (n,):
            raise ArgumentError(
                f"sizes is not accepted: it must be 1-D with one size per access ({n}), got shape {np.shape(sizes)}"
            )
        sizes = fitting("sizes", sizes, np.dtype(np.uint32))
        if n and int(sizes.min()) < 1:
            raise ArgumentError(f"sizes is not accepted: {int(sizes.min())} is not a size: sizes are 1..{2**32 - 1}")
    records["size"] = 1 if sizes is None else sizes
    nxt = t.next_use() if n else np.zeros(0, dtype=np.uint64)
    records["next_access"] = np.where(nxt == NEVER, -1, nxt.astype(np.int64))
    return records.tobytes()


def write(t: Trace, keys: np.ndarray, options: Options) -> bytes:
    return oracle_general_bytes(t, t.sizes)


FORMAT = Format(
    "oracleGeneral",
    write=write,
    layout=layout,
    detect=lambda name, head: "oraclegeneral" in name,
    precedence=1,
)
