"""``npy``: a 1-D integer array of keys, or a structured array with a ``key`` (or ``id``) field
and optional ``size`` and ``time`` fields. The header is read by numpy's own functions (its
size limit included); pickles are never loaded. The records are read by the registry, so a
file whose data disagrees with its header (fewer items, more, another item size) is refused
whole or streamed alike."""

from __future__ import annotations

import io
import tokenize

import numpy as np

from osbench.traces.formats._io import Source, fail
from osbench.traces.formats.format import Format, Layout, Options
from osbench.traces.trace import Trace

NPY_MAGIC = b"\x93NUMPY"


def layout(path: str, src: Source, options: Options) -> Layout:
    """The records a .npy header promises, read from ``src`` (left at the first record)."""
    if not src.peek(len(NPY_MAGIC)) == NPY_MAGIC:
        raise fail(path, "byte offset 0", "not a .npy file (it does not start with \\x93NUMPY)")
    try:
        version = np.lib.format.read_magic(src)
        if version == (1, 0):
            shape, _, dtype = np.lib.format.read_array_header_1_0(src)
        elif version in ((2, 0), (3, 0)):
            shape, _, dtype = np.lib.format.read_array_header_2_0(src)
        else:
            raise ValueError(f"version {version[0]}.{version[1]} is not one numpy writes")
    # numpy parses the header with Python's tokenizer and literal_eval: a damaged one raises any of these
    except (
        ValueError,
        SyntaxError,
        EOFError,
        TypeError,
        OverflowError,
        MemoryError,
        RecursionError,
        KeyError,
        tokenize.TokenError,
    ) as exc:
        raise fail(path, "byte offset 8", f"bad .npy header ({exc})") from None
    start = src.offset
    if dtype.hasobject:
        raise fail(path, f"byte offset {start}", "a .npy of Python objects is not a trace (pickles are never loaded)")
    if len(shape) != 1:
        raise fail(path, f"byte offset {start}", f"wrong layout: a trace is 1-D, this array has shape {shape}")
    if shape[0] < 0:
        raise fail(path, "byte offset 8", f"bad .npy header (shape {shape} has a negative length)")
    if dtype.names is None:
        if dtype.kind not in "iu":
            raise fail(path, f"byte offset {start}", f"wrong layout: keys must be integers, this array holds {dtype}")
        # a plain array: view it as a one-field record
        return Layout(np.dtype([("key", dtype)]), "key", count=int(shape[0]))
    names = {n.lower(): n for n in dtype.names}
    key = names.get("key") or names.get("id")
    if key is None or dtype[key].kind not in "iu":
        raise fail(
            path,
            f"byte offset {start}",
            f"wrong layout: a structured trace needs an integer 'key' or 'id' field, found {list(dtype.names)}",
        )
    if dtype.itemsize == 0:
        raise fail(path, f"byte offset {start}", "wrong layout: records of 0 bytes")
    return Layout(dtype, key, names.get("size"), names.get("time"), count=int(shape[0]))


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
    write=write,
    layout=layout,
    detect=lambda name, head: head.startswith(NPY_MAGIC) or name.endswith(".npy"),
    precedence=0,
)
