"""AIPerf's per-request export (``profile_export.jsonl``): a measured run to replay and fit on.

AIPerf (``aiperf profile``, the benchmark AIConfigurator's generator writes) records one JSON
object per request: ``metadata`` with the epoch nanoseconds it was sent and answered
(``request_start_ns``, ``request_end_ns``) and its ``benchmark_phase`` (``warmup`` or
``profiling``), ``metrics`` of ``{"value": ..., "unit": ...}`` (``input_sequence_length`` and
``output_sequence_length`` in tokens, ``time_to_first_token`` and ``inter_token_latency`` in
ms), and ``error`` (null when it succeeded). The format is AIPerf's ``MetricRecordInfo``
(``docs/tutorials/working-with-profile-exports.md`` in ai-dynamo/aiperf).

:func:`read_aiperf` keeps the profiling phase's answered requests: their send times as the
arrivals of :class:`~osbench.serve.Requests` (``simulate(run.requests, ...)`` replays what the
clients really sent, with no model of the clients), their lengths, and the TTFT and TPOT each
measured; :func:`osbench.serve.fit.aiperf_points` groups them into the points
:func:`osbench.serve.fit.fit` fits on (``source="aiperf"``). Every refusal names the file and
the line.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from typing import Any, Union

import numpy as np

from osbench.errors import ArgumentTypeError
from osbench.serve.columns import MAX_TOKENS
from osbench.serve.requests import Requests
from osbench.traces.formats._io import Source, fail

PHASE = "profiling"
"""The phase whose requests a run keeps (AIPerf measures it; ``warmup`` it does not)."""

MEMORY_PER_BYTE = 1.0
"""Memory of a read per byte of the file, at most: the file is read line by line and a record
keeps six numbers (about 250 bytes as Python objects) of its line's 600 to 1,000."""

_UNITS = {
    "input_sequence_length": "tokens",
    "output_sequence_length": "tokens",
    "time_to_first_token": "ms",
    "inter_token_latency": "ms",
}


@dataclass(frozen=True)
class AIPerfRun:
    """The answered requests of an AIPerf run's profiling phase, in the order they were sent."""

    requests: Requests
    """Arrivals: seconds from the first send; prompt and output lengths as AIPerf counted them."""
    ttft: np.ndarray
    """Each request's measured time to first token, seconds."""
    tpot: np.ndarray
    """Each request's measured inter-token latency, seconds (nan with one output token)."""
    concurrency: int
    """The most requests in flight at once (from the send and answer times)."""
    skipped: int
    """Records left out: the warm-up phase's, failed and cancelled ones."""


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number")


def _metric(metrics: dict[str, Any], name: str, required: bool) -> float:
    """``metrics[name]["value"]`` in its expected unit; nan when absent and not required."""
    entry = metrics.get(name)
    if entry is None and not required:
        return math.nan
    if not isinstance(entry, dict) or "value" not in entry:
        raise KeyError(f"metrics.{name}")
    value, unit = entry["value"], entry.get("unit")
    if unit != _UNITS[name]:
        raise ValueError(f"metrics.{name} is in {unit!r}, not {_UNITS[name]!r}")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise ValueError(f"metrics.{name} must be a finite number >= 0, not {value!r:.40}")
    return float(value)


def _ns(metadata: dict[str, Any], name: str) -> int:
    value = metadata.get(name)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**63:
        raise ValueError(f"metadata.{name} must be epoch nanoseconds (an integer >= 0), not {value!r:.40}")
    return value


def _record(line: str) -> tuple[bool, int, int, int, int, float, float]:
    """One line: (kept, start ns, end ns, ISL, OSL, TTFT s, ITL s); a record of another phase,
    failed or cancelled is not kept. ValueError, KeyError, TypeError or RecursionError say why
    the line is not a record."""
    rec = json.loads(line, parse_constant=_no_constant)
    if not isinstance(rec, dict) or not isinstance(rec.get("metadata"), dict):
        raise TypeError("a record is a JSON object with a metadata object")
    meta = rec["metadata"]
    phase = meta.get("benchmark_phase", PHASE)
    if phase != PHASE or rec.get("error") is not None or meta.get("was_cancelled"):
        return False, 0, 0, 0, 0, math.nan, math.nan
    metrics = rec.get("metrics")
    if not isinstance(metrics, dict):
        raise TypeError("an answered request has a metrics object")
    start, end = _ns(meta, "request_start_ns"), _ns(meta, "request_end_ns")
    if end < start:
        raise ValueError(f"metadata.request_end_ns ({end}) is before request_start_ns ({start})")
    lengths = []
    for name in ("input_sequence_length", "output_sequence_length"):
        n = _metric(metrics, name, True)
        if not (n.is_integer() and 1 <= n <= MAX_TOKENS):
            raise ValueError(f"metrics.{name} must be a whole number of tokens from 1 to {MAX_TOKENS:,}, not {n!r}")
        lengths.append(int(n))
    ttft = _metric(metrics, "time_to_first_token", True) / 1e3
    itl = _metric(metrics, "inter_token_latency", lengths[1] > 1) / 1e3
    return True, start, end, lengths[0], lengths[1], ttft, itl


def _peak_in_flight(start: np.ndarray, end: np.ndarray) -> int:
    """The most intervals ``[start, end)`` holding one instant (an answer before a send at the
    same nanosecond)."""
    times = np.concatenate([end, start])
    steps = np.concatenate([-np.ones(len(end), dtype=np.int64), np.ones(len(start), dtype=np.int64)])
    order = np.lexsort((steps, times))
    return int(np.cumsum(steps[order]).max())


def read_aiperf(path: Union[str, os.PathLike[str]]) -> AIPerfRun:
    """The profiling phase of AIPerf's per-request export at ``path``
    (``artifacts/<run>/profile_export.jsonl``): every answered request's send time, lengths,
    TTFT and inter-token latency, in the order they were sent; the warm-up phase's, failed and
    cancelled records are counted in ``skipped`` and left out. A line that is not such a
    record, or a file without one answered profiling request, raises
    :class:`~osbench.errors.TraceFileError` naming the file and the line."""
    if not isinstance(path, (str, os.PathLike)):
        raise ArgumentTypeError(f"path={path!r:.60} is not accepted: a path to AIPerf's profile_export.jsonl")
    name = os.fspath(path)
    rows, skipped, lines = [], 0, 0
    with Source(name, MEMORY_PER_BYTE) as src:
        for line_no, _, line in src.lines():
            if not line.strip():
                continue
            lines = line_no
            try:
                kept, *row = _record(line)
            except (ValueError, KeyError, TypeError, RecursionError) as exc:
                reason = "nested too deeply" if isinstance(exc, RecursionError) else f"{type(exc).__name__}: {exc}"
                raise fail(name, f"line {line_no}", f"not an AIPerf request record ({reason})") from None
            if kept:
                rows.append(row)
            else:
                skipped += 1
    if not rows:
        raise fail(name, f"line {max(lines, 1)}", f"no answered request of the {PHASE} phase")
    start, end, isl, osl = (np.array([r[k] for r in rows], dtype=np.int64) for k in range(4))
    ttft, itl = (np.array([r[k] for r in rows], dtype=np.float64) for k in (4, 5))
    order = np.argsort(start, kind="stable")
    first = int(start[order[0]])
    arrival = (start[order] - first) / 1e9
    requests = Requests(arrival, isl[order], osl[order])
    return AIPerfRun(requests, ttft[order], itl[order], _peak_in_flight(start, end), skipped)


__all__ = ["PHASE", "AIPerfRun", "read_aiperf"]
