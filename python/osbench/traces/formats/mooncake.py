"""``mooncake``: Mooncake request logs, JSON lines with ``timestamp`` (ms), ``input_length``,
``output_length`` and ``hash_ids`` (one id per 512-token block of the prompt).

:func:`read_log` is the one reader of these files: the trace format below reads them as the
block accesses a prefix cache sees, :func:`osbench.radix.mooncake` as requests of block ids,
and :meth:`osbench.sched.Workload.from_requests` as jobs. Lines are split on ``\\n`` only (a
JSON string may hold U+2028); ``NaN`` and ``Infinity`` are no numbers here, lengths are integers
>= 0, block ids 64-bit integers, and every refusal names the file and the line.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Optional, Union

import numpy as np

from osbench.traces.formats._io import Source, fail, int_array, read_lines
from osbench.traces.formats.format import Format, Options
from osbench.traces.trace import Trace

MOONCAKE_BLOCK_TOKENS = 512
"""Tokens per block in the Mooncake traces: each ``hash_ids`` entry stands for 512 tokens."""

FIELDS = ("timestamp", "input_length", "output_length", "hash_ids")

MEMORY_PER_BYTE = 8.0
"""Memory of a whole read per byte of the file (a parsed block id holds about 40 bytes, its
text about 7)."""


@dataclass(frozen=True)
class MooncakeLog:
    """The requests of a Mooncake log in file order, one entry per request in each list. A
    field a line leaves out (and the caller did not require) is 0, or for ``input_length``
    the blocks' tokens, ``len(hash_ids) * 512``. ``line``: the line each request came from."""

    timestamp: list[Union[int, float]]
    input_length: list[int]
    output_length: list[int]
    hash_ids: list[list[int]]
    line: list[int]

    def __len__(self) -> int:
        return len(self.hash_ids)


def _is_int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def read_log(
    path: str,
    data: Union[bytes, Source, None] = None,
    *,
    limit: Optional[int] = None,
    require: tuple[str, ...] = ("hash_ids",),
) -> MooncakeLog:
    """Read the requests of a Mooncake log (``data``: its bytes, or a :class:`~._io.Source` of it, if already open), the first
    ``limit`` only if given (then only as much of the file is read). Every line must be a JSON
    object holding the ``require`` fields; a field present must have its type (lists of
    integers, numbers). A bad line raises :class:`~osbench.traces.TraceFileError` naming it;
    so does a file without requests."""
    return read_lines(path, data, limit, MEMORY_PER_BYTE, lambda lines, n: _parse(path, lines, n, require))


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number")


def _request(line: str, require: tuple[str, ...]) -> tuple[Union[int, float], int, int, list[int]]:
    """One line's request; ValueError, KeyError, TypeError or RecursionError say why not."""
    rec = json.loads(line, parse_constant=_no_constant)
    if not isinstance(rec, dict):
        raise TypeError("a request is a JSON object")
    missing = [name for name in require if name not in rec]
    if missing:
        raise KeyError(missing[0])
    ids = rec.get("hash_ids", [])
    stamp = rec.get("timestamp", 0)
    length = rec.get("input_length", len(ids) * MOONCAKE_BLOCK_TOKENS if isinstance(ids, list) else 0)
    output = rec.get("output_length", 0)
    if not isinstance(ids, list) or not all(_is_int(i) and -(2**63) <= i < 2**64 for i in ids):
        raise TypeError("hash_ids must be a list of 64-bit integers")
    if any(isinstance(v, bool) or not isinstance(v, (int, float)) for v in (stamp, length, output)):
        raise TypeError("timestamp, input_length and output_length must be numbers")
    if not (math.isfinite(stamp) and abs(stamp) < 2**62):
        raise ValueError(f"timestamp must be a finite number of ms below 2**62, not {stamp!r}")
    for name, value in (("input_length", length), ("output_length", output)):
        if not _is_int(value) or not 0 <= value < 2**63:
            raise ValueError(f"{name} must be an integer >= 0, not {value!r:.40}")
    return stamp, length, output, ids


def _parse(
    path: str, lines: Iterator[tuple[int, int, str]], limit: Optional[int], require: tuple[str, ...]
) -> MooncakeLog:
    log = MooncakeLog([], [], [], [], [])
    for line_no, _, line in lines:
        if limit is not None and len(log) >= limit:
            break
        if not line.strip():
            continue
        try:
            stamp, length, output, ids = _request(line, require)
        except (ValueError, KeyError, TypeError, RecursionError) as exc:
            reason = "nested too deeply" if isinstance(exc, RecursionError) else f"{type(exc).__name__}: {exc}"
            raise fail(
                path, f"line {line_no}", f"not a Mooncake request with {', '.join(require)} ({reason})"
            ) from None
        log.timestamp.append(stamp)
        log.input_length.append(length)
        log.output_length.append(output)
        log.hash_ids.append(ids)
        log.line.append(line_no)
    if not len(log):
        raise fail(path, "line 1", "no records (the file holds only blank lines)")
    return log


def read(path: str, src: Source, options: Options) -> Trace:
    """The block accesses a prefix cache sees: one access per ``hash_ids`` entry, sized in
    tokens (512 per block, the last block of a request holding the rest of its prompt), timed
    by the request's timestamp (ms); ``fields["request"]`` is each access's request index."""
    log = _parse(path, src.lines(), None, ("hash_ids",))
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


FORMAT = Format(
    "mooncake",
    read,
    detect=lambda name, head: name.endswith((".jsonl", ".json")),
    precedence=2,
    memory_per_byte=MEMORY_PER_BYTE,
)
