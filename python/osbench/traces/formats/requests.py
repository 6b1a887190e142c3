"""LLM request logs of any kind (Mooncake JSON lines, Azure CSV, AIPerf's per-request export)
as one table of requests: what a scheduler or a serving engine needs of them. The readers are
the formats' own."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from osbench import _checks
from osbench.traces.formats import aiperf, azure, mooncake
from osbench.traces.formats._io import Source, fail


@dataclass(frozen=True)
class RequestLog:
    """Requests in file order: prompt (``input_length``) and output tokens, float arrays, and
    ``seconds``, each request's time in seconds from an origin of the log's (Mooncake: its
    timestamps' zero; Azure: the first request; AIPerf: the first send)."""

    input_length: np.ndarray
    output_length: np.ndarray
    seconds: np.ndarray

    def __len__(self) -> int:
        return len(self.seconds)


def log_format(path: str, head: bytes) -> str:
    """``"mooncake"``, ``"aiperf"`` or ``"azure"``: which request log a file is, told by its
    first bytes; anything else is refused, naming what was found."""
    first = head.split(b"\n", 1)[0]
    if head.lstrip().startswith(b"{"):
        record = head.lstrip().split(b"\n", 1)[0]  # the first line that is not blank
        return "aiperf" if aiperf.is_aiperf(record) else "mooncake"
    if azure.is_azure_header(first):
        return "azure"
    raise fail(
        path,
        "line 1",
        "not a request log osbench reads: expected JSON lines (Mooncake, or AIPerf's profile_export.jsonl) "
        f"or a CSV with TIMESTAMP, ContextTokens, GeneratedTokens (Azure); the first line starts {first[:60]!r}",
    )


def read_request_log(path: str, limit: Optional[int] = None) -> RequestLog:
    """The requests of a Mooncake, AIPerf or Azure log (told apart by their content), the first
    ``limit`` only if given (then only as much of the file is read). Anything else is
    refused, naming what was found."""
    if limit is not None:
        limit = _checks.positive_int("limit", limit)
    memory = max(mooncake.MEMORY_PER_BYTE, azure.MEMORY_PER_BYTE, aiperf.MEMORY_PER_BYTE)
    with Source(path, 0.0 if limit is not None else memory) as src:
        kind = log_format(path, src.peek(4096))
        if kind == "aiperf":
            p = aiperf.read_log(path, src, limit=limit)
            sent = np.array(p.start, dtype=np.int64)
            return RequestLog(
                np.array(p.input_length, dtype=float),
                np.array(p.output_length, dtype=float),
                ((sent - sent.min()) / 1e9).astype(float),
            )
        if kind == "mooncake":
            m = mooncake.read_log(path, src, limit=limit, require=("timestamp", "input_length", "output_length"))
            return RequestLog(
                np.array(m.input_length, dtype=float),
                np.array(m.output_length, dtype=float),
                np.array([float(stamp) / 1000.0 for stamp in m.timestamp], dtype=float),
            )
        a = azure.read_log(path, src, limit=limit)
    ns = a.timestamp
    seconds = (ns - ns.min()) / 1e9 if len(ns) else np.zeros(0)
    return RequestLog(a.context.astype(float), a.generated.astype(float), np.asarray(seconds, dtype=float))


__all__ = ["RequestLog", "log_format", "read_request_log"]
