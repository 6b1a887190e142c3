"""Trace files in and out: :func:`read` (with format detection), :func:`iter_chunks` (bounded
memory) and :func:`write`; one module per format, found through one registry.

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
  request index of each access is ``trace.fields["request"]``. (For whole requests, see
  :func:`osbench.radix.mooncake`.)
- ``azure``: Azure LLM inference CSV logs (``TIMESTAMP, ContextTokens, GeneratedTokens``):
  one access per request, keys 0..n-1 (the log names no objects), sizes the context tokens,
  times in ns since the Unix epoch; ``fields["input_length"]``, ``fields["output_length"]``.

Any of these may be zstd-compressed (detected by its magic bytes; written when the path
ends in ``.zst``, with a content checksum). A file that cannot be read raises
:class:`TraceFileError` naming the file and the byte offset or line: never a crash, never a
silently partial trace; :mod:`._io` says which limits keep a damaged or hostile file from
exhausting memory or time.
"""

from osbench.traces.formats._io import TraceFileError
from osbench.traces.formats.binary import struct_dtype
from osbench.traces.formats.format import Format, Layout, Options
from osbench.traces.formats.mooncake import MOONCAKE_BLOCK_TOKENS
from osbench.traces.formats.oracle import ORACLE_GENERAL, oracle_general_bytes
from osbench.traces.formats.registry import (
    FORMATS,
    MAX_CHUNK,
    REGISTRY,
    STREAMED,
    WRITABLE,
    Piece,
    compress,
    detect,
    file_pieces,
    iter_chunks,
    read,
    read_oracle_general,
    write,
    write_oracle_general,
)
from osbench.traces.formats.requests import RequestLog, read_request_log

__all__ = [
    "FORMATS",
    "MAX_CHUNK",
    "MOONCAKE_BLOCK_TOKENS",
    "ORACLE_GENERAL",
    "REGISTRY",
    "STREAMED",
    "WRITABLE",
    "Format",
    "Layout",
    "Options",
    "Piece",
    "RequestLog",
    "TraceFileError",
    "compress",
    "detect",
    "file_pieces",
    "iter_chunks",
    "oracle_general_bytes",
    "read",
    "read_oracle_general",
    "read_request_log",
    "struct_dtype",
    "write",
    "write_oracle_general",
]
