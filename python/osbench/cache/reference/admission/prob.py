"""Probabilistic admission: the reference engine's filter (the readable definition the native engine follows)."""

from __future__ import annotations

from collections.abc import Hashable

from osbench.splitmix import SplitMix64

MAX_MODULE = 10_000_000
"""libCacheSim's draws are ``next_rand() % MAX_MODULE``."""


class Prob:
    """Admit each missed object with probability ``prob`` (libCacheSim
    ``cache/admission/prob.c``, ``prob_admit``: a draw modulo 10**7 below
    ``(int)(prob * 10**7)``, one draw per miss). The draws are splitmix64's from ``seed``;
    libCacheSim's generator is one per thread, shared by all its caches, so the two agree in
    distribution, not miss for miss."""

    def __init__(self, capacity: int, prob: float, seed: int) -> None:
        self.threshold = int(prob * MAX_MODULE)  # truncated, as C's conversion to int
        self.rng = SplitMix64(seed)

    def seen(self, key: Hashable, size: int) -> None:
        """Every access: nothing to note."""

    def admit(self, key: Hashable, size: int) -> bool:
        return self.rng.next_u64() % MAX_MODULE < self.threshold
