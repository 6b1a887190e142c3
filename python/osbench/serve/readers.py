"""Requests from real LLM request logs, by file path or dataset name.

Three formats, told apart by their content:

- Azure LLM inference traces (``TIMESTAMP, ContextTokens, GeneratedTokens``): prompt and
  output lengths; no prompt content, so no prefix can be shared.
- Mooncake traces (JSON lines with ``timestamp`` in ms, ``input_length``, ``output_length``,
  ``hash_ids``): the ``hash_ids`` are the prompt content, one id per 512-token block,
  prefix-chained (equal ids mean equal prefixes), so prefix caching is real.
- AIPerf's per-request export, ``profile_export.jsonl`` (:mod:`osbench.traces.formats.aiperf`):
  the profiling phase's answered requests, their send times as arrivals and the lengths AIPerf
  counted; no prompt content. :func:`osbench.serve.aiperf.read_aiperf` also keeps what each
  measured.

Arrivals become seconds from the first request; requests are put in arrival order (a stable
sort: the logs are in order already, and ties keep their file order).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional, Union

import numpy as np

from osbench import datasets
from osbench.errors import ArgumentError, ArgumentTypeError
from osbench.serve.columns import Columns
from osbench.traces.formats import aiperf, azure, mooncake
from osbench.traces.formats._io import fail, load
from osbench.traces.formats.requests import log_format

FORMATS: tuple[str, ...] = ("azure", "mooncake", "aiperf")
"""The request-log formats :func:`read` turns into :class:`~osbench.serve.Requests`."""


def read(source: Union[str, os.PathLike[str]], format: Optional[str] = None) -> tuple[Columns, float]:
    """The requests of an Azure, Mooncake or AIPerf log in file order, their ``arrival`` the log's own
    times, and how many of those units make a second: what :meth:`Requests.read
    <osbench.serve.Requests.read>` checks (naming records as the file has them), orders and
    converts. ``source`` is a path, or a dataset name (``"azure-conv-2023"``,
    ``"azure-code-2023"``, ``"mooncake-conversation"``, ``"mooncake-synthetic"``). ``format``:
    one of :data:`FORMATS`, or None to detect it."""
    if format is not None and format not in FORMATS:
        raise ArgumentError(
            f"format={format!r} is not accepted: use one of {', '.join(FORMATS)} (or None to detect it)"
        )
    if not isinstance(source, (str, os.PathLike)):
        raise ArgumentTypeError(f"source={source!r:.60} is not accepted: a file path or a dataset name")
    text = os.fspath(source)
    path = datasets.resolve(text, "request log")
    bare = text.removeprefix(datasets.PREFIX)
    name = bare if bare in datasets.REGISTRY else Path(path).name
    data = load(path)
    if format is None:
        format = log_format(str(path), data[:4096])
    if format == "azure":
        log = azure.read_log(path, data)
        columns = Columns(log.timestamp, log.context, log.generated, None, None, 1, name, str(path), log.line)
        return columns, 1e9  # ns since the epoch
    if format == "aiperf":
        return aiperf_columns(aiperf.read_log(path, data), name, str(path)), 1e9  # ns since the epoch
    m = mooncake.read_log(path, data, require=("timestamp", "input_length", "output_length", "hash_ids"))
    empty = [i for i, ids in enumerate(m.hash_ids) if not ids]
    if empty:
        raise fail(str(path), f"line {m.line[empty[0]]}", "no hash_ids: the request's prompt has no content")
    too_large = [k for k, request in enumerate(m.hash_ids) if any(i >= 2**63 for i in request)]
    if too_large:  # the format takes unsigned 64-bit ids too; content ids here are int64
        raise fail(str(path), f"line {m.line[too_large[0]]}", "hash_ids is not accepted: ids must be within int64")
    ids = np.array([i for request in m.hash_ids for i in request], dtype=np.int64)
    offsets = np.r_[0, np.cumsum([len(request) for request in m.hash_ids])].astype(np.int64)
    stamps = np.asarray(m.timestamp, dtype=np.float64)
    prompt, output = np.asarray(m.input_length), np.asarray(m.output_length)
    lines = np.asarray(m.line, dtype=np.int64)
    return Columns(stamps, prompt, output, ids, offsets, mooncake.MOONCAKE_BLOCK_TOKENS, name, str(path), lines), 1e3


def aiperf_columns(log: aiperf.AIPerfLog, name: str, path: str) -> Columns:
    """An AIPerf export's requests in file order: sent (epoch ns), prompt and output tokens."""
    sent, isl, osl = (np.asarray(v, dtype=np.int64) for v in (log.start, log.input_length, log.output_length))
    return Columns(sent, isl, osl, None, None, 1, name, path, np.asarray(log.line, dtype=np.int64))


__all__ = ["FORMATS", "aiperf_columns", "read"]
