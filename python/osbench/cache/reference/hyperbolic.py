"""Hyperbolic caching (sampled eviction): the reference engine's class (the readable definition
the native engine follows)."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Optional

from osbench.cache._parts import DemandPaging, Members
from osbench.splitmix import SplitMix64


class Hyperbolic(DemandPaging):
    """Hyperbolic caching (Blankstein, Sen and Freedman, USENIX ATC 2017) as libCacheSim defines
    it (``libCacheSim/cache/eviction/Hyperbolic.c``): an object's priority is its access count
    over its age in the cache, ``1e8 * count / (now - entered)`` (``Hyperbolic_to_evict``), where
    ``now`` counts every request, this one included, hit or miss, admitted or not
    (``cache_get_base``), and ``entered`` is the request at which the object came in. A hit adds
    one to the count (``Hyperbolic_find``); a newcomer starts at 1 (``Hyperbolic_insert``).

    On a miss with a full cache, until the newcomer fits: draw ``samples`` cached objects at
    random, with replacement (libCacheSim's ``n_sample``, 64), and evict the one of lowest
    priority, the first drawn among equals. The draws are splitmix64 seeded with ``seed``
    (:class:`osbench.splitmix.SplitMix64`): the cached keys sit in a list, a draw is position
    ``below(len)``, an eviction moves the last member into the victim's place and a newcomer
    joins at the end. libCacheSim draws from its own generator (a random hash bucket's first
    object), so it agrees with this class in distribution, not miss for miss."""

    def __init__(self, capacity: int, seed: int = 0, samples: int = 64) -> None:
        super().__init__(capacity)
        self.samples = samples
        self.rng = SplitMix64(seed)
        self.now = 0
        self.members = Members()
        self.count: dict[Hashable, int] = {}
        self.entered: dict[Hashable, int] = {}

    def access(self, key: Hashable, next_use: Optional[int] = None, size: int = 1) -> bool:
        self.now += 1  # every request counts, hit or miss
        return super().access(key, next_use, size)

    def _hit(self, key: Hashable) -> None:
        self.count[key] += 1

    def _insert(self, key: Hashable) -> None:
        self.members.append(key)
        self.count[key] = 1
        self.entered[key] = self.now

    def _evict(self) -> Hashable:
        best, best_priority = 0, float("inf")
        for _ in range(self.samples):
            at = self.members.draw(self.rng)
            key = self.members[at]
            priority = 1.0e8 * self.count[key] / (self.now - self.entered[key])
            if priority < best_priority:
                best, best_priority = at, priority
        victim = self.members.swap_remove(best)
        del self.count[victim], self.entered[victim]
        return victim
