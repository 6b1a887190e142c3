"""Bytes in, for every format: one :class:`Source` per file (plain or zstd-compressed), read a
few bytes, a line or the whole at a time, with the limits that keep a damaged or hostile file
from exhausting memory; text lines and integers parsed strictly; and the one error every
reader raises, naming the file and where it went wrong.

Limits, all derived from the input:

- A trace is a regular file: a directory, a named pipe or a device is refused before it is
  opened (reading ``/dev/zero`` or a FIFO would never end).
- zstd data is checked frame by frame before it is decompressed (:func:`zstd_frames`): a
  truncated frame, bytes that are no frame, a reserved bit set are refused, naming the byte
  offset; skippable frames are skipped. Decompression then runs in bounded pieces, and data
  that grows beyond ``MAX_RATIO`` times the compressed size (and beyond ``BOMB_FLOOR``) is
  refused as a decompression bomb before it fills memory. Content checksums, which
  :func:`osbench.traces.write` always writes, are verified.
- A whole-file read is refused when it would need more memory than the machine has free
  (``memory_per_byte`` of the format times the data), before it starts where the size is
  known and as soon as it is exceeded otherwise.
- A line of text is at most ``MAX_LINE`` bytes: a longer one is refused, naming it, before it is
  decoded or split (one huge field would otherwise cost several copies of itself), and an
  error quotes at most ``QUOTE`` characters of a field (:func:`quote`).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from typing import Any, BinaryIO, Callable, Optional, TypeVar, Union

import numpy as np

from osbench import _checks
from osbench._optional import require
from osbench.errors import ArgumentError, TraceFileError

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"

PathLike = Union[str, "os.PathLike[str]"]

MAX_RATIO = 1024
"""Decompressed bytes per compressed byte above which zstd data is taken for a bomb (real traces
compress 3 to 10 times; a synthetic loop of keys some thousands of times, so the limit applies
only beyond ``BOMB_FLOOR``)."""

BOMB_FLOOR = 256 << 20
"""Decompressed bytes any zstd file may hold, however small it is."""

BLOCK = 1 << 20
"""Bytes read (or decompressed) at a time."""

MAX_LINE = 4 << 20
"""The longest line a text format may hold, in bytes (a Mooncake request of a million tokens
takes about 40 KB)."""

QUOTE = 40
"""Characters of a field an error message quotes at most."""

_SKIPPABLE = range(0x184D2A50, 0x184D2A60)
_ZSTD_FRAME = 0xFD2FB528
_MAX_BLOCK = 128 << 10

__all__ = ["TraceFileError"]


def fail(path: str, where: str, what: str) -> TraceFileError:
    """The error of a file that cannot be read: ``path: where: what``."""
    return TraceFileError(f"{path}: {where}: {what}")


def quote(field: str) -> str:
    """``repr(field)``, cut to its first ``QUOTE`` characters (and the length said) when longer."""
    if len(field) <= QUOTE:
        return repr(field)
    return f"{field[:QUOTE]!r}... ({len(field):,} characters)"


def strip_zst(name: str) -> str:
    for suffix in (".zst", ".zstd"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def is_zstd(f: BinaryIO, size: int) -> bool:
    """Whether the file holds zstd data: a zstd frame, or skippable frames followed by one (a
    plain file whose first four bytes merely look like a skippable frame's are plain)."""
    offset = 0
    while offset + 8 <= size:
        f.seek(offset)
        head = f.read(8)
        magic = int.from_bytes(head[:4], "little")
        if magic == _ZSTD_FRAME:
            return True
        if magic not in _SKIPPABLE:
            return False
        offset += 8 + int.from_bytes(head[4:8], "little")
    f.seek(offset)
    return offset < size and f.read(4) == ZSTD_MAGIC


def check_not_misnamed(path: str, head: bytes) -> None:
    """A file named ``.zst`` must hold zstd data."""
    if strip_zst(os.path.basename(path).lower()) != os.path.basename(path).lower():
        raise fail(
            path,
            "byte offset 0",
            f"named .zst but not zstd data (first bytes {head[:4].hex(' ')}, expected 28 b5 2f fd)",
        )


def open_regular(path: str) -> BinaryIO:
    """``path`` opened for reading, if it is a regular file: a FIFO would block, a device or a
    directory never end or not read (:func:`osbench.datasets.resolve` says which it is)."""
    if not stat.S_ISREG(os.stat(path).st_mode):
        raise TraceFileError(f"{path}: not a regular file: a trace is read from a regular file")
    return open(path, "rb")


def zstd_frames(f: BinaryIO, path: str, size: int) -> Optional[int]:
    """Walk the zstd frames of a file of ``size`` bytes by their headers (RFC 8878), without
    decompressing: every frame complete, nothing but frames. Returns the bytes the frames
    declare they hold, or None when a frame does not declare its size."""
    total: Optional[int] = 0
    offset = 0

    def truncated(at: int, start: int) -> TraceFileError:
        return fail(
            path, f"byte offset {at}", f"truncated zstd stream (the frame at byte offset {start} is incomplete)"
        )

    while offset < size:
        f.seek(offset)
        head = f.read(18)  # the longest frame header
        if len(head) < 4:
            raise truncated(size, offset)
        magic = int.from_bytes(head[:4], "little")
        if magic in _SKIPPABLE:
            if len(head) < 8:
                raise truncated(size, offset)
            offset += 8 + int.from_bytes(head[4:8], "little")
            if offset > size:
                raise truncated(size, offset)
            continue
        if magic != _ZSTD_FRAME:
            raise fail(path, f"zstd frame at byte offset {offset}", f"not a zstd frame (bytes {head[:4].hex(' ')})")
        if len(head) < 6:
            raise truncated(size, offset)
        descriptor = head[4]
        if descriptor & 0x08:
            raise fail(path, f"zstd frame at byte offset {offset}", "corrupt (a reserved bit of the header is set)")
        single = (descriptor >> 5) & 1
        fcs_bytes = (single, 2, 4, 8)[descriptor >> 6]
        header = 5 + (1 - single) + (0, 1, 2, 4)[descriptor & 3] + fcs_bytes
        if len(head) < header:
            raise truncated(size, offset)
        if fcs_bytes and total is not None:
            total += int.from_bytes(head[header - fcs_bytes : header], "little") + (256 if fcs_bytes == 2 else 0)
        else:
            total = None
        pos = offset + header
        while True:
            f.seek(pos)
            block = f.read(3)
            if len(block) < 3:
                raise truncated(size, offset)
            value = int.from_bytes(block, "little")
            kind, length = (value >> 1) & 3, value >> 3
            if kind == 3 or length > _MAX_BLOCK:
                raise fail(path, f"zstd frame at byte offset {offset}", f"corrupt (a bad block at byte offset {pos})")
            pos += 3 + (1 if kind == 1 else length)
            if pos > size:
                raise truncated(size, offset)
            if value & 1:
                break
        offset = pos + (4 if descriptor & 0x04 else 0)
        if offset > size:
            raise truncated(size, offset - 4)
    return total


class Source:
    """A trace file's bytes, decompressed if zstd, read in order: :meth:`peek`, :meth:`read`
    (exact sizes), :meth:`read_all`, :meth:`lines`. ``offset`` counts the (decompressed) bytes
    read. ``memory_per_byte``: the memory a whole read needs per byte of data, checked against
    the memory free (0: the caller reads in bounded pieces)."""

    def __init__(self, path: str, memory_per_byte: float = 0.0) -> None:
        self.path = path
        self.f = open_regular(path)
        try:
            self.size = os.fstat(self.f.fileno()).st_size
            if self.size == 0:
                raise fail(path, "byte offset 0", "the file is empty")
            head = self.f.read(4)
            self.f.seek(0)
            self.compressed = is_zstd(self.f, self.size)
            self.f.seek(0)
            self._z: Any = None
            declared: Optional[int] = self.size
            if self.compressed:
                zstandard = require("zstandard", "reading a zstd-compressed trace")
                declared = zstd_frames(self.f, path, self.size)
                self.f.seek(0)
                self._z = zstandard.ZstdDecompressor().stream_reader(self.f, read_size=BLOCK, read_across_frames=True)
                self.bomb: Optional[int] = max(BOMB_FLOOR, MAX_RATIO * self.size)
                if declared is not None and declared > self.bomb:
                    raise self._bomb(declared)
            else:
                check_not_misnamed(path, head)
                self.bomb = None
            self.offset = 0
            self._pending = b""
            self.memory_per_byte = memory_per_byte
            self._free = _checks.available_memory() if memory_per_byte else None
            if declared is not None:
                self._check_memory(declared)
        except BaseException:
            self.f.close()
            raise

    def __enter__(self) -> Source:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.f.close()

    def _bomb(self, n: int) -> TraceFileError:
        return fail(
            self.path,
            f"byte offset {self.size}",
            f"the zstd data decompresses to more than {n:,} bytes, over {MAX_RATIO} times its {self.size:,} "
            f"(and over {BOMB_FLOOR >> 20} MiB): refused as a decompression bomb; if the data is real, "
            "decompress it (zstd -d) and read the plain file",
        )

    def _check_memory(self, n: int) -> None:
        if self._free is not None and n * self.memory_per_byte > self._free:
            raise fail(
                self.path,
                f"byte offset {self.offset}",
                f"reading {n:,} bytes of it whole needs about {n * self.memory_per_byte / 2**30:.1f} GiB, "
                f"more than the {self._free / 2**30:.1f} GiB free: stream it (osbench.cache.replay reads npy, "
                "oracleGeneral and binary files in bounded memory) or read a part",
            )

    def _raw(self, n: int) -> bytes:
        """Up to ``n`` bytes of data from the file (fewer only at its end)."""
        if self._z is None:
            return self.f.read(n)
        zstandard = require("zstandard", "reading a zstd-compressed trace")
        try:
            out: bytes = self._z.read(n)
        except zstandard.ZstdError as exc:
            raise fail(
                self.path, f"decompressed byte offset {self.offset + len(self._pending)}", f"corrupt zstd data ({exc})"
            ) from None
        return out

    def read(self, n: int = -1, /) -> bytes:
        """Up to ``n`` bytes (all that is left if ``n`` < 0); fewer only at the end of the data."""
        if n < 0:
            return self.read_all()
        parts = [self._pending[:n]]
        self._pending = self._pending[n:]
        got = len(parts[0])
        while got < n:
            block = self._raw(min(n - got, BLOCK) if self._z is not None else n - got)
            if not block:
                break
            parts.append(block)
            got += len(block)
        out = b"".join(parts)
        self.offset += len(out)
        if self.bomb is not None and self.offset > self.bomb:
            raise self._bomb(self.offset)
        if self.memory_per_byte and self._z is not None:
            self._check_memory(self.offset)
        return out

    def peek(self, n: int) -> bytes:
        """The next ``n`` bytes (fewer at the end), left to be read."""
        data = self.read(n)
        self.offset -= len(data)
        self._pending = data + self._pending
        return data

    def read_all(self) -> bytes:
        """Every byte left (of a plain file, in one read: no second copy of the data)."""
        if self._z is None:
            self.f.seek(self.offset)  # the bytes peeked at are read again, in place
            out = self.f.read(max(self.size - self.offset, 0))  # one buffer of the size known
            out += self.f.read()  # a file that grew meanwhile
            self._pending = b""
            self.offset += len(out)
            return out
        parts: list[bytes] = []
        while True:
            block = self.read(BLOCK)
            if not block:
                return b"".join(parts)
            parts.append(block)

    def lines(self) -> Iterator[tuple[int, int, str]]:
        """(line number from 1, byte offset, text) of each line left, split on ``\\n`` only (a
        ``\\r`` before it dropped; ``str.splitlines`` would also split inside a JSON string at
        U+2028), decoded as UTF-8 strictly."""
        rest: list[bytes] = []
        held = 0  # bytes in rest
        line_no, start = 1, self.offset
        while True:
            block = self.read(BLOCK)
            if not block:
                if rest:
                    yield line_no, start, decode_line(self.path, b"".join(rest), start)
                return
            if b"\n" not in block:
                rest.append(block)
                held += len(block)
                if held > MAX_LINE:
                    raise too_long(self.path, line_no, start)
                continue
            pieces = (b"".join(rest) + block).split(b"\n")
            rest = [pieces.pop()]
            held = len(rest[0])
            for piece in pieces:
                if len(piece) > MAX_LINE:
                    raise too_long(self.path, line_no, start)
                yield line_no, start, decode_line(self.path, piece, start)
                line_no += 1
                start += len(piece) + 1


def decode_line(path: str, raw: bytes, offset: int) -> str:
    """One line's text (a trailing ``\\r`` dropped); invalid UTF-8 names the byte offset."""
    try:
        return raw.decode("utf-8").removesuffix("\r")
    except UnicodeDecodeError as exc:
        raise fail(path, f"byte offset {offset + exc.start}", "not UTF-8 text") from None


def too_long(path: str, line_no: int, offset: int) -> TraceFileError:
    return fail(
        path, f"line {line_no} (byte offset {offset})", f"longer than {MAX_LINE >> 20} MiB: not a line of a trace"
    )


def data_lines(path: str, data: bytes) -> Iterator[tuple[int, int, str]]:
    """:meth:`Source.lines` of bytes already read (each line's length checked before it is copied)."""
    start, line_no = 0, 1
    while start < len(data):
        end = data.find(b"\n", start)
        if end < 0:
            end = len(data)
        if end - start > MAX_LINE:
            raise too_long(path, line_no, start)
        yield line_no, start, decode_line(path, data[start:end], start)
        start, line_no = end + 1, line_no + 1


_Log = TypeVar("_Log")


def read_lines(
    path: str,
    data: Union[bytes, Source, None],
    limit: Optional[int],
    memory_per_byte: float,
    parse: Callable[[Iterator[tuple[int, int, str]], Optional[int]], _Log],
) -> _Log:
    """A request log's lines given to ``parse`` (with ``limit``, checked): from ``data``, its
    bytes or a :class:`Source` already open, or else from the file, in memory checked against
    ``memory_per_byte`` unless ``limit`` bounds the read. The one way in of the line readers
    (Azure, Mooncake, AIPerf)."""
    if limit is not None:
        limit = _checks.positive_int("limit", limit)
    if isinstance(data, Source):
        return parse(data.lines(), limit)
    if data is not None:
        return parse(data_lines(path, data), limit)
    with Source(path, 0.0 if limit is not None else memory_per_byte) as src:
        return parse(src.lines(), limit)


def load(path: str, memory_per_byte: float = 2.0) -> bytes:
    """The file's bytes, decompressed if zstd, within the limits of :class:`Source`."""
    with Source(path, memory_per_byte) as src:
        return src.read_all()


_INT64_MIN, _UINT64_END = -(2**63), 2**64


def parse_int(path: str, line_no: int, column: int, field: str) -> int:
    """A decimal integer in ASCII digits with an optional sign, within [-2**63, 2**64):
    ``int()`` alone would also take ``1_000`` and other scripts' digits."""
    try:
        if not field.isascii() or "_" in field:
            raise ValueError
        value = int(field)
    except ValueError:
        raise fail(path, f"line {line_no}, column {column + 1}", f"{quote(field)} is not an integer") from None
    if not _INT64_MIN <= value < _UINT64_END:
        raise fail(path, f"line {line_no}, column {column + 1}", f"{quote(field)} is outside the 64-bit range")
    return value


def int_array(path: str, values: list[int], what: str) -> np.ndarray:
    """Integers (each within the 64-bit range) as int64, or uint64 when they need it."""
    try:
        arr = _checks.integers_of(what, values)
    except ArgumentError:
        raise fail(
            path, what, "integers outside the 64-bit range: negative ones beside ones of 2**63 or more"
        ) from None
    assert arr is not None
    return arr


def fitting(name: str, values: Any, dtype: np.dtype) -> np.ndarray:
    """``values`` as a field of ``dtype`` holds them exactly: a value it would change (a size
    of 2**33 in a uint32 field, -1 in an unsigned one, 2**53 + 1 in a float) is refused, not
    stored changed."""
    arr = np.asarray(values)
    if not arr.size:
        return arr
    if dtype.kind in "iu":
        if arr.dtype.kind not in "iu":
            raise ArgumentError(f"{name} is not accepted: the field holds integers ({dtype}), got dtype {arr.dtype}")
        info = np.iinfo(dtype)
        lo, hi = int(arr.min()), int(arr.max())
        if lo < info.min or hi > info.max:
            raise ArgumentError(
                f"{name} is not accepted: {lo if lo < info.min else hi} does not fit the field's "
                f"{dtype.name} ({info.min}..{info.max})"
            )
        return arr
    with np.errstate(all="ignore"):
        same = arr.astype(dtype).astype(arr.dtype) == arr
    if not np.all(same):
        i = int(np.argmin(same))
        raise ArgumentError(f"{name} is not accepted: {arr[i]!r} at index {i} does not fit the field's {dtype} exactly")
    return arr


def native_order(records: np.ndarray, field: Optional[str]) -> Optional[np.ndarray]:
    """One field of structured records as an array of its own: contiguous, aligned and in the
    machine's byte order (None for no field). A field of one record is a contiguous view that
    may be misaligned (oracleGeneral's id lies at byte 4), so alignment is asked for too."""
    if field is None:
        return None
    a = records[field]
    return np.require(a, dtype=a.dtype.newbyteorder("="), requirements=["C", "A"])
