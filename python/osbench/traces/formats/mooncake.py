"""``mooncake``: Mooncake request logs, JSON lines with ``timestamp`` (ms), ``input_length``,
``output_length`` and ``hash_ids`` (one id per 512-token block of the prompt).

:func:`read_log` is the one reader of these files: the trace format below reads them as the
block accesses a prefix cache sees, :func:`osbench.radix.mooncake` as requests of block ids,
and :meth:`osbench.sched.Workload.from_requests` as jobs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Optional, Union

import numpy as np

from osbench import _checks
from osbench.traces.formats._io import decode_lines, fail, int_array, load
from osbench.traces.formats.format import Format, Options
from osbench.traces.trace import Trace

MOONCAKE_BLOCK_TOKENS = 512
"""Tokens per block in the Mooncake traces: each ``hash_ids`` entry stands for 512 tokens."""

FIELDS = ("timestamp", "input_length", "output_length", "hash_ids")


@dataclass(frozen=True)
class MooncakeLog:
    """The requests of a Mooncake log in file order, one entry per request in each list. A
    field a line leaves out (and the caller did not require) is 0, or for ``input_length``
    the blocks' tokens, ``len(hash_ids) * 512``."""

    timestamp: list[Union[int, float]]
    input_length: list[int]
    output_length: list[int]
    hash_ids: list[list[int]]

    def __len__(self) -> int:
        return len(self.hash_ids)


def _is_int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def read_log(
    path: str, data: Optional[bytes] = None, *, limit: Optional[int] = None, require: tuple[str, ...] = ("hash_ids",)
) -> MooncakeLog:
    """Read the requests of a Mooncake log (``data``: its bytes, if already read), the first
    ``limit`` only if given. Every line must be a JSON object holding the ``require`` fields;
    a field present must have its type (lists of integers, numbers). A bad line raises
    :class:`~osbench.traces.TraceFileError` naming it; so does a file without requests."""
    if limit is not None:
        limit = _checks.positive_int("limit", limit)
    if data is None:
        data = load(path)
    log = MooncakeLog([], [], [], [])
    for line_no, line in enumerate(decode_lines(path, data), 1):
        if limit is not None and len(log) >= limit:
            break
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
            if not isinstance(rec, dict):
                raise TypeError("a request is a JSON object")  # caught below: the line is refused
            missing = [name for name in require if name not in rec]
            if missing:
                raise KeyError(missing[0])
            ids = rec.get("hash_ids", [])
            stamp = rec.get("timestamp", 0)
            length = rec.get("input_length", len(ids) * MOONCAKE_BLOCK_TOKENS)
            output = rec.get("output_length", 0)
            if not isinstance(ids, list) or not all(_is_int(i) for i in ids):
                raise TypeError("hash_ids must be a list of integers")
            if not isinstance(stamp, (int, float)) or not _is_int(length) or not _is_int(output):
                raise TypeError("timestamp, input_length and output_length must be numbers")
        except (ValueError, KeyError, TypeError) as exc:
            raise fail(
                path,
                f"line {line_no}",
                f"not a Mooncake request with {', '.join(require)} ({type(exc).__name__}: {exc})",
            ) from None
        log.timestamp.append(stamp)
        log.input_length.append(length)
        log.output_length.append(output)
        log.hash_ids.append(ids)
    if not len(log):
        raise fail(path, "line 1", "no records (the file holds only blank lines)")
    return log


def read(path: str, data: bytes, options: Options) -> Trace:
    """The block accesses a prefix cache sees: one access per ``hash_ids`` entry, sized in
    tokens (512 per block, the last block of a request holding the rest of its prompt), timed
    by the request's timestamp (ms); ``fields["request"]`` is each access's request index."""
    log = read_log(path, data)
    keys: list[int] = []
    sizes: list[int] = []
    times: list[int] = []
    request: list[int] = []
    for i, (ids, stamp, length) in enumerate(zip(log.hash_ids, log.timestamp, log.input_length)):
        n = len(ids)
        last = min(max(length - MOONCAKE_BLOCK_TOKENS * (n - 1), 1), MOONCAKE_BLOCK_TOKENS)
        keys += ids
        sizes += [MOONCAKE_BLOCK_TOKENS] * (n - 1) + [last] if n else []
        times += [int(stamp)] * n
        request += [i] * n
    return Trace(
        int_array(path, keys, "hash_ids"),
        sizes=np.array(sizes, dtype=np.int64),
        times=np.array(times, dtype=np.int64),
        fields={"request": np.array(request, dtype=np.int64)},
    )


FORMAT = Format("mooncake", read, detect=lambda name, head: name.endswith((".jsonl", ".json")), precedence=2)
