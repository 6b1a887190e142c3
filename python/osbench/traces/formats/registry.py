"""The trace file formats by name, and the three ways through them: :func:`read` (a format
detected when not named), :func:`iter_chunks` (bounded memory where the records have a fixed
size) and :func:`write`. Adding a format: its module (one :class:`~.format.Format`) and one
entry in ``_ALL``."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterator
from typing import Any, Optional, Union

import numpy as np

from osbench import _checks, _files, datasets
from osbench.errors import ArgumentError, ArgumentTypeError
from osbench.traces.formats import azure, binary, mooncake, npy, oracle, text
from osbench.traces.formats._io import (
    ZSTD_MAGIC,
    PathLike,
    Reader,
    check_not_misnamed,
    fail,
    load,
    native_order,
    strip_zst,
)
from osbench.traces.formats.format import Format, Options
from osbench.traces.trace import Trace, as_trace

_ALL = (npy.FORMAT, text.CSV, text.TXT, oracle.FORMAT, binary.FORMAT, mooncake.FORMAT, azure.FORMAT)

REGISTRY: dict[str, Format] = {f.name: f for f in _ALL}
"""Every trace file format by name."""

FORMATS: tuple[str, ...] = tuple(REGISTRY)
"""Every trace file format :func:`read` knows (``mooncake`` and ``azure`` are read only)."""

WRITABLE: tuple[str, ...] = tuple(f.name for f in _ALL if f.write is not None)
"""The formats :func:`write` writes."""

STREAMED: tuple[str, ...] = tuple(f.name for f in _ALL if f.layout is not None)
"""Formats :func:`iter_chunks` reads in bounded memory (fixed-size records)."""


def detect(path: PathLike, head: bytes = b"") -> str:
    """The format of a trace file, from its name (a ``.zst`` suffix set aside) and its first
    bytes (``head``). Raises ValueError when neither tells."""
    name = strip_zst(os.path.basename(os.fspath(path)).lower())
    for f in sorted(_ALL, key=lambda f: f.precedence):
        if f.detect is not None and f.detect(name, head):
            return f.name
    raise ArgumentError(
        f"{os.fspath(path)}: cannot tell the trace format from the name: pass format= one of {', '.join(FORMATS)}"
    )


def _format(name: Any, accepted: tuple[str, ...], what: str = "") -> Format:
    if name not in accepted:
        raise ArgumentError(f"format={name!r} is not accepted{what}: use one of {', '.join(accepted)}")
    return REGISTRY[name]


def read(
    path: PathLike,
    format: Optional[str] = None,
    *,
    key_column: Union[int, str] = 0,
    size_column: Union[int, str, None] = None,
    time_column: Union[int, str, None] = None,
    header: Optional[bool] = None,
    delimiter: Optional[str] = None,
    struct: Optional[str] = None,
    key_field: int = 0,
    size_field: Optional[int] = None,
    time_field: Optional[int] = None,
) -> Trace:
    """Read a trace file into a :class:`~osbench.traces.Trace` (``keys``, ``sizes`` and
    ``times`` where the format has them).

    ``path``: a file, or a dataset name (:mod:`osbench.datasets`). ``format``: one of
    ``FORMATS``, or None to detect it from the name and first bytes.
    Text formats: ``key_column``/``size_column``/``time_column`` (0-based index, or a header
    name), ``header`` (None: detected, a first line whose key field is not an integer),
    ``delimiter`` (default ``,`` for csv, whitespace for txt). ``binary``: ``struct``, a
    :mod:`struct` format with a byte order (``<``, ``>``, ``=`` or ``!``), and
    ``key_field``/``size_field``/``time_field``, indices of its (non-padding) fields.
    zstd-compressed files are read transparently.
    """
    options = Options(
        key_column, size_column, time_column, header, delimiter, struct, key_field, size_field, time_field
    )
    p = datasets.resolve(path)
    data = load(p)
    f = _format(detect(p, data[:256]) if format is None else format, FORMATS)
    t = f.read(p, data, options)
    t.name = strip_zst(os.path.basename(p))
    return t


def iter_chunks(
    path: PathLike,
    format: Optional[str] = None,
    *,
    chunk_size: int = 1 << 20,
    **read_options: Any,
) -> Iterator[Trace]:
    """The trace in ``path`` as consecutive :class:`Trace` pieces of up to ``chunk_size``
    accesses. The fixed-record formats (``STREAMED``: npy, oracleGeneral, binary, and their
    zstd-compressed files) are read piece by piece in bounded memory; the others are read
    whole, then cut. ``read_options`` are :func:`read`'s. Errors are those of :func:`read`,
    raised when the bad place is reached."""
    chunk_size = _checks.positive_int("chunk_size", chunk_size)
    known = {f.name for f in dataclasses.fields(Options)}
    for name, value in read_options.items():
        if name not in known:
            raise ArgumentTypeError(f"{name}={value!r} is not accepted: read options are {', '.join(sorted(known))}")
    p = datasets.resolve(path)
    with open(p, "rb") as fh:
        head = fh.read(256)
        fh.seek(0)
        if not head:
            raise fail(p, "byte offset 0", "the file is empty")
        compressed = head[:4] == ZSTD_MAGIC
        if not compressed:
            check_not_misnamed(p, head)
        f = _format(detect(p, b"" if compressed else head) if format is None else format, FORMATS)
        if f.layout is None:
            whole = read(p, f.name, **read_options)
            for start in range(0, max(len(whole), 1), chunk_size):
                yield Trace(
                    whole.keys[start : start + chunk_size],
                    sizes=None if whole.sizes is None else whole.sizes[start : start + chunk_size],
                    times=None if whole.times is None else whole.times[start : start + chunk_size],
                    fields={k: v[start : start + chunk_size] for k, v in whole.fields.items()},
                    name=whole.name,
                )
            return
        yield from _records(p, Reader(fh, p, compressed), f, chunk_size, Options(**read_options))


def _records(path: str, r: Reader, f: Format, chunk_size: int, options: Options) -> Iterator[Trace]:
    """Fixed-size records, ``chunk_size`` at a time; a truncated record, or a count other than
    a header promised, is an error naming the byte offset."""
    assert f.layout is not None
    name = strip_zst(os.path.basename(path))
    lay = f.layout(path, r, options)
    itemsize = lay.dtype.itemsize
    seen = 0
    while True:
        want = chunk_size if lay.count is None else min(chunk_size, lay.count - seen)
        data = r.read(want * itemsize) if want > 0 else b""
        if len(data) % itemsize:
            whole = r.offset - len(data) % itemsize
            raise fail(path, f"byte offset {whole}", f"truncated record: the data ends inside a {itemsize}-byte record")
        if not data:
            break
        rec = np.frombuffer(data, dtype=lay.dtype)
        seen += len(rec)
        keys = native_order(rec, lay.key)
        assert keys is not None
        fields = {} if lay.extra is None else {lay.extra: native_order(rec, lay.extra)}
        yield Trace(
            keys, sizes=native_order(rec, lay.size), times=native_order(rec, lay.time), fields=fields, name=name
        )
    if lay.count is not None:
        if seen < lay.count:
            raise fail(
                path,
                f"byte offset {r.offset}",
                f"truncated: the header promises {lay.count} items, the data holds {seen}",
            )
        if r.read(1):
            raise fail(
                path, f"byte offset {r.offset - 1}", f"trailing bytes after the {lay.count} items the header promises"
            )


def write(
    trace: Any,
    path: PathLike,
    format: Optional[str] = None,
    *,
    sizes: Any = None,
    header: bool = True,
    delimiter: Optional[str] = None,
    struct: Optional[str] = None,
    key_field: int = 0,
    size_field: Optional[int] = None,
    time_field: Optional[int] = None,
    level: int = 3,
) -> None:
    """Write ``trace`` (a Trace or 1-D integer keys) to ``path``, atomically.

    ``format``: one of ``WRITABLE`` (npy, csv, txt, oracleGeneral, binary), or None to take
    it from the name. The trace's sizes and times are written where the format holds them
    (``sizes=`` overrides the trace's). A path ending in ``.zst`` is zstd-compressed
    (``level``). ``binary`` needs ``struct`` and the field indices, as :func:`read`.
    """
    t = as_trace(trace)
    if sizes is not None:
        t = Trace(t.keys, sizes=sizes, times=t.times)
    p = os.fspath(path)
    if format is None:
        format = "binary" if struct is not None else detect(p)
    f = _format(format, WRITABLE, " for writing")
    assert f.write is not None
    keys = t.native_keys()
    n = len(keys)
    for what, arr in (("sizes", t.sizes), ("times", t.times)):
        if arr is not None and len(arr) != n:
            raise ArgumentError(f"{what} is not accepted: {len(arr)} entries for {n} accesses")
    options = Options(
        header=header,
        delimiter=delimiter,
        struct=struct,
        key_field=key_field,
        size_field=size_field,
        time_field=time_field,
    )
    data = f.write(t, keys, options)
    if strip_zst(p.lower()) != p.lower():
        import zstandard

        data = zstandard.ZstdCompressor(level=level).compress(data)
    _files.write_bytes(p, data)


def read_oracle_general(path: Any) -> Trace:
    """Read a libCacheSim ``oracleGeneral`` binary trace (a path or a dataset name; zstd or
    not): keys are the object ids, ``sizes`` the object sizes and ``times`` the timestamps.
    A file whose length is not a whole number of 24-byte records is refused, naming the byte
    offset where the partial record starts."""
    return read(path, "oracleGeneral")


def write_oracle_general(trace: Any, path: Any, sizes: Any = None) -> None:
    """Write a trace as libCacheSim ``oracleGeneral`` records (atomically), so the same
    accesses can be replayed by both tools. Times are access indices; ``next_access`` is the
    index of the key's next access, -1 when there is none. Sizes default to the trace's own,
    else 1 (libCacheSim counts bytes, so unit sizes make its capacity count objects)."""
    _files.write_bytes(path, oracle.oracle_general_bytes(trace, sizes, times=False))


__all__ = [
    "FORMATS",
    "REGISTRY",
    "STREAMED",
    "WRITABLE",
    "detect",
    "iter_chunks",
    "read",
    "read_oracle_general",
    "write",
    "write_oracle_general",
]
