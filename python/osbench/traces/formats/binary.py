"""``binary``: fixed-size records described by a :mod:`struct` format string with an explicit
byte order (``struct="<IQIq"``), choosing the key, size and time fields by index."""

from __future__ import annotations

import re
from typing import Optional

import numpy as np

from osbench import _checks
from osbench.errors import ArgumentError
from osbench.traces.formats._io import Source, fitting
from osbench.traces.formats.format import Format, Layout, Options
from osbench.traces.trace import Trace

_STRUCT_CODES = {
    "b": "i1", "B": "u1", "?": "b1", "h": "i2", "H": "u2", "i": "i4", "I": "u4", "l": "i4", "L": "u4",
    "q": "i8", "Q": "u8", "e": "f2", "f": "f4", "d": "f8", "c": "S1",
}  # fmt: skip


MAX_FIELDS = 1024
"""The most fields a struct format may have (padding bytes are no fields)."""


def struct_dtype(fmt: str) -> np.dtype:
    """A numpy record dtype equal to a :mod:`struct` format with standard sizes (the byte
    order character is required: ``<``, ``>``, ``=`` or ``!``). Padding bytes (``x``) take
    room but no field; the fields are named f0, f1, ... in order, at most ``MAX_FIELDS``."""
    m = (
        re.fullmatch(r"([<>=!])((?:\d*[xbB?hHiIlLqQefdc])+)", str(fmt).replace(" ", ""))
        if isinstance(fmt, str)
        else None
    )
    if m is None:
        raise ArgumentError(
            f"struct={fmt!r} is not accepted: give a byte order (<, >, = or !) then codes from "
            "x b B ? h H i I l L q Q e f d c, e.g. '<IQIq'"
        )
    order = {"<": "<", ">": ">", "!": ">", "=": "="}[m.group(1)]
    names: list[str] = []
    formats: list[np.dtype] = []
    offsets: list[int] = []
    offset = 0
    for count, code in re.findall(r"(\d*)([xbB?hHiIlLqQefdc])", m.group(2)):
        n = int(count) if count else 1
        if code == "x":
            offset += n
            continue
        dt = np.dtype(order + _STRUCT_CODES[code] if _STRUCT_CODES[code][0] not in "bS" else _STRUCT_CODES[code])
        if len(names) + n > MAX_FIELDS:
            raise ArgumentError(
                f"struct={fmt!r} is not accepted: it has more than {MAX_FIELDS} fields (padding x takes no field)"
            )
        for _ in range(n):
            names.append(f"f{len(names)}")
            formats.append(dt)
            offsets.append(offset)
            offset += dt.itemsize
    if not names:
        raise ArgumentError(f"struct={fmt!r} is not accepted: it has no field")
    return np.dtype({"names": names, "formats": formats, "offsets": offsets, "itemsize": offset})


def _struct(struct: Optional[str]) -> np.dtype:
    if struct is None:
        raise ArgumentError("struct is required for format='binary': a struct format string such as '<IQIq'")
    return struct_dtype(struct)


def _field(name: str, index: Optional[int], dtype: np.dtype, integer: bool) -> Optional[str]:
    if index is None:
        return None
    assert dtype.names is not None
    if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(dtype.names):
        raise ArgumentError(f"{name}={index!r} is not accepted: the struct has fields 0..{len(dtype.names) - 1}")
    field = dtype.names[index]
    if integer and dtype[field].kind not in "iu":
        raise ArgumentError(f"{name}={index!r} is not accepted: field {index} is {dtype[field]}, not an integer")
    return field


def layout(path: str, src: Optional[Source], options: Options) -> Layout:
    dtype = _struct(options.struct)
    key = _field("key_field", options.key_field, dtype, integer=True)
    assert key is not None
    size = _field("size_field", options.size_field, dtype, integer=True)
    time = _field("time_field", options.time_field, dtype, integer=False)
    return Layout(dtype, key, size, time)


def write(t: Trace, keys: np.ndarray, options: Options) -> bytes:
    dtype = _struct(options.struct)
    _checks.affordable("struct", options.struct, len(keys) * dtype.itemsize, f"{len(keys)} records of it")
    rec = np.zeros(len(keys), dtype=dtype)
    for arg, index, arr in (
        ("key_field", options.key_field, keys),
        ("size_field", options.size_field, t.sizes),
        ("time_field", options.time_field, t.times),
    ):
        field = _field(arg, index, dtype, integer=arg != "time_field")
        if field is None or arr is None:
            continue
        if arg == "key_field" and dtype[field].itemsize == 8:
            # 64-bit keys are taken by their bit pattern, as everywhere (one-to-one)
            rec[field] = arr.view(np.uint64 if dtype[field].kind == "u" else np.int64)
        else:
            name = {"key_field": "trace", "size_field": "sizes", "time_field": "times"}[arg]
            rec[field] = fitting(name, arr, dtype[field])
    return rec.tobytes()


FORMAT = Format("binary", write=write, layout=layout, reads=("struct", "key_field", "size_field", "time_field"))
