"""``npy``: a 1-D integer array of keys, or a structured array with a ``key`` (or ``id``) field
and optional ``size`` and ``time`` fields. Pickles are never loaded."""

from __future__ import annotations

import io
from typing import Optional

import numpy as np

from osbench.traces.formats._io import Reader, fail
from osbench.traces.formats.format import Format, Layout, Options
from osbench.traces.trace import Trace

NPY_MAGIC = b"\x93NUMPY"


def _header(path: str, head: bytes) -> tuple[np.dtype, int, int, str, Optional[str], Optional[str]]:
    """(dtype, count, data offset, key field, size field, time field) of a .npy trace."""
    if not head.startswith(NPY_MAGIC):
        raise fail(path, "byte offset 0", "not a .npy file (it does not start with \\x93NUMPY)")
    f = io.BytesIO(head)
    try:
        version = np.lib.format.read_magic(f)
        if version == (1, 0):
            shape, _, dtype = np.lib.format.read_array_header_1_0(f)
        else:
            shape, _, dtype = np.lib.format.read_array_header_2_0(f)
    except (ValueError, SyntaxError, EOFError, TypeError) as exc:
        raise fail(path, "byte offset 8", f"bad .npy header ({exc})") from None
    start = f.tell()
    if dtype.hasobject:
        raise fail(path, f"byte offset {start}", "a .npy of Python objects is not a trace (pickles are never loaded)")
    if len(shape) != 1:
        raise fail(path, f"byte offset {start}", f"wrong layout: a trace is 1-D, this array has shape {shape}")
    if dtype.names is None:
        if dtype.kind not in "iu":
            raise fail(path, f"byte offset {start}", f"wrong layout: keys must be integers, this array holds {dtype}")
        # a plain array: view it as a one-field record
        rec = np.dtype([("key", dtype)])
        return rec, int(shape[0]), start, "key", None, None
    names = {n.lower(): n for n in dtype.names}
    key = names.get("key") or names.get("id")
    if key is None or dtype[key].kind not in "iu":
        raise fail(
            path,
            f"byte offset {start}",
            f"wrong layout: a structured trace needs an integer 'key' or 'id' field, found {list(dtype.names)}",
        )
    return dtype, int(shape[0]), start, key, names.get("size"), names.get("time")


def read(path: str, data: bytes, options: Options) -> Trace:
    dtype, count, start, key, size, time = _header(path, data)
    if len(data) - start < count * dtype.itemsize:
        whole = start + (len(data) - start) // max(dtype.itemsize, 1) * dtype.itemsize
        raise fail(
            path,
            f"byte offset {whole}",
            f"truncated: the header promises {count} items of {dtype.itemsize} bytes, the file ends at {len(data)}",
        )
    arr = np.frombuffer(data, dtype=dtype, count=count, offset=start)
    return Trace(
        arr[key].copy(),
        sizes=None if size is None else arr[size].copy(),
        times=None if time is None else arr[time].copy(),
    )


def layout(path: str, reader: Reader, options: Options) -> Layout:
    head = reader.read(4096)
    dtype, count, start, key, size, time = _header(path, head)
    reader.rewind_to(start, head)
    return Layout(dtype, key, size, time, count=count)


def write(t: Trace, keys: np.ndarray, options: Options) -> bytes:
    buf = io.BytesIO()
    if t.sizes is None and t.times is None:
        np.save(buf, keys, allow_pickle=False)
    else:
        fields = [("key", keys.dtype)]
        fields += [("size", np.asarray(t.sizes).dtype)] if t.sizes is not None else []
        fields += [("time", np.asarray(t.times).dtype)] if t.times is not None else []
        rec = np.zeros(len(keys), dtype=fields)
        rec["key"] = keys
        if t.sizes is not None:
            rec["size"] = t.sizes
        if t.times is not None:
            rec["time"] = t.times
        np.save(buf, rec, allow_pickle=False)
    return buf.getvalue()


FORMAT = Format(
    "npy",
    read,
    write,
    layout,
    detect=lambda name, head: head.startswith(NPY_MAGIC) or name.endswith(".npy"),
    precedence=0,
)
