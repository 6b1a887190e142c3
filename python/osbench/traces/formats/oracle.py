"""``oracleGeneral``: libCacheSim's binary records, 24 packed little-endian bytes
``uint32 time, uint64 id, uint32 size, int64 next_access`` (-1 = never again), read and
written, so traces move between the two tools; ``next_access`` comes back in
``trace.fields["next_access"]``."""

from __future__ import annotations

from typing import Any

import numpy as np

from osbench.traces.formats._io import Reader, check_records
from osbench.traces.formats.format import Format, Layout, Options
from osbench.traces.trace import NEVER, Trace, as_trace

ORACLE_GENERAL = np.dtype([("time", "<u4"), ("id", "<u8"), ("size", "<u4"), ("next_access", "<i8")])
"""libCacheSim's oracleGeneral record: 24 packed little-endian bytes."""


def read(path: str, data: bytes, options: Options) -> Trace:
    check_records(path, data, ORACLE_GENERAL.itemsize, "oracleGeneral")
    rec = np.frombuffer(data, dtype=ORACLE_GENERAL)
    return Trace(
        rec["id"].copy(),
        sizes=rec["size"].copy(),
        times=rec["time"].copy(),
        fields={"next_access": rec["next_access"].copy()},
    )


def layout(path: str, reader: Reader, options: Options) -> Layout:
    return Layout(ORACLE_GENERAL, "id", "size", "time", extra="next_access")


def oracle_general_bytes(trace: Any, sizes: Any = None, times: bool = True) -> bytes:
    """A trace as libCacheSim ``oracleGeneral`` records: times are the trace's (when
    ``times`` and they fit uint32), else access indices; ``next_access`` the index of the
    key's next access (-1 if none), sizes as given, else the trace's own, else 1."""
    t = as_trace(trace)
    keys = t.native_keys()
    n = len(keys)
    records = np.zeros(n, dtype=ORACLE_GENERAL)
    stamps = t.times if times else None
    if (
        stamps is not None
        and len(stamps) == n
        and np.asarray(stamps).dtype.kind in "iu"
        and (n == 0 or (stamps.min() >= 0 and stamps.max() < 2**32))
    ):
        records["time"] = stamps
    else:
        records["time"] = np.arange(n, dtype=np.uint64).astype(np.uint32)
    records["id"] = keys.view(np.uint64)
    sizes = t.sizes if sizes is None else np.asarray(sizes)
    records["size"] = 1 if sizes is None else sizes
    nxt = t.next_use() if n else np.zeros(0, dtype=np.uint64)
    records["next_access"] = np.where(nxt == NEVER, -1, nxt.astype(np.int64))
    return records.tobytes()


def write(t: Trace, keys: np.ndarray, options: Options) -> bytes:
    return oracle_general_bytes(t, t.sizes)


FORMAT = Format(
    "oracleGeneral",
    read,
    write,
    layout,
    detect=lambda name, head: "oraclegeneral" in name,
    precedence=1,
)
