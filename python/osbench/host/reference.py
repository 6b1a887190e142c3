"""Readable references for the deterministic parts of the host probes.

The timing probes cannot have an "exact" reference, but the memory-latency probe follows a
random cycle that must be the same in both engines: :func:`chase_cycle` builds it in plain Python
(Sattolo's algorithm driven by splitmix64), bit for bit like the Rust core. :func:`chase_latency`
walks it in Python, which shows what one dependent load costs once the interpreter is in the
loop (tens of nanoseconds per step, whatever the working set).
"""

from __future__ import annotations

import time

import numpy as np

from osbench.splitmix import SplitMix64

LINE = 64  # bytes per link of the chase: one cache line


def chase_cycle(lines: int, seed: int = 0) -> np.ndarray:
    """``next[i]``: the line after line ``i`` in one random cycle through all ``lines`` lines.

    Sattolo's algorithm: start from the identity; for ``i`` from ``lines - 1`` down to 1, swap
    item ``i`` with item ``j``, ``j`` drawn uniformly from ``0 .. i - 1`` (never ``i`` itself,
    which is what makes a single cycle rather than any permutation)."""
    nxt = list(range(lines))
    rng = SplitMix64(seed)
    for i in range(lines - 1, 0, -1):
        j = rng.below(i)
        nxt[i], nxt[j] = nxt[j], nxt[i]
    return np.asarray(nxt, dtype=np.uint32)


def chase_latency(nbytes: int, loads: int, repeats: int = 3, seed: int = 0) -> np.ndarray:
    """Nanoseconds per step of a pointer chase in Python over a cycle of ``nbytes // 64``
    links: interpreter overhead plus, far below it, the memory latency."""
    nxt = chase_cycle(nbytes // LINE, seed).tolist()
    out = []
    p = 0
    for _ in range(repeats):
        for _ in range(min(len(nxt), loads)):
            p = nxt[p]
        t0 = time.perf_counter_ns()
        for _ in range(loads):
            p = nxt[p]
        out.append((time.perf_counter_ns() - t0) / loads)
    return np.asarray(out)
