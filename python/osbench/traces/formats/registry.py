"""The trace file formats by name, and the three ways through them: :func:`read` (a format
detected when not named), :func:`iter_chunks` (bounded memory where the records have a fixed
size) and :func:`write`. Adding a format: its module (one :class:`~.format.Format`) and one
entry in ``_ALL``.

Fixed-size records are read by one loop (:func:`pieces`) whether a file is read whole or
streamed, so the two accept and refuse the same files."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Optional, Union

import numpy as np

from osbench import _checks, _files, datasets
from osbench._optional import require
from osbench.errors import ArgumentError, ArgumentTypeError, TraceFileError
from osbench.traces.formats import azure, binary, mooncake, npy, oracle, text
from osbench.traces.formats._io import PathLike, Source, fail, native_order, strip_zst
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

MAX_CHUNK = 1 << 24
"""The most accesses a chunk may hold: larger chunks would only hold more memory, and delay
Ctrl-C (each chunk is converted in one piece)."""

_WHOLE = 1 << 20
"""Records per piece when a fixed-record file is read whole."""


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
    if not isinstance(name, str) or name not in accepted:
        raise ArgumentError(f"format={name!r} is not accepted{what}: use one of {', '.join(accepted)}")
    return REGISTRY[name]


def _options(read_options: dict[str, Any]) -> Options:
    known = {f.name for f in dataclasses.fields(Options)}
    for name, value in read_options.items():
        if name not in known:
            raise ArgumentTypeError(f"{name}={value!r} is not accepted: read options are {', '.join(sorted(known))}")
    return Options(**read_options)


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
    name), ``header`` (None: detected, a first line whose key field has no digit),
    ``delimiter`` (default ``,`` for csv, whitespace for txt). ``binary``: ``struct``, a
    :mod:`struct` format with a byte order (``<``, ``>``, ``=`` or ``!``), and
    ``key_field``/``size_field``/``time_field``, indices of its (non-padding) fields.
    zstd-compressed files are read transparently (see :mod:`._io` for the limits that guard
    against damaged and hostile files). A file that would need more memory than is free is
    refused before it is read.
    """
    options = Options(
        key_column, size_column, time_column, header, delimiter, struct, key_field, size_field, time_field
    )
    p = _path(path)
    f = None if format is None else _format(format, FORMATS)
    with Source(p, REGISTRY[f.name].memory_per_byte if f is not None else 3.0) as src:
        if f is None:
            f = _format(detect(p, src.peek(256)), FORMATS)
            src.memory_per_byte = f.memory_per_byte
        f.check_reads(options)
        if f.layout is None:
            assert f.read is not None
            t = f.read(p, src, options)
        else:
            parts = [piece.trace for piece in pieces(p, src, f, _WHOLE, options)]
            t = _concat(parts)
    t.name = strip_zst(os.path.basename(p))
    return t


def _path(path: Any) -> str:
    if not isinstance(path, (str, os.PathLike)):
        raise ArgumentTypeError(f"path={path!r} is not accepted: a file path or a dataset name")
    return datasets.resolve(path)


def _concat(parts: list[Trace]) -> Trace:
    """One trace of the pieces of a file (each field where the pieces have it)."""
    if len(parts) == 1:
        return parts[0]
    first = parts[0]

    def join(get: Any) -> Optional[np.ndarray]:
        arrays = [get(p) for p in parts]
        return None if arrays[0] is None else np.concatenate(arrays)

    return Trace(
        join(lambda p: p.keys),
        sizes=join(lambda p: p.sizes),
        times=join(lambda p: p.times),
        fields={k: np.concatenate([p.fields[k] for p in parts]) for k in first.fields},
        name=first.name,
    )


@dataclass(frozen=True)
class Piece:
    """Consecutive accesses of a trace file, and where their records are, so that an error
    about one of them names its place."""

    trace: Trace
    path: str
    start: int
    """The index of the piece's first access in the file."""
    offset: Optional[int] = None
    """The (decompressed) byte offset of the first record; None for a format of lines."""
    itemsize: Optional[int] = None
    """The bytes of each record; None for a format of lines."""

    def error(self, i: int, what: str) -> TraceFileError:
        """The error of the piece's access ``i``: the file, the place, ``what``."""
        if self.offset is None or self.itemsize is None:
            return fail(self.path, f"record {self.start + i + 1}", what)
        return fail(self.path, f"byte offset {self.offset + i * self.itemsize}", what)


def iter_chunks(
    path: PathLike,
    format: Optional[str] = None,
    *,
    chunk_size: int = 1 << 20,
    **read_options: Any,
) -> Iterator[Trace]:
    """The trace in ``path`` as consecutive :class:`Trace` pieces of up to ``chunk_size``
    accesses (at most ``MAX_CHUNK``). The fixed-record formats (``STREAMED``: npy,
    oracleGeneral, binary, and their zstd-compressed files) are read piece by piece in bounded
    memory; the others are read whole, then cut. ``read_options`` are :func:`read`'s. Errors
    are those of :func:`read`, raised when the bad place is reached."""
    for piece in file_pieces(path, format, chunk_size, read_options):
        yield piece.trace


def file_pieces(
    path: PathLike, format: Optional[str], chunk_size: int, read_options: dict[str, Any]
) -> Iterator[Piece]:
    """:func:`iter_chunks`, each piece with the place of its records (for errors that name it)."""
    chunk_size = _checks.positive_int("chunk_size", chunk_size, maximum=MAX_CHUNK)
    options = _options(read_options)
    p = _path(path)
    f = None if format is None else _format(format, FORMATS)
    with Source(p) as src:
        if f is None:
            f = _format(detect(p, src.peek(256)), FORMATS)
        f.check_reads(options)
        if f.layout is not None:
            yield from pieces(p, src, f, chunk_size, options)
            return
        src.memory_per_byte = f.memory_per_byte
        assert f.read is not None
        whole = f.read(p, src, options)
    whole.name = strip_zst(os.path.basename(p))
    for start in range(0, max(len(whole), 1), chunk_size):
        cut = slice(start, start + chunk_size)
        yield Piece(
            Trace(
                whole.keys[cut],
                sizes=None if whole.sizes is None else whole.sizes[cut],
                times=None if whole.times is None else whole.times[cut],
                fields={k: v[cut] for k, v in whole.fields.items()},
                name=whole.name,
            ),
            p,
            start,
        )


def pieces(path: str, src: Source, f: Format, chunk_size: int, options: Options) -> Iterator[Piece]:
    """Fixed-size records, ``chunk_size`` at a time; a truncated record, or a count other than
    a header promised, is an error naming the byte offset."""
    assert f.layout is not None
    name = strip_zst(os.path.basename(path))
    lay = f.layout(path, src, options)
    itemsize = lay.dtype.itemsize
    seen = 0
    while True:
        want = chunk_size if lay.count is None else min(chunk_size, lay.count - seen)
        offset = src.offset
        data = src.read(want * itemsize) if want > 0 else b""
        if len(data) % itemsize:
            whole = src.offset - len(data) % itemsize
            raise fail(path, f"byte offset {whole}", f"truncated record: the data ends inside a {itemsize}-byte record")
        if not data:
            break
        rec = np.frombuffer(data, dtype=lay.dtype)
        keys = native_order(rec, lay.key)
        assert keys is not None
        fields = {} if lay.extra is None else {lay.extra: native_order(rec, lay.extra)}
        trace = Trace(
            keys, sizes=native_order(rec, lay.size), times=native_order(rec, lay.time), fields=fields, name=name
        )
        yield Piece(trace, path, seen, offset, itemsize)
        seen += len(rec)
    if lay.count is not None:
        if seen < lay.count:
            raise fail(
                path,
                f"byte offset {src.offset}",
                f"truncated: the header promises {lay.count} items, the data holds {seen}",
            )
        if src.read(1):
            raise fail(
                path, f"byte offset {src.offset - 1}", f"trailing bytes after the {lay.count} items the header promises"
            )
    elif seen == 0:
        raise fail(path, f"byte offset {src.offset}", "no records")


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
    p = _out(path)
    if isinstance(level, bool) or not isinstance(level, int) or not 1 <= level <= 22:
        raise ArgumentError(f"level={level!r} is not accepted: a zstd level, an integer from 1 to 22")
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
    f.check_reads(options, Options(header=True), "writes")
    data = f.write(t, keys, options)
    if strip_zst(p.lower()) != p.lower():
        data = compress(data, level)
    _files.write_bytes(p, data)


def compress(data: bytes, level: int = 3) -> bytes:
    """One zstd frame of ``data``, with its size and a content checksum, so that a damaged
    byte is found when the file is read back."""
    zstandard = require("zstandard", "writing a zstd-compressed trace")
    return bytes(zstandard.ZstdCompressor(level=level, write_checksum=True, write_content_size=True).compress(data))


def _out(path: Any) -> str:
    """A path to write to."""
    if not isinstance(path, (str, os.PathLike)):
        raise ArgumentTypeError(f"path={path!r} is not accepted: a file path")
    p = os.fspath(path)
    if not isinstance(p, str) or not p:
        raise ArgumentError(f"path={path!r} is not accepted: a file path")
    return p


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
    _files.write_bytes(_out(path), oracle.oracle_general_bytes(trace, sizes, times=False))


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
