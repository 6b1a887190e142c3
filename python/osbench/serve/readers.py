"""Requests from real LLM request logs, by file path or dataset name.

Two formats, parsed by :func:`osbench.traces.read` (which detects them):

- Azure LLM inference traces (``TIMESTAMP, ContextTokens, GeneratedTokens``): prompt and
  output lengths; no prompt content, so no prefix can be shared.
- Mooncake traces (JSON lines with ``timestamp`` in ms, ``input_length``, ``output_length``,
  ``hash_ids``): the ``hash_ids`` are the prompt content, one id per 512-token block,
  prefix-chained (equal ids mean equal prefixes), so prefix caching is real.

Arrivals become seconds from the first request; requests are put in arrival order (a stable
sort: the logs are in order already, and ties keep their file order).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional, Union

import numpy as np

from osbench import datasets, traces
from osbench.errors import ArgumentError
from osbench.serve.requests import Requests
from osbench.traces import formats
from osbench.traces.formats import MOONCAKE_BLOCK_TOKENS

FORMATS: tuple[str, ...] = ("azure", "mooncake")
"""The request-log formats :func:`read` turns into :class:`~osbench.serve.Requests`."""


def read(source: Union[str, os.PathLike[str]], format: Optional[str] = None) -> Requests:
    """Requests from an Azure or Mooncake log: ``source`` is a path, or a dataset name
    (``"azure-conv-2023"``, ``"azure-code-2023"``, ``"mooncake-conversation"``,
    ``"mooncake-synthetic"``). ``format``: ``"azure"`` or ``"mooncake"``, or None to detect
    it. A request whose prompt or output is not at least one token, or whose ``hash_ids``
    do not cover its prompt (``ceil(input_length / 512)`` ids), is an error naming it."""
    if format is not None and format not in FORMATS:
        raise ArgumentError(
            f"format={format!r} is not accepted: use one of {', '.join(FORMATS)} (or None to detect it)"
        )
    text = os.fspath(source)
    path = Path(datasets.resolve(text, "request log"))
    name = text.removeprefix(datasets.PREFIX) if text.removeprefix(datasets.PREFIX) in datasets.REGISTRY else path.name
    trace = traces.read(path, format)
    fmt = "mooncake" if "request" in trace.fields else "azure" if "input_length" in trace.fields else None
    if fmt is None:
        raise ArgumentError(f"{path}: not a request log: Requests.read takes the {' and '.join(FORMATS)} formats")
    try:
        if fmt == "azure":
            return _from_azure(trace, name)
        return _from_mooncake(trace, name, _records(path))
    except ValueError as exc:
        raise ArgumentError(f"{path}: {exc}") from None


def _in_arrival_order(in_file_order: Requests, times: np.ndarray, units_per_second: float, name: str) -> Requests:
    """The requests (checked in file order, so errors name records as the file has them)
    sorted by time (stably), with arrivals in seconds from the first one."""
    order = np.argsort(times, kind="stable")
    t = times[order]
    arrival = (t - t[0]).astype(np.float64) / units_per_second
    r = in_file_order[order]
    return Requests(
        arrival,
        r.prompt_len,
        r.output_len,
        blocks=r.block_ids,
        block_offsets=r.block_offsets,
        source_block=r.source_block,
        name=name,
    )


def _from_azure(trace: traces.Trace, name: str) -> Requests:
    assert trace.times is not None
    n = len(trace.times)
    requests = Requests(np.zeros(n), trace.fields["input_length"], trace.fields["output_length"])
    return _in_arrival_order(requests, trace.times, 1e9, name)  # ns since the epoch


def _records(path: Path) -> int:
    """Records (non-blank lines) of a JSON-lines file, as the trace reader counts them."""
    data, _ = formats._load(str(path))
    return sum(1 for line in formats._decode(str(path), data) if line.strip())


def _from_mooncake(trace: traces.Trace, name: str, n: int) -> Requests:
    """The Mooncake reader gives one access per hash id, numbered by request: request ``r``
    of the ``n`` records is the run of accesses numbered ``r`` (a request without hash ids
    has none: an error)."""
    if "output_length" not in trace.fields:
        raise ArgumentError("a Mooncake record has no output_length: a serving run needs every request's output length")
    request = trace.fields["request"]
    first = np.flatnonzero(np.r_[True, request[1:] != request[:-1]]) if len(request) else np.zeros(0, dtype=np.int64)
    if len(first) != n:
        missing = int(np.setdiff1d(np.arange(n), request[first])[0])
        raise ArgumentError(f"request {missing} (record {missing + 1}) has no hash_ids: its prompt has no content")
    ids = trace.native_keys()
    if ids.dtype != np.int64:
        raise ArgumentError("hash_ids is not accepted: ids must be within int64")
    assert trace.times is not None
    requests = Requests(
        np.zeros(n),
        trace.fields["input_length"][first],
        trace.fields["output_length"][first],
        blocks=ids,
        block_offsets=np.r_[first, len(request)],
        source_block=MOONCAKE_BLOCK_TOKENS,
    )
    return _in_arrival_order(requests, trace.times[first], 1e3, name)  # ms


__all__ = ["FORMATS", "read"]
