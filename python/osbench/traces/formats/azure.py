"""``azure``: Azure LLM inference CSV logs (``TIMESTAMP, ContextTokens, GeneratedTokens``).

:func:`read_log` is the one reader of these files: the trace format below reads them as one
access per request (keys 0..n-1, the log names no objects; sizes the context tokens; times in
ns since the Unix epoch; ``fields["input_length"]``, ``fields["output_length"]``), and
:meth:`osbench.sched.Workload.from_requests` as jobs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from osbench import _checks
from osbench.traces.formats._io import decode_lines, fail, load, parse_int
from osbench.traces.formats.format import Format, Options
from osbench.traces.trace import Trace

COLUMNS = ("timestamp", "contexttokens", "generatedtokens")
"""The columns a log must name (in any order; case does not matter)."""


@dataclass(frozen=True)
class AzureLog:
    """The requests of an Azure log in file order: ``timestamp`` in ns since the Unix epoch,
    ``context`` (prompt) and ``generated`` (output) tokens, int64 arrays."""

    timestamp: np.ndarray
    context: np.ndarray
    generated: np.ndarray


def is_azure_header(line: bytes) -> bool:
    names = [f.strip().lower() for f in line.decode("utf-8", "replace").split(",")]
    return all(c in names for c in COLUMNS)


def read_log(path: str, data: Optional[bytes] = None, *, limit: Optional[int] = None) -> AzureLog:
    """Read the requests of an Azure log (``data``: its bytes, if already read), the first
    ``limit`` only if given. A bad line raises :class:`~osbench.traces.TraceFileError` naming
    it and the column; so does a file without requests."""
    if limit is not None:
        limit = _checks.positive_int("limit", limit)
    if data is None:
        data = load(path)
    rows = [(i + 1, line) for i, line in enumerate(decode_lines(path, data)) if line.strip()]
    names = [f.strip().lower() for f in rows[0][1].split(",")] if rows else []
    if not all(c in names for c in COLUMNS):
        raise fail(path, "line 1", "not an Azure LLM log: the header must be TIMESTAMP,ContextTokens,GeneratedTokens")
    if len(rows) == 1:
        raise fail(path, "line 2", "no records after the header")
    ti, ci, gi = (names.index(c) for c in COLUMNS)
    need = max(ti, ci, gi) + 1
    stamps: list[str] = []
    context: list[int] = []
    generated: list[int] = []
    for line_no, line in rows[1:]:
        if limit is not None and len(stamps) >= limit:
            break
        fields = [f.strip() for f in line.split(",")]
        if len(fields) < need:
            raise fail(path, f"line {line_no}", f"{len(fields)} fields, expected {need}")
        stamp = fields[ti].replace(" ", "T")
        try:
            np.datetime64(stamp, "ns")
        except ValueError:
            raise fail(path, f"line {line_no}, column {ti + 1}", f"{fields[ti]!r} is not a timestamp") from None
        stamps.append(stamp)
        context.append(parse_int(path, line_no, ci, fields[ci]))
        generated.append(parse_int(path, line_no, gi, fields[gi]))
    return AzureLog(
        np.array(stamps, dtype="datetime64[ns]").astype(np.int64),
        np.array(context, dtype=np.int64),
        np.array(generated, dtype=np.int64),
    )


def read(path: str, data: bytes, options: Options) -> Trace:
    log = read_log(path, data)
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
)
