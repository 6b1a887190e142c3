"""libCacheSim's random generator in Python, for the tests that give it to a reference class in
place of its seeded splitmix64 and then hold the class to libCacheSim miss for miss (Cacheus,
FlashProb): libCacheSim's ``next_rand`` is thread-local and starts every new thread at the same
state, so a libCacheSim cache run in a fresh thread (:func:`fresh_thread_hits`) makes these
draws; and the traces those tests replay (:func:`hard_traces`)."""

from __future__ import annotations

import threading
from typing import Any, Callable

import numpy as np
import pytest

import osbench as ob

MASK128 = (1 << 128) - 1


class Lehmer64:
    """libCacheSim's ``next_rand`` (``libCacheSim/utils/include/mymath.h``: a 128-bit lehmer
    generator, state 0xdeadbeef at a thread's start), with its ``next_rand() % n`` as ``below``."""

    def __init__(self) -> None:
        self.state = 0xDEADBEEF

    def below(self, n: int) -> int:
        self.state = (self.state * 0xDA942042E4DD58B5) & MASK128
        return (self.state >> 64) % n


def fresh_thread_hits(make: Callable[[Any], Any], keys: list[int], sizes: list[int]) -> list[bool]:
    """The hits of the libCacheSim cache ``make(libcachesim)`` builds, request by request, run
    in a fresh thread: its generator at its starting state (skips without libcachesim)."""
    lcs = pytest.importorskip("libcachesim")
    hits: list[bool] = []

    def run() -> None:
        cache = make(lcs)
        req = lcs.Request()
        for k, s in zip(keys, sizes):
            req.obj_id = k
            req.obj_size = s
            hits.append(cache.get(req))

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    return hits


def hard_traces(dataset: Callable[[str], Any]) -> dict[str, ob.traces.Trace]:
    """Two Zipf traces, a loop under a scan, and a slice of the CloudPhysics trace."""
    real = ob.traces.read_oracle_general(dataset("cloudphysics"))
    i = np.arange(30_000)
    return {
        "zipf-0.9": ob.traces.zipf(3000, 0.9, 40_000, seed=1),
        "zipf-1.2": ob.traces.zipf(5000, 1.2, 40_000, seed=2),
        # A loop of 70 keys under a scan of keys never seen again (every third access).
        "loop-and-scan": ob.traces.Trace(np.where(i % 3 == 0, 1_000_000 + i, i % 70).astype(np.uint64)),
        "cloudphysics": ob.traces.Trace(real.keys[:60_000]),
    }
