"""Request streams through a prefix (or whole-prompt) cache: :func:`replay` and :func:`curve`.

Modes: ``MODES``, from the native core's table (``_native.RADIX_MODES``); the reference keeps a
registry of the same names (a test holds the two together).
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from osbench import _checks, _native
from osbench._record import Record
from osbench.errors import ArgumentError, ArgumentTypeError
from osbench.radix import reference
from osbench.radix.tree import check_page_size
from osbench.radix.workloads import Requests

MODES: tuple[str, ...] = tuple(name for name, _ in _native.RADIX_MODES)
"""Replay modes: ``prefix`` (radix tree) and ``whole`` (exact match of whole prompts)."""


@dataclass(frozen=True)
class ReplayResult(Record):
    """The outcome of one replay. ``hit_ratio`` = hit tokens / prompt tokens (0.0 if none).
    ``stored_tokens`` and ``nodes`` are what the cache holds at the end (entries, for
    ``whole``); ``per_request`` holds each request's hit tokens when asked for."""

    mode: str
    capacity: Optional[int]
    page_size: int
    requests: int
    hit_tokens: int
    total_tokens: int
    hit_ratio: float
    stored_tokens: int
    nodes: int
    evicted_nodes: int
    evicted_tokens: int
    per_request: Optional[np.ndarray] = None

    def to_dict(self) -> dict[str, Any]:
        d = super().to_dict()
        d["per_request"] = None if self.per_request is None else self.per_request.tolist()
        return d


def _requests(requests: Any) -> Requests:
    if isinstance(requests, Requests):
        return requests
    if isinstance(requests, (str, bytes)) or not isinstance(requests, Iterable):
        raise ArgumentTypeError(
            f"requests={requests!r:.60} is not accepted: it must be osbench.radix.Requests or a list of token sequences"
        )
    return Requests.from_sequences(list(requests))


def _capacity(name: str, value: Any) -> Optional[int]:
    if value is None:
        return None
    if isinstance(value, float) and value == float("inf"):
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ArgumentTypeError(f"{name}={value!r} is not accepted: it must be a non-negative integer (tokens) or None")
    if int(value) < 0:
        raise ArgumentError(f"{name}={value!r} is not accepted: it must be a non-negative integer (tokens) or None")
    return min(int(value), 2**63 - 1)


def _result(
    mode: str, capacity: Optional[int], page_size: int, stats: Sequence[int], per: Optional[np.ndarray]
) -> ReplayResult:
    n, hit, total, stored, nodes, ev_nodes, ev_tokens = (int(x) for x in stats)
    return ReplayResult(
        mode, capacity, page_size, n, hit, total, hit / total if total else 0.0, stored, nodes, ev_nodes, ev_tokens, per
    )


def replay(
    requests: Any,
    capacity: Optional[int] = None,
    *,
    mode: str = "prefix",
    page_size: int = 1,
    outputs: bool = False,
    per_request: bool = False,
    engine: str = "native",
) -> ReplayResult:
    """Serve ``requests`` in order through a fresh cache of ``capacity`` tokens (None: unlimited).

    ``prefix``: per request, match the prompt and lock the match (the request runs), evict
    unlocked LRU leaves to make room for its new tokens, insert the prompt (and its output if
    ``outputs`` and the requests have outputs), unlock, and evict back to the capacity if the
    request alone overflowed it. ``whole``: an exact-match LRU cache of whole prompts.
    The native engine does the whole replay in one call with the GIL released.
    """
    mode = _checks.choice("mode", mode, MODES)
    engine = _checks.engine(engine)
    capacity = _capacity("capacity", capacity)
    page_size = check_page_size(page_size)
    reqs = _requests(requests)
    use_outputs = bool(outputs) and reqs.output_tokens is not None
    if engine == "reference":
        hits, counters = reference.replay(
            reqs.prompts(), capacity, mode, page_size, reqs.outputs() if use_outputs else None
        )
        stats = (
            len(hits),
            sum(hits),
            reqs.total_tokens,
            counters["stored_tokens"],
            counters["nodes"],
            counters["evicted_nodes"],
            counters["evicted_tokens"],
        )
        per = np.array(hits, dtype=np.uint64) if per_request else None
        return _result(mode, capacity, page_size, stats, per)
    stats, per = _native.radix_replay(
        mode,
        reqs.tokens,
        reqs.offsets,
        capacity,
        page_size,
        reqs.output_tokens if use_outputs else None,
        reqs.output_offsets if use_outputs else None,
        per_request,
    )
    return _result(mode, capacity, page_size, stats, per)


def curve(
    requests: Any,
    capacities: Iterable[Optional[int]],
    *,
    mode: str = "prefix",
    page_size: int = 1,
    outputs: bool = False,
    engine: str = "native",
    threads: Optional[int] = None,
) -> np.ndarray:
    """Token hit ratios at each capacity (None: unlimited), one independent replay each; the
    native engine spreads the capacities over ``threads`` threads (default: every core)."""
    mode = _checks.choice("mode", mode, MODES)
    engine = _checks.engine(engine)
    caps = [_capacity("capacities", c) for c in capacities]
    page_size = check_page_size(page_size)
    if threads is not None:
        threads = _checks.positive_int("threads", threads, maximum=1024)
    reqs = _requests(requests)
    if engine == "reference":
        return np.array(
            [
                replay(reqs, c, mode=mode, page_size=page_size, outputs=outputs, engine="reference").hit_ratio
                for c in caps
            ],
            dtype=float,
        )
    use_outputs = bool(outputs) and reqs.output_tokens is not None
    stats = _native.radix_curve(
        mode,
        reqs.tokens,
        reqs.offsets,
        np.array([-1 if c is None else c for c in caps], dtype=np.int64),
        page_size,
        reqs.output_tokens if use_outputs else None,
        reqs.output_offsets if use_outputs else None,
        threads,
    )
    return np.array([s[1] / s[2] if s[2] else 0.0 for s in stats], dtype=float)


__all__ = ["MODES", "ReplayResult", "curve", "replay"]
