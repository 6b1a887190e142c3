"""Bytes in, for every format: whole files (zstd-compressed or not), exact-size streaming reads,
text lines, and the one error every reader raises, naming the file and where it went wrong."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any, BinaryIO, Optional, Union

import numpy as np

from osbench.errors import OsbenchError

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"

PathLike = Union[str, "os.PathLike[str]"]


class TraceFileError(OsbenchError, ValueError):
    """A trace file that cannot be read. The message names the file and where it went wrong
    (a byte offset or a line number)."""


def fail(path: str, where: str, what: str) -> TraceFileError:
    return TraceFileError(f"{path}: {where}: {what}")


def strip_zst(name: str) -> str:
    for suffix in (".zst", ".zstd"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def check_not_misnamed(path: str, head: bytes) -> None:
    """A file named ``.zst`` must hold zstd data."""
    if strip_zst(os.path.basename(path).lower()) != os.path.basename(path).lower():
        raise fail(
            path,
            "byte offset 0",
            f"named .zst but not zstd data (first bytes {head[:4].hex(' ')}, expected 28 b5 2f fd)",
        )


def _decompress(path: str, data: bytes) -> bytes:
    """Every zstd frame of ``data``, decompressed; a truncated or corrupt stream is an error."""
    try:
        import zstandard
    except ImportError:  # pragma: no cover - zstandard is a dependency
        raise fail(path, "byte offset 0", "zstd-compressed, but the zstandard package is not installed") from None
    out = []
    offset = 0
    while offset < len(data):
        d = zstandard.ZstdDecompressor().decompressobj()
        try:
            out.append(d.decompress(data[offset:]))
        except zstandard.ZstdError as exc:
            raise fail(path, f"zstd frame at byte offset {offset}", f"corrupt ({exc})") from None
        if not d.eof:
            raise fail(
                path,
                f"byte offset {len(data)}",
                f"truncated zstd stream (the frame at byte offset {offset} is incomplete)",
            )
        offset = len(data) - len(d.unused_data)
    return b"".join(out)


def load(path: str) -> bytes:
    """The file's bytes, decompressed if zstd."""
    with open(path, "rb") as f:
        data = f.read()
    if not data:
        raise fail(path, "byte offset 0", "the file is empty")
    if data[:4] == ZSTD_MAGIC:
        data = _decompress(path, data)
        if not data:
            raise fail(path, "byte offset 0", "the file decompresses to nothing")
        return data
    check_not_misnamed(path, data)
    return data


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
                raise fail(path, f"zstd frame at byte offset {frame_start}", f"corrupt ({exc})") from None
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
        raise fail(
            path,
            f"byte offset {offset}",
            f"truncated zstd stream (the frame at byte offset {frame_start} is incomplete)",
        )


class Reader:
    """Exact-size reads from a plain or zstd file, counting the (decompressed) offset."""

    def __init__(self, f: BinaryIO, path: str, compressed: bool) -> None:
        self.path = path
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

    def rewind_to(self, offset: int, head: bytes) -> None:
        """After reading ``head`` (the first bytes), go back to ``offset`` within it."""
        if self.blocks is None:
            self.f.seek(offset)
        else:
            self.buf[:0] = head[offset:]
        self.offset = offset


def decode_lines(path: str, data: bytes) -> list[str]:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise fail(path, f"byte offset {exc.start}", "not UTF-8 text") from None
    return text.splitlines()


def parse_int(path: str, line_no: int, column: int, field: str) -> int:
    try:
        return int(field)
    except ValueError:
        raise fail(path, f"line {line_no}, column {column + 1}", f"{field!r} is not an integer") from None


def int_array(path: str, values: list[int], what: str) -> np.ndarray:
    """Integers as int64, or uint64 when they need it; beyond both, an error."""
    if not values:
        return np.zeros(0, dtype=np.int64)
    lo, hi = min(values), max(values)
    if lo >= -(2**63) and hi < 2**63:
        return np.array(values, dtype=np.int64)
    if lo >= 0 and hi < 2**64:
        return np.array(values, dtype=np.uint64)
    raise fail(path, what, "integers outside the 64-bit range")


def check_records(path: str, data: bytes, itemsize: int, what: str) -> None:
    if len(data) % itemsize:
        whole = len(data) - len(data) % itemsize
        raise fail(
            path,
            f"byte offset {whole}",
            f"truncated record: {len(data)} bytes is not a whole number of {itemsize}-byte {what} records",
        )


def native_order(records: np.ndarray, field: Optional[str]) -> Optional[np.ndarray]:
    """One field of structured records in the machine's byte order (None for no field)."""
    if field is None:
        return None
    a = records[field]
    return a.astype(a.dtype.newbyteorder("="))
