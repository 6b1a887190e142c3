"""``azure``: Azure LLM inference CSV logs (``TIMESTAMP, ContextTokens, GeneratedTokens``).

:func:`read_log` is the one reader of these files: the trace format below reads them as one
access per request (keys 0..n-1, the log names no objects; sizes the context tokens; times in
ns since the Unix epoch; ``fields["input_length"]``, ``fields["output_length"]``), and
:meth:`osbench.sched.Workload.from_requests` as jobs. A timestamp is a whole date and time
(``2023-11-16 18:15:46.6805900``) within numpy's nanosecond range (years 1678 to 2261), a
token count an integer >= 0: ``12``, ``NaT`` or ``-3`` are refused, naming the line.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Optional, Union

import numpy as np

from osbench.traces.formats._io import Source, fail, parse_int, quote, read_lines
from osbench.traces.formats.format import Format, Options
from osbench.traces.trace import Trace

COLUMNS = ("timestamp", "contexttokens", "generatedtokens")
"""The columns a log must name (in any order; case does not matter)."""

MEMORY_PER_BYTE = 8.0
"""Memory of a whole read per byte of the file (three parsed fields a line of about 40 bytes)."""

_STAMP = re.compile(r"(\d{4})-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?", re.ASCII)
_YEARS = range(1678, 2262)  # what datetime64[ns] holds


@dataclass(frozen=True)
class AzureLog:
    """The requests of an Azure log in file order: ``timestamp`` in ns since the Unix epoch,
    ``context`` (prompt) and ``generated`` (output) tokens, and the ``line`` each came from,
    int64 arrays."""

    timestamp: np.ndarray
    context: np.ndarray
    generated: np.ndarray
    line: np.ndarray


def is_azure_header(line: bytes) -> bool:
    names = [f.strip().lower() for f in line.decode("utf-8", "replace").split(",")]
    return all(c in names for c in COLUMNS)


def read_log(path: str, data: Union[bytes, Source, None] = None, *, limit: Optional[int] = None) -> AzureLog:
    """Read the requests of an Azure log (``data``: its bytes, or a :class:`~._io.Source` of it, if already open), the first
    ``limit`` only if given (then only as much of the file is read). A bad line raises
    :class:`~osbench.traces.TraceFileError` naming it and the column; so does a file without
    requests."""
    return read_lines(path, data, limit, MEMORY_PER_BYTE, lambda lines, n: _parse(path, lines, n))


def _timestamp(path: str, line_no: int, column: int, field: str) -> str:
    m = _STAMP.fullmatch(field)
    if m is None or int(m.group(1)) not in _YEARS:
        raise fail(
            path,
            f"line {line_no}, column {column + 1}",
            f"{quote(field)} is not a timestamp (a date and time such as 2023-11-16 18:15:46.68, years 1678 to 2261)",
        )
    stamp = field.replace(" ", "T")
    try:
        np.datetime64(stamp, "ns")
    except ValueError:
        raise fail(path, f"line {line_no}, column {column + 1}", f"{quote(field)} is not a timestamp") from None
    return stamp


def _count(path: str, line_no: int, column: int, field: str) -> int:
    value = parse_int(path, line_no, column, field)
    if not 0 <= value < 2**63:
        raise fail(
            path, f"line {line_no}, column {column + 1}", f"{quote(field)} is not a token count (an integer >= 0)"
        )
    return value


def _parse(path: str, lines: Iterator[tuple[int, int, str]], limit: Optional[int]) -> AzureLog:
    rows = ((no, line) for no, _, line in lines if line.strip())
    first = next(rows, None)
    names = [f.strip().lower() for f in first[1].split(",")] if first is not None else []
    if not all(c in names for c in COLUMNS):
        raise fail(path, "line 1", "not an Azure LLM log: the header must be TIMESTAMP,ContextTokens,GeneratedTokens")
    ti, ci, gi = (names.index(c) for c in COLUMNS)
    need = max(ti, ci, gi) + 1
    stamps: list[str] = []
    context: list[int] = []
    generated: list[int] = []
    line_nos: list[int] = []
    for line_no, line in rows:
        if limit is not None and len(stamps) >= limit:
            break
        fields = [f.strip() for f in line.split(",")]
        if len(fields) < need:
            raise fail(path, f"line {line_no}", f"{len(fields)} fields, expected {need}")
        stamps.append(_timestamp(path, line_no, ti, fields[ti]))
        context.append(_count(path, line_no, ci, fields[ci]))
        generated.append(_count(path, line_no, gi, fields[gi]))
        line_nos.append(line_no)
    if not stamps:
        raise fail(path, "line 2", "no records after the header")
    return AzureLog(
        np.array(stamps, dtype="datetime64[ns]").astype(np.int64),
        np.array(context, dtype=np.int64),
        np.array(generated, dtype=np.int64),
        np.array(line_nos, dtype=np.int64),
    )


def read(path: str, src: Source, options: Options) -> Trace:
    """One access per request, its size the prompt's tokens: a request of ``ContextTokens`` 0
    would be an object of size 0, and is refused."""
    log = _parse(path, src.lines(), None)
    empty = np.flatnonzero(log.context < 1)
    if empty.size:
        raise fail(
            path,
            f"line {log.line[empty[0]]}",
            "ContextTokens 0 is no size: read as a trace, a request is an object of its prompt's tokens (>= 1)",
        )
    return Trace(
        np.arange(len(log.context), dtype=np.int64),
        sizes=log.context,
        times=log.timestamp,
        fields={"input_length": log.context, "output_length": log.generated},
    )


FORMAT = Format(
    "azure",
    read,
    detect=lambda name, head: name.endswith(".csv") and is_azure_header(head.split(b"\n", 1)[0]),
    precedence=3,
    memory_per_byte=MEMORY_PER_BYTE,
)
