"""LRU-Prob: the reference engine's class (the readable definition the native engine follows)."""

from __future__ import annotations

from collections.abc import Hashable

from osbench.cache.reference.lru import LRU
from osbench.splitmix import SplitMix64


def threshold(prob: float) -> int:
    """A hit promotes when a draw below this is 0: ``1 / prob`` truncated to an integer, as
    libCacheSim computes it (``(int)1.0 / prob`` in ``LRU_Prob.c``), at least 1 and at most
    2**64 - 1 (the core's ``u64``)."""
    return max(1, min(int(1.0 / prob), 2**64 - 1))


class LRUProb(LRU):
    """LRU with probabilistic promotion (libCacheSim's ``LRUProb``): a hit moves the object
    to the front only when a draw says so, with probability ``1 / threshold(prob)``: ``prob``
    0.5 promotes one hit in 2, 0.3 one in 3 (libCacheSim truncates ``1 / prob``), anything
    above 0.5 every hit, which is LRU. Fewer promotions is fewer writes to the list, what a
    concurrent cache pays a lock for; an object then leaves by its insertion or last promotion,
    not its last access. A newcomer enters at the front; the back leaves.

    Every hit draws (``below(threshold) == 0``, splitmix64 seeded with ``seed``), also where the
    object is already in front. libCacheSim draws ``next_rand() % threshold == 0`` from its own
    generator, so the two agree in distribution, not hit for hit."""

    def __init__(self, capacity: int, prob: float = 0.5, seed: int = 0) -> None:
        super().__init__(capacity)
        self.threshold = threshold(prob)
        self.rng = SplitMix64(seed)

    def _hit(self, key: Hashable) -> None:
        if self.rng.below(self.threshold) == 0:
            super()._hit(key)  # LRU's hit is the promotion
