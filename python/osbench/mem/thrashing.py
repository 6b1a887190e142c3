"""Demand paging, working sets and thrashing (lecture section 3.6, demo 5, exercise 7).

Memory is an LRU cache of pages: the fault rate at every memory size comes from one pass of
the cache engine (:func:`osbench.cache.curve`, Mattson stack distances), and a cost model
turns fault rates into the mean time of an access.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from osbench import _checks, cache
from osbench._record import Record
from osbench.errors import ArgumentError, ArgumentTypeError


def working_set_trace(
    length: int = 200_000,
    *,
    working_set: int = 200,
    phases: int = 10,
    p_random: float = 0.04,
    n_pages: int = 100_000,
    seed: int = 0,
) -> np.ndarray:
    """Page numbers of a program that works in phases.

    The trace is cut into ``phases`` equal phases; each phase picks a working set of
    ``working_set`` distinct pages out of ``n_pages`` and touches them uniformly, except that
    with probability ``p_random`` an access goes to a random page anywhere (a sparse,
    one-off access). Returns an int64 array of page numbers."""
    length = _checks.non_negative_int("length", length)
    working_set = _checks.positive_int("working_set", working_set)
    phases = _checks.positive_int("phases", phases)
    p_random = _checks.probability("p_random", p_random)
    n_pages = _checks.positive_int("n_pages", n_pages)
    if working_set > n_pages:
        raise ArgumentError(f"working_set={working_set} is not accepted: at most n_pages={n_pages}")
    rng = np.random.default_rng(seed)
    bounds = np.linspace(0, length, phases + 1).astype(np.int64)
    parts = []
    for start, end in zip(bounds[:-1], bounds[1:]):
        pages = rng.choice(n_pages, working_set, replace=False)
        accesses = pages[rng.integers(0, working_set, end - start)]
        stray = rng.random(end - start) < p_random
        accesses[stray] = rng.integers(0, n_pages, int(stray.sum()))
        parts.append(accesses)
    return np.concatenate(parts).astype(np.int64) if parts else np.zeros(0, dtype=np.int64)


def mean_access_ns(fault_rate: Any, access_ns: float = 100.0, fault_ns: float = 100_000.0) -> Any:
    """The cost model: ``(1 - f) * access_ns + f * fault_ns``, for a fault rate ``f`` in [0, 1]
    (a number or an array of them)."""
    try:
        if fault_rate is None or isinstance(fault_rate, (str, bytes)):
            raise TypeError
        f = np.asarray(fault_rate, dtype=np.float64)
    except (TypeError, ValueError):
        raise ArgumentTypeError(
            f"fault_rate={fault_rate!r} is not accepted: it must be a number in [0, 1] or an array of them"
        ) from None
    bad = ~((f >= 0.0) & (f <= 1.0))
    if bad.any():
        value = f[bad].flat[0] if f.ndim else f
        raise ArgumentError(f"fault_rate={float(value)!r} is not accepted: a fault rate is a number in [0, 1]")
    access_ns = _checks.real("access_ns", access_ns, minimum=0.0)
    fault_ns = _checks.real("fault_ns", fault_ns, minimum=0.0)
    out = (1.0 - f) * access_ns + f * fault_ns
    return float(out) if out.ndim == 0 else out


@dataclass(frozen=True)
class Thrashing(Record):
    """Fault rate, mean access time and slowdown (against every access in memory) per memory
    size, in pages."""

    memory_pages: np.ndarray
    fault_rate: np.ndarray
    mean_ns: np.ndarray
    slowdown: np.ndarray
    access_ns: float
    fault_ns: float

    def to_dict(self) -> dict[str, Any]:
        d = super().to_dict()
        for k in ("memory_pages", "fault_rate", "mean_ns", "slowdown"):
            d[k] = d[k].tolist()
        return d


def thrashing(
    trace: Any,
    memory_pages: Iterable[int],
    *,
    access_ns: float = 100.0,
    fault_ns: float = 100_000.0,
    engine: str = "native",
) -> Thrashing:
    """Sweep LRU memory sizes over ``trace`` (page numbers) and price the faults."""
    access_ns = _checks.positive_float("access_ns", access_ns)
    fault_ns = _checks.positive_float("fault_ns", fault_ns)
    sizes = [_checks.positive_int("memory_pages", s) for s in memory_pages]
    hit = cache.curve(trace, "lru", sizes, engine=engine)
    fault = 1.0 - np.asarray(hit, dtype=np.float64)
    mean = mean_access_ns(fault, access_ns, fault_ns)
    return Thrashing(np.array(sizes, dtype=np.int64), fault, mean, mean / access_ns, access_ns, fault_ns)


def max_fault_rate(access_ns: float = 100.0, fault_ns: float = 100_000.0, slowdown: float = 2.0) -> float:
    """Exercise 7: the largest fault rate f with ``(1 - f) * access_ns + f * fault_ns <=
    slowdown * access_ns``, i.e. ``f = (slowdown - 1) * access_ns / (fault_ns - access_ns)``.
    100 ns and 100 us: 100 / 99,900, about 0.1 %; with a 10 us fault, about 1 %."""
    access_ns = _checks.positive_float("access_ns", access_ns)
    fault_ns = _checks.positive_float("fault_ns", fault_ns)
    slowdown = _checks.positive_float("slowdown", slowdown)
    if fault_ns <= access_ns:
        raise ArgumentError(f"fault_ns={fault_ns} is not accepted: a fault must cost more than access_ns={access_ns}")
    if slowdown < 1:
        raise ArgumentError(f"slowdown={slowdown} is not accepted: at least 1 (no access is faster than a hit)")
    return min(1.0, (slowdown - 1.0) * access_ns / (fault_ns - access_ns))
