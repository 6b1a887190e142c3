"""``aiperf``: AIPerf's per-request export, ``profile_export.jsonl`` (``aiperf profile``, the
benchmark AIConfigurator's generator writes), as a request log.

One JSON object per request (AIPerf's ``MetricRecordInfo``,
``docs/tutorials/working-with-profile-exports.md`` in ai-dynamo/aiperf): ``metadata`` with the
epoch nanoseconds the request was sent and answered (``request_start_ns``,
``request_end_ns``) and its ``benchmark_phase`` (``warmup`` or ``profiling``); ``metrics`` of
``{"value": ..., "unit": ...}`` (``input_sequence_length`` and ``output_sequence_length`` in
tokens, ``time_to_first_token`` and ``inter_token_latency`` in ms); ``error``, null when it
was answered.

:func:`read_log` is the one reader of these files: :meth:`osbench.serve.Requests.read` takes
them as requests (the sends as arrivals), :func:`osbench.serve.aiperf.read_aiperf` as a
measured run, :meth:`osbench.sched.Workload.from_requests` as jobs. Only the profiling phase's
answered requests are kept; the warm-up phase's, failed and cancelled records are counted and
left out. Every refusal names the file and the line.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Optional, Union

from osbench.traces.formats._io import Source, fail, read_lines

PHASE = "profiling"
"""The phase whose requests a log keeps (AIPerf measures it; ``warmup`` it does not)."""

MEMORY_PER_BYTE = 1.0
"""Memory of a read per byte of the file, at most: the file is read line by line and a record
keeps seven numbers (about 300 bytes as Python objects) of its line's 600 to 1,000."""

UNITS = {
    "input_sequence_length": "tokens",
    "output_sequence_length": "tokens",
    "time_to_first_token": "ms",
    "inter_token_latency": "ms",
}
"""The metrics a record is read for, and the unit each must be in."""


@dataclass
class AIPerfLog:
    """The profiling phase's answered requests in file order, one entry per request in each
    list: sent and answered (epoch ns), prompt and output tokens, the measured TTFT and
    inter-token latency (seconds; nan with one output token), and the line each came from."""

    start: list[int] = field(default_factory=list)
    end: list[int] = field(default_factory=list)
    input_length: list[int] = field(default_factory=list)
    output_length: list[int] = field(default_factory=list)
    ttft: list[float] = field(default_factory=list)
    itl: list[float] = field(default_factory=list)
    line: list[int] = field(default_factory=list)
    skipped: int = 0
    """Records left out: the warm-up phase's, failed and cancelled ones."""

    def __len__(self) -> int:
        return len(self.start)


def is_aiperf(first_line: bytes) -> bool:
    """Whether a JSON-lines file's first line is an AIPerf record (a ``metadata`` object with
    AIPerf's send time), not a Mooncake request."""
    return first_line.lstrip().startswith(b"{") and b'"metadata"' in first_line and b'"request_start_ns"' in first_line


def read_log(path: str, data: Union[bytes, Source, None] = None, *, limit: Optional[int] = None) -> AIPerfLog:
    """Read the profiling phase's answered requests of an AIPerf export (``data``: its bytes,
    or a :class:`~._io.Source` of it, if already open), the first ``limit`` only if given. A
    line that is not an AIPerf record raises :class:`~osbench.traces.TraceFileError` naming
    it; so does a file without one answered profiling request."""
    return read_lines(path, data, limit, MEMORY_PER_BYTE, lambda lines, n: _parse(path, lines, n))


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number")


def _metric(metrics: dict[str, Any], name: str, required: bool) -> float:
    """``metrics[name]["value"]`` in its unit (:data:`UNITS`); nan when absent and not required."""
    entry = metrics.get(name)
    if entry is None and not required:
        return math.nan
    if not isinstance(entry, dict) or "value" not in entry:
        raise KeyError(f"metrics.{name}")
    value, unit = entry["value"], entry.get("unit")
    if unit != UNITS[name]:
        raise ValueError(f"metrics.{name} is in {unit!r}, not {UNITS[name]!r}")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise ValueError(f"metrics.{name} must be a finite number >= 0, not {value!r:.40}")
    return float(value)


def _ns(metadata: dict[str, Any], name: str) -> int:
    value = metadata.get(name)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**63:
        raise ValueError(f"metadata.{name} must be epoch nanoseconds (an integer >= 0), not {value!r:.40}")
    return value


def _record(line: str) -> Optional[tuple[int, int, int, int, float, float]]:
    """One line: (sent ns, answered ns, ISL, OSL, TTFT s, ITL s), or None for a record of
    another phase, failed or cancelled. ValueError, KeyError, TypeError or RecursionError say
    why the line is not a record."""
    rec = json.loads(line, parse_constant=_no_constant)
    if not isinstance(rec, dict) or not isinstance(rec.get("metadata"), dict):
        raise TypeError("a record is a JSON object with a metadata object")
    meta = rec["metadata"]
    if meta.get("benchmark_phase", PHASE) != PHASE or rec.get("error") is not None or meta.get("was_cancelled"):
        return None
    metrics = rec.get("metrics")
    if not isinstance(metrics, dict):
        raise TypeError("an answered request has a metrics object")
    start, end = _ns(meta, "request_start_ns"), _ns(meta, "request_end_ns")
    if end < start:
        raise ValueError(f"metadata.request_end_ns ({end}) is before request_start_ns ({start})")
    lengths = []
    for name in ("input_sequence_length", "output_sequence_length"):
        n = _metric(metrics, name, True)
        if not (n.is_integer() and 1 <= n < 2**63):
            raise ValueError(f"metrics.{name} must be a whole number of tokens >= 1, not {n!r}")
        lengths.append(int(n))
    ttft = _metric(metrics, "time_to_first_token", True) / 1e3
    itl = _metric(metrics, "inter_token_latency", lengths[1] > 1) / 1e3
    return start, end, lengths[0], lengths[1], ttft, itl


def _parse(path: str, lines: Iterator[tuple[int, int, str]], limit: Optional[int]) -> AIPerfLog:
    log = AIPerfLog()
    last = 1
    for line_no, _, line in lines:
        if limit is not None and len(log) >= limit:
            break
        if not line.strip():
            continue
        last = line_no
        try:
            row = _record(line)
        except (ValueError, KeyError, TypeError, RecursionError) as exc:
            reason = "nested too deeply" if isinstance(exc, RecursionError) else f"{type(exc).__name__}: {exc}"
            raise fail(path, f"line {line_no}", f"not an AIPerf request record ({reason})") from None
        if row is None:
            log.skipped += 1
            continue
        start, end, isl, osl, ttft, itl = row
        log.start.append(start)
        log.end.append(end)
        log.input_length.append(isl)
        log.output_length.append(osl)
        log.ttft.append(ttft)
        log.itl.append(itl)
        log.line.append(line_no)
    if not len(log):
        raise fail(path, f"line {last}", f"no answered request of the {PHASE} phase")
    return log


__all__ = ["MEMORY_PER_BYTE", "PHASE", "UNITS", "AIPerfLog", "is_aiperf", "read_log"]
