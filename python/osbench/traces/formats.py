"""Trace files in and out: :func:`read` (with format detection) and :func:`write`.

Formats (``FORMATS``):

- ``npy``: a 1-D integer array of keys, or a structured array with a ``key`` (or ``id``)
  field and optional ``size`` and ``time`` fields.
- ``csv`` and ``txt``: one access per line; choose the key column (and optionally a size and
  a time column) by index or, with a header line, by name. ``csv`` splits on commas, ``txt`` on
  whitespace (or on ``delimiter=``). The header is detected when not said.
- ``oracleGeneral``: libCacheSim's binary records, 24 packed little-endian bytes
  ``uint32 time, uint64 id, uint32 size, int64 next_access`` (-1 = never again), read and
  written, so traces move between the two tools; ``next_access`` comes back in
  ``trace.fields["next_access"]``.
- ``binary``: fixed-size records described by a :mod:`struct` format string with an explicit
  byte order (``struct="<IQIq"``), choosing the key, size and time fields by index.
- ``mooncake``: Mooncake request logs (JSON lines with ``timestamp``, ``input_length``,
  ``output_length``, ``hash_ids``), read as the trace of block accesses a prefix cache sees:
  one access per ``hash_ids`` entry, sized in tokens (512 per block, the last block of a
  request holding the rest of its prompt), timed by the request's timestamp (ms); the
  request index of each access is ``trace.fields["request"]``, and the request's
  ``input_length`` and (when every record has one) ``output_length`` are in
  ``trace.fields`` too. (For whole requests, see :meth:`osbench.serve.Requests.read`.)
- ``azure``: Azure LLM inference CSV logs (``TIMESTAMP, ContextTokens, GeneratedTokens``):
  one access per request, keys 0..n-1 (the log names no objects), sizes the context tokens,
  times in ns since the Unix epoch; ``fields["input_length"]``, ``fields["output_length"]``.

Any of these may be zstd-compressed (detected by its magic bytes; written when the path
ends in ``.zst``). A file that cannot be read raises :class:`TraceFileError` naming the
file and the byte offset or line: never a crash, never a silently partial trace.
"""

from __future__ import annotations

import io
import json
import os
import re
from collections.abc import Iterator
from typing import Any, BinaryIO, Optional, Union

import numpy as np

from osbench import datasets
from osbench.errors import ArgumentError, ArgumentTypeError, OsbenchError
from osbench.traces import NEVER, ORACLE_GENERAL, Trace, as_trace

FORMATS: tuple[str, ...] = ("npy", "csv", "txt", "oracleGeneral", "binary", "mooncake", "azure")
"""Every trace file format :func:`read` knows (``mooncake`` and ``azure`` are read only)."""

WRITABLE: tuple[str, ...] = ("npy", "csv", "txt", "oracleGeneral", "binary")

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
NPY_MAGIC = b"\x93NUMPY"
MOONCAKE_BLOCK_TOKENS = 512

PathLike = Union[str, "os.PathLike[str]"]


class TraceFileError(OsbenchError, ValueError):
    """A trace file that cannot be read. The message names the file and where it went wrong
    (a byte offset or a line number)."""


def _fail(path: str, where: str, what: str) -> TraceFileError:
    return TraceFileError(f"{path}: {where}: {what}")


# ---------------------------------------------------------------------------- bytes in


def _decompress(path: str, data: bytes) -> bytes:
    """Every zstd frame of ``data``, decompressed; a truncated or corrupt stream is an error."""
    try:
        import zstandard
    except ImportError:  # pragma: no cover - zstandard is a dependency
        raise _fail(path, "byte offset 0", "zstd-compressed, but the zstandard package is not installed") from None
    out = []
    offset = 0
    while offset < len(data):
        d = zstandard.ZstdDecompressor().decompressobj()
        try:
            out.append(d.decompress(data[offset:]))
        except zstandard.ZstdError as exc:
            raise _fail(path, f"zstd frame at byte offset {offset}", f"corrupt ({exc})") from None
        if not d.eof:
            raise _fail(
                path,
                f"byte offset {len(data)}",
                f"truncated zstd stream (the frame at byte offset {offset} is incomplete)",
            )
        offset = len(data) - len(d.unused_data)
    return b"".join(out)


def _load(path: str) -> tuple[bytes, bool]:
    """The file's bytes (decompressed if zstd) and whether it was compressed."""
    with open(path, "rb") as f:
        data = f.read()
    if not data:
        raise _fail(path, "byte offset 0", "the file is empty")
    if data[:4] == ZSTD_MAGIC:
        data = _decompress(path, data)
        if not data:
            raise _fail(path, "byte offset 0", "the file decompresses to nothing")
        return data, True
    if _strip_zst(os.path.basename(path).lower()) != os.path.basename(path).lower():
        raise _fail(
            path,
            "byte offset 0",
            f"named .zst but not zstd data (first bytes {data[:4].hex(' ')}, expected 28 b5 2f fd)",
        )
    return data, False


def _strip_zst(name: str) -> str:
    for suffix in (".zst", ".zstd"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def detect(path: PathLike, head: bytes = b"") -> str:
    """The format of a trace file, from its name (a ``.zst`` suffix set aside) and, for npy,
    its first bytes. Raises ValueError when neither tells."""
    name = _strip_zst(os.path.basename(os.fspath(path)).lower())
    if head.startswith(NPY_MAGIC) or name.endswith(".npy"):
        return "npy"
    if "oraclegeneral" in name:
        return "oracleGeneral"
    if name.endswith((".jsonl", ".json")):
        return "mooncake"
    if name.endswith(".csv"):
        first = head.split(b"\n", 1)[0].lower().replace(b" ", b"")
        return "azure" if first.startswith(b"timestamp,contexttokens") else "csv"
    if name.endswith((".txt", ".tsv", ".trace")):
        return "txt"
    raise ArgumentError(
        f"{os.fspath(path)}: cannot tell the trace format from the name: pass format= one of {', '.join(FORMATS)}"
    )


# ---------------------------------------------------------------------------- read


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

    ``format``: one of ``FORMATS``, or None to detect it from the name and first bytes.
    Text formats: ``key_column``/``size_column``/``time_column`` (0-based index, or a header
    name), ``header`` (None: detected, a first line whose key field is not an integer),
    ``delimiter`` (default ``,`` for csv, whitespace for txt). ``binary``: ``struct``, a
    :mod:`struct` format with a byte order (``<``, ``>``, ``=`` or ``!``), and
    ``key_field``/``size_field``/``time_field``, indices of its (non-padding) fields.
    zstd-compressed files are read transparently.
    """
    p = datasets.resolve(path)
    data, _ = _load(p)
    fmt = detect(p, data[:256]) if format is None else format
    if fmt not in FORMATS:
        raise ArgumentError(f"format={fmt!r} is not accepted: use one of {', '.join(FORMATS)}")
    name = _strip_zst(os.path.basename(p))
    if fmt == "npy":
        t = _read_npy(p, data)
    elif fmt == "oracleGeneral":
        t = _read_oracle(p, data)
    elif fmt == "binary":
        if struct is None:
            raise ArgumentError("struct is required for format='binary': a struct format string such as '<IQIq'")
        t = _read_binary(p, data, struct, key_field, size_field, time_field)
    elif fmt in ("csv", "txt"):
        sep = delimiter if delimiter is not None else ("," if fmt == "csv" else None)
        t = _read_text(p, data, sep, key_column, size_column, time_column, header)
    elif fmt == "mooncake":
        t = _read_mooncake(p, data)
    else:
        t = _read_azure(p, data)
    t.name = name
    return t


def _read_npy(path: str, data: bytes) -> Trace:
    dtype, count, start, key, size, time = _npy_header(path, data)
    if len(data) - start < count * dtype.itemsize:
        whole = start + (len(data) - start) // max(dtype.itemsize, 1) * dtype.itemsize
        raise _fail(
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


def _check_records(path: str, data: bytes, itemsize: int, what: str) -> None:
    if len(data) % itemsize:
        whole = len(data) - len(data) % itemsize
        raise _fail(
            path,
            f"byte offset {whole}",
            f"truncated record: {len(data)} bytes is not a whole number of {itemsize}-byte {what} records",
        )


def _read_oracle(path: str, data: bytes) -> Trace:
    _check_records(path, data, ORACLE_GENERAL.itemsize, "oracleGeneral")
    rec = np.frombuffer(data, dtype=ORACLE_GENERAL)
    return Trace(
        rec["id"].copy(),
        sizes=rec["size"].copy(),
        times=rec["time"].copy(),
        fields={"next_access": rec["next_access"].copy()},
    )


_STRUCT_CODES = {
    "b": "i1", "B": "u1", "?": "b1", "h": "i2", "H": "u2", "i": "i4", "I": "u4", "l": "i4", "L": "u4",
    "q": "i8", "Q": "u8", "e": "f2", "f": "f4", "d": "f8", "c": "S1",
}  # fmt: skip


def struct_dtype(fmt: str) -> np.dtype:
    """A numpy record dtype equal to a :mod:`struct` format with standard sizes (the byte
    order character is required: ``<``, ``>``, ``=`` or ``!``). Padding bytes (``x``) take
    room but no field; the fields are named f0, f1, ... in order."""
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
        for _ in range(n):
            names.append(f"f{len(names)}")
            formats.append(dt)
            offsets.append(offset)
            offset += dt.itemsize
    if not names:
        raise ArgumentError(f"struct={fmt!r} is not accepted: it has no field")
    return np.dtype({"names": names, "formats": formats, "offsets": offsets, "itemsize": offset})


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


def _read_binary(
    path: str, data: bytes, fmt: str, key_field: int, size_field: Optional[int], time_field: Optional[int]
) -> Trace:
    dtype = struct_dtype(fmt)
    key = _field("key_field", key_field, dtype, integer=True)
    size = _field("size_field", size_field, dtype, integer=True)
    time = _field("time_field", time_field, dtype, integer=False)
    _check_records(path, data, dtype.itemsize, f"struct {fmt!r}")
    rec = np.frombuffer(data, dtype=dtype)
    assert key is not None
    return Trace(
        rec[key].astype(rec[key].dtype.newbyteorder("=")),
        sizes=None if size is None else rec[size].astype(rec[size].dtype.newbyteorder("=")),
        times=None if time is None else rec[time].astype(rec[time].dtype.newbyteorder("=")),
    )


def _decode(path: str, data: bytes) -> list[str]:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _fail(path, f"byte offset {exc.start}", "not UTF-8 text") from None
    return text.splitlines()


def _int(path: str, line_no: int, column: int, field: str) -> int:
    try:
        return int(field)
    except ValueError:
        raise _fail(path, f"line {line_no}, column {column + 1}", f"{field!r} is not an integer") from None


def _int_array(path: str, values: list[int], what: str) -> np.ndarray:
    if not values:
        return np.zeros(0, dtype=np.int64)
    lo, hi = min(values), max(values)
    if lo >= -(2**63) and hi < 2**63:
        return np.array(values, dtype=np.int64)
    if lo >= 0 and hi < 2**64:
        return np.array(values, dtype=np.uint64)
    raise _fail(path, what, "integers outside the 64-bit range")


def _read_text(
    path: str,
    data: bytes,
    sep: Optional[str],
    key_column: Union[int, str],
    size_column: Union[int, str, None],
    time_column: Union[int, str, None],
    header: Optional[bool],
) -> Trace:
    lines = _decode(path, data)
    rows = [(i + 1, line) for i, line in enumerate(lines) if line.strip()]
    if not rows:
        raise _fail(path, "line 1", "no records (the file holds only blank lines)")

    def split(line: str) -> list[str]:
        return [f.strip() for f in line.split(sep)]

    first_no, first = rows[0]
    names = split(first)
    if header is None:
        if isinstance(key_column, str):
            header = True
        else:
            k = key_column if isinstance(key_column, int) and 0 <= key_column < len(names) else 0
            try:
                int(names[k])
                header = False
            except ValueError:
                header = True
    if header:
        rows = rows[1:]

    def column(arg: str, value: Union[int, str, None]) -> Optional[int]:
        if value is None:
            return None
        if isinstance(value, str):
            if not header:
                raise ArgumentError(f"{arg}={value!r} is not accepted: a column name needs a header line (header=True)")
            if value not in names:
                raise ArgumentError(f"{arg}={value!r} is not accepted: the header has columns {', '.join(names)}")
            return names.index(value)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ArgumentError(f"{arg}={value!r} is not accepted: a column index (0-based) or a header name")
        return value

    kc = column("key_column", key_column)
    sc = column("size_column", size_column)
    tc = column("time_column", time_column)
    assert kc is not None
    wanted = [c for c in (kc, sc, tc) if c is not None]
    need = max(wanted) + 1
    cols: list[list[int]] = [[] for _ in wanted]
    for line_no, line in rows:
        fields = split(line)
        if len(fields) < need:
            raise _fail(path, f"line {line_no}", f"{len(fields)} fields, but column {need - 1} is asked for")
        for out, c in zip(cols, wanted):
            out.append(_int(path, line_no, c, fields[c]))
    where = f"lines {first_no}-{rows[-1][0] if rows else first_no}"
    arrays = [_int_array(path, c, where) for c in cols]
    keys = arrays[0]
    sizes = arrays[1] if sc is not None else None
    times = arrays[-1] if tc is not None else None
    return Trace(keys, sizes=sizes, times=times)


def _read_mooncake(path: str, data: bytes) -> Trace:
    keys: list[int] = []
    sizes: list[int] = []
    times: list[int] = []
    request: list[int] = []
    inputs: list[int] = []
    outputs: list[Optional[int]] = []
    n_requests = 0
    for line_no, line in enumerate(_decode(path, data), 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
            ids = rec["hash_ids"]
            stamp = rec.get("timestamp", 0)
            length = rec.get("input_length", len(ids) * MOONCAKE_BLOCK_TOKENS)
            output = rec.get("output_length")
            if not isinstance(ids, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in ids):
                raise ArgumentTypeError("hash_ids must be a list of integers")
            if not isinstance(stamp, (int, float)) or not isinstance(length, int):
                raise ArgumentTypeError("timestamp and input_length must be numbers")
            if output is not None and (not isinstance(output, int) or isinstance(output, bool)):
                raise ArgumentTypeError("output_length must be an integer")
        except (ValueError, KeyError, TypeError) as exc:
            raise _fail(
                path, f"line {line_no}", f"not a Mooncake request with hash_ids ({type(exc).__name__}: {exc})"
            ) from None
        n = len(ids)
        last = min(max(length - MOONCAKE_BLOCK_TOKENS * (n - 1), 1), MOONCAKE_BLOCK_TOKENS)
        keys += ids
        sizes += [MOONCAKE_BLOCK_TOKENS] * (n - 1) + [last] if n else []
        times += [int(stamp)] * n
        request += [n_requests] * n
        inputs += [length] * n
        outputs += [output] * n
        n_requests += 1
    if n_requests == 0:
        raise _fail(path, "line 1", "no records (the file holds only blank lines)")
    fields = {"request": np.array(request, dtype=np.int64), "input_length": _int_array(path, inputs, "input_length")}
    if None not in outputs:
        fields["output_length"] = _int_array(path, [o for o in outputs if o is not None], "output_length")
    return Trace(
        _int_array(path, keys, "hash_ids"),
        sizes=np.array(sizes, dtype=np.int64),
        times=np.array(times, dtype=np.int64),
        fields=fields,
    )


def _read_azure(path: str, data: bytes) -> Trace:
    lines = _decode(path, data)
    rows = [(i + 1, line) for i, line in enumerate(lines) if line.strip()]
    if not rows or [f.strip().lower() for f in rows[0][1].split(",")][:3] != [
        "timestamp",
        "contexttokens",
        "generatedtokens",
    ]:
        raise _fail(path, "line 1", "not an Azure LLM log: the header must be TIMESTAMP,ContextTokens,GeneratedTokens")
    if len(rows) == 1:
        raise _fail(path, "line 2", "no records after the header")
    stamps: list[str] = []
    context: list[int] = []
    generated: list[int] = []
    for line_no, line in rows[1:]:
        fields = [f.strip() for f in line.split(",")]
        if len(fields) < 3:
            raise _fail(path, f"line {line_no}", f"{len(fields)} fields, expected 3")
        try:
            np.datetime64(fields[0].replace(" ", "T"), "ns")
        except ValueError:
            raise _fail(path, f"line {line_no}, column 1", f"{fields[0]!r} is not a timestamp") from None
        stamps.append(fields[0].replace(" ", "T"))
        context.append(_int(path, line_no, 1, fields[1]))
        generated.append(_int(path, line_no, 2, fields[2]))
    times = np.array(stamps, dtype="datetime64[ns]").astype(np.int64)
    ctx = np.array(context, dtype=np.int64)
    return Trace(
        np.arange(len(ctx), dtype=np.int64),
        sizes=ctx,
        times=times,
        fields={"input_length": ctx, "output_length": np.array(generated, dtype=np.int64)},
    )


# ---------------------------------------------------------------------------- streaming

STREAMED: tuple[str, ...] = ("npy", "oracleGeneral", "binary")
"""Formats :func:`iter_chunks` reads in bounded memory (fixed-size records)."""


def _zstd_blocks(f: BinaryIO, path: str, block: int = 1 << 20) -> Iterator[bytes]:
    """Decompressed bytes of a zstd file, a block at a time; a truncated or corrupt stream is
    an error (zstandard's stream reader would stop silently on a truncated one)."""
    import zstandard

    d: Any = None
    offset = frame_start = 0
    while True:
        raw = f.read(block)
        if not raw:
            break
        data = raw
        while data:
            if d is None:
                d = zstandard.ZstdDecompressor().decompressobj()
                frame_start = offset
            try:
                out = d.decompress(data)
            except zstandard.ZstdError as exc:
                raise _fail(path, f"zstd frame at byte offset {frame_start}", f"corrupt ({exc})") from None
            if out:
                yield out
            if d.eof:
                rest = d.unused_data
                offset += len(data) - len(rest)
                data, d = rest, None
            else:
                offset += len(data)
                data = b""
    if d is not None:
        raise _fail(
            path,
            f"byte offset {offset}",
            f"truncated zstd stream (the frame at byte offset {frame_start} is incomplete)",
        )


class _Reader:
    """Exact-size reads from a plain or zstd file, counting the (decompressed) offset."""

    def __init__(self, f: BinaryIO, path: str, compressed: bool) -> None:
        self.blocks: Optional[Iterator[bytes]] = _zstd_blocks(f, path) if compressed else None
        self.f = f
        self.buf = bytearray()
        self.offset = 0

    def read(self, n: int) -> bytes:
        """Up to ``n`` bytes; fewer only at the end of the data."""
        if self.blocks is None:
            out = self.f.read(n)
        else:
            while len(self.buf) < n:
                block = next(self.blocks, None)
                if block is None:
                    break
                self.buf += block
            out = bytes(self.buf[:n])
            del self.buf[:n]
        self.offset += len(out)
        return out


def iter_chunks(
    path: PathLike,
    format: Optional[str] = None,
    *,
    chunk_size: int = 1 << 20,
    struct: Optional[str] = None,
    key_field: int = 0,
    size_field: Optional[int] = None,
    time_field: Optional[int] = None,
    **text_options: Any,
) -> Iterator[Trace]:
    """The trace in ``path`` as consecutive :class:`Trace` pieces of up to ``chunk_size``
    accesses. The fixed-record formats (``STREAMED``: npy, oracleGeneral, binary, and their
    zstd-compressed files) are read piece by piece in bounded memory; the others are read
    whole, then cut. Errors are those of :func:`read`, raised when the bad place is reached."""
    from osbench import _checks

    chunk_size = _checks.positive_int("chunk_size", chunk_size)
    p = datasets.resolve(path)
    with open(p, "rb") as f:
        head = f.read(8)
        f.seek(0)
        if not head:
            raise _fail(p, "byte offset 0", "the file is empty")
        compressed = head[:4] == ZSTD_MAGIC
        if not compressed and _strip_zst(os.path.basename(p).lower()) != os.path.basename(p).lower():
            raise _fail(
                p,
                "byte offset 0",
                f"named .zst but not zstd data (first bytes {head[:4].hex(' ')}, expected 28 b5 2f fd)",
            )
        fmt = format if format is not None else detect(p, b"" if compressed else head)
        if fmt not in FORMATS:
            raise ArgumentError(f"format={fmt!r} is not accepted: use one of {', '.join(FORMATS)}")
        if fmt not in STREAMED:
            whole = read(
                p, fmt, struct=struct, key_field=key_field, size_field=size_field, time_field=time_field, **text_options
            )
            for start in range(0, max(len(whole), 1), chunk_size):
                yield Trace(
                    whole.keys[start : start + chunk_size],
                    sizes=None if whole.sizes is None else whole.sizes[start : start + chunk_size],
                    times=None if whole.times is None else whole.times[start : start + chunk_size],
                    fields={k: v[start : start + chunk_size] for k, v in whole.fields.items()},
                    name=whole.name,
                )
            return
        yield from _stream_records(
            p, _Reader(f, p, compressed), fmt, chunk_size, struct, key_field, size_field, time_field
        )


def _stream_records(
    path: str,
    r: _Reader,
    fmt: str,
    chunk_size: int,
    struct: Optional[str],
    key_field: int,
    size_field: Optional[int],
    time_field: Optional[int],
) -> Iterator[Trace]:
    name = _strip_zst(os.path.basename(path))
    count: Optional[int] = None  # records promised by a .npy header
    key: Optional[str]
    size: Optional[str]
    time: Optional[str]
    extra: Optional[str] = None
    if fmt == "oracleGeneral":
        dtype = ORACLE_GENERAL
        key, size, time, extra = "id", "size", "time", "next_access"
    elif fmt == "binary":
        if struct is None:
            raise ArgumentError("struct is required for format='binary': a struct format string such as '<IQIq'")
        dtype = struct_dtype(struct)
        key = _field("key_field", key_field, dtype, integer=True)
        size = _field("size_field", size_field, dtype, integer=True)
        time = _field("time_field", time_field, dtype, integer=False)
    else:
        header = r.read(4096)
        trace_head = _npy_header(path, header)
        dtype, count, start, key, size, time = trace_head
        leftover = header[start:]
        r.buf[:0] = leftover if r.blocks is not None else b""
        if r.blocks is None:
            r.f.seek(start)
        r.offset = start
    itemsize = dtype.itemsize
    seen = 0
    while True:
        want = chunk_size if count is None else min(chunk_size, count - seen)
        data = r.read(want * itemsize) if want > 0 else b""
        if len(data) % itemsize:
            whole = r.offset - len(data) % itemsize
            raise _fail(
                path, f"byte offset {whole}", f"truncated record: the data ends inside a {itemsize}-byte record"
            )
        if not data:
            break
        rec = np.frombuffer(data, dtype=dtype)
        seen += len(rec)

        keys = _native_order(rec, key)
        assert keys is not None
        fields = {} if extra is None else {extra: _native_order(rec, extra)}
        yield Trace(keys, sizes=_native_order(rec, size), times=_native_order(rec, time), fields=fields, name=name)
    if count is not None:
        if seen < count:
            raise _fail(
                path, f"byte offset {r.offset}", f"truncated: the header promises {count} items, the data holds {seen}"
            )
        if r.read(1):
            raise _fail(
                path, f"byte offset {r.offset - 1}", f"trailing bytes after the {count} items the header promises"
            )


def _native_order(records: np.ndarray, field: Optional[str]) -> Optional[np.ndarray]:
    """One field of structured records in the machine's byte order (None for no field)."""
    if field is None:
        return None
    a = records[field]
    return a.astype(a.dtype.newbyteorder("="))


def _npy_header(path: str, head: bytes) -> tuple[np.dtype, int, int, str, Optional[str], Optional[str]]:
    """(dtype, count, data offset, key field, size field, time field) of a .npy trace."""
    if not head.startswith(NPY_MAGIC):
        raise _fail(path, "byte offset 0", "not a .npy file (it does not start with \\x93NUMPY)")
    f = io.BytesIO(head)
    try:
        version = np.lib.format.read_magic(f)
        if version == (1, 0):
            shape, _, dtype = np.lib.format.read_array_header_1_0(f)
        else:
            shape, _, dtype = np.lib.format.read_array_header_2_0(f)
    except (ValueError, SyntaxError, EOFError, TypeError) as exc:
        raise _fail(path, "byte offset 8", f"bad .npy header ({exc})") from None
    start = f.tell()
    if dtype.hasobject:
        raise _fail(path, f"byte offset {start}", "a .npy of Python objects is not a trace (pickles are never loaded)")
    if len(shape) != 1:
        raise _fail(path, f"byte offset {start}", f"wrong layout: a trace is 1-D, this array has shape {shape}")
    if dtype.names is None:
        if dtype.kind not in "iu":
            raise _fail(path, f"byte offset {start}", f"wrong layout: keys must be integers, this array holds {dtype}")
        # a plain array: view it as a one-field record
        rec = np.dtype([("key", dtype)])
        return rec, int(shape[0]), start, "key", None, None
    names = {n.lower(): n for n in dtype.names}
    key = names.get("key") or names.get("id")
    if key is None or dtype[key].kind not in "iu":
        raise _fail(
            path,
            f"byte offset {start}",
            f"wrong layout: a structured trace needs an integer 'key' or 'id' field, found {list(dtype.names)}",
        )
    return dtype, int(shape[0]), start, key, names.get("size"), names.get("time")


# ---------------------------------------------------------------------------- write


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

    ``format``: one of ``npy``, ``csv``, ``txt``, ``oracleGeneral``, ``binary``, or None to
    take it from the name. The trace's sizes and times are written where the format holds
    them (``sizes=`` overrides the trace's). A path ending in ``.zst`` is zstd-compressed
    (``level``). ``binary`` needs ``struct`` and the field indices, as :func:`read`.
    """
    from osbench import _files

    t = as_trace(trace)
    if sizes is not None:
        t = Trace(t.keys, sizes=sizes, times=t.times)
    p = os.fspath(path)
    if format is None:
        format = "binary" if struct is not None else detect(p)
    if format not in WRITABLE:
        raise ArgumentError(f"format={format!r} is not accepted for writing: use one of {', '.join(WRITABLE)}")
    keys = t.native_keys()
    n = len(keys)
    for what, arr in (("sizes", t.sizes), ("times", t.times)):
        if arr is not None and len(arr) != n:
            raise ArgumentError(f"{what} is not accepted: {len(arr)} entries for {n} accesses")
    if format == "npy":
        buf = io.BytesIO()
        if t.sizes is None and t.times is None:
            np.save(buf, keys, allow_pickle=False)
        else:
            fields = [("key", keys.dtype)]
            fields += [("size", np.asarray(t.sizes).dtype)] if t.sizes is not None else []
            fields += [("time", np.asarray(t.times).dtype)] if t.times is not None else []
            rec = np.zeros(n, dtype=fields)
            rec["key"] = keys
            if t.sizes is not None:
                rec["size"] = t.sizes
            if t.times is not None:
                rec["time"] = t.times
            np.save(buf, rec, allow_pickle=False)
        data = buf.getvalue()
    elif format == "oracleGeneral":
        data = oracle_general_bytes(t, t.sizes)
    elif format == "binary":
        if struct is None:
            raise ArgumentError("struct is required for format='binary': a struct format string such as '<IQIq'")
        dtype = struct_dtype(struct)
        rec = np.zeros(n, dtype=dtype)
        for arg, index, arr in (
            ("key_field", key_field, keys),
            ("size_field", size_field, t.sizes),
            ("time_field", time_field, t.times),
        ):
            field = _field(arg, index, dtype, integer=arg != "time_field")
            if field is not None and arr is not None:
                rec[field] = arr
        data = rec.tobytes()
    else:
        sep = delimiter if delimiter is not None else ("," if format == "csv" else " ")
        columns: list[tuple[str, np.ndarray]] = [("key", keys)]
        if t.sizes is not None:
            columns.append(("size", np.asarray(t.sizes)))
        if t.times is not None:
            columns.append(("time", np.asarray(t.times)))
        out = io.StringIO()
        if header:
            out.write(sep.join(name for name, _ in columns) + "\n")
        lists = [c.tolist() for _, c in columns]
        for row in zip(*lists):
            out.write(sep.join(str(v) for v in row) + "\n")
        data = out.getvalue().encode("utf-8")
    if _strip_zst(p.lower()) != p.lower():
        import zstandard

        data = zstandard.ZstdCompressor(level=level).compress(data)
    _files.write_bytes(p, data)


def oracle_general_bytes(trace: Any, sizes: Any = None) -> bytes:
    """A trace as libCacheSim ``oracleGeneral`` records: times are the trace's (when they fit
    uint32), else access indices;
    ``next_access`` the index of the key's next access (-1 if none), sizes as given, else
    the trace's own, else 1."""
    t = as_trace(trace)
    keys = t.native_keys()
    n = len(keys)
    records = np.zeros(n, dtype=ORACLE_GENERAL)
    times = t.times
    if (
        times is not None
        and len(times) == n
        and np.asarray(times).dtype.kind in "iu"
        and (n == 0 or (times.min() >= 0 and times.max() < 2**32))
    ):
        records["time"] = times
    else:
        records["time"] = np.arange(n, dtype=np.uint64).astype(np.uint32)
    records["id"] = keys.view(np.uint64)
    sizes = t.sizes if sizes is None else np.asarray(sizes)
    records["size"] = 1 if sizes is None else sizes
    nxt = t.next_use() if n else np.zeros(0, dtype=np.uint64)
    records["next_access"] = np.where(nxt == NEVER, -1, nxt.astype(np.int64))
    return records.tobytes()


__all__ = [
    "FORMATS",
    "STREAMED",
    "WRITABLE",
    "TraceFileError",
    "detect",
    "iter_chunks",
    "oracle_general_bytes",
    "read",
    "struct_dtype",
    "write",
]
