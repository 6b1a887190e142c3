"""AIPerf's per-request export (``profile_export.jsonl``) as a measured run: the sends to replay
and what each request measured.

:func:`read_aiperf` keeps the profiling phase's answered requests
(:mod:`osbench.traces.formats.aiperf` reads the file): their send times as the arrivals of
:class:`~osbench.serve.Requests` (``simulate(run.requests, ...)`` replays what the clients
really sent, with no model of the clients), their lengths, and the TTFT and TPOT each
measured; :func:`osbench.serve.fit.aiperf_points` groups them into the points
:func:`osbench.serve.fit.fit` fits on (``source="aiperf"``). ``Requests.read(path)`` reads the
same file as requests alone.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Union

import numpy as np

from osbench.errors import ArgumentTypeError
from osbench.serve.readers import aiperf_columns
from osbench.serve.requests import Requests
from osbench.traces.formats import aiperf


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


def _peak_in_flight(start: np.ndarray, end: np.ndarray) -> int:
    """The most intervals ``[start, end)`` holding one instant (an answer before a send at the
    same nanosecond)."""
    times = np.concatenate([end, start])
    steps = np.concatenate([-np.ones(len(end), dtype=np.int64), np.ones(len(start), dtype=np.int64)])
    order = np.lexsort((steps, times))
    return int(np.cumsum(steps[order]).max())


def read_aiperf(path: Union[str, os.PathLike[str]]) -> AIPerfRun:
    """The profiling phase of AIPerf's per-request export at ``path``
    (``artifacts/<run>/profile_export.jsonl``, plain or zstd): every answered request's send
    time, lengths, TTFT and inter-token latency, in the order they were sent; the warm-up
    phase's, failed and cancelled records are counted in ``skipped`` and left out. A line that
    is not such a record, or a file without one answered profiling request, raises
    :class:`~osbench.errors.TraceFileError` naming the file and the line."""
    if not isinstance(path, (str, os.PathLike)):
        raise ArgumentTypeError(f"path={path!r:.60} is not accepted: a path to AIPerf's profile_export.jsonl")
    name = os.fspath(path)
    log = aiperf.read_log(name)
    # Ordered and checked as Requests.read orders and checks any log (a refusal names the line).
    requests, order = Requests.of_log(aiperf_columns(log, Path(name).name, name), 1e9)
    ttft, tpot = np.array(log.ttft)[order], np.array(log.itl)[order]
    start, end = np.array(log.start, dtype=np.int64), np.array(log.end, dtype=np.int64)
    return AIPerfRun(requests, ttft, tpot, _peak_in_flight(start, end), log.skipped)


__all__ = ["AIPerfRun", "read_aiperf"]
