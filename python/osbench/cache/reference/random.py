"""Random eviction: the reference engine's class (the readable definition the native engine follows)."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Optional

from osbench.splitmix import SplitMix64


class Random:
    """Random: on a miss with a full cache, evict a cached object drawn uniformly at random,
    until the newcomer fits (libCacheSim's ``Random``: ``Random_to_evict`` in
    ``libCacheSim/cache/eviction/Random.c`` draws one object of its hash table,
    ``hashtable_rand_obj``). A hit changes nothing.

    The draws are splitmix64 seeded with ``seed`` (:class:`osbench.splitmix.SplitMix64`, the
    core's generator), so one seed gives one sequence of evictions in both engines. The cached
    keys sit in a list; a draw takes position ``below(len)`` and the last member takes the
    victim's place (swap-remove); a newcomer joins at the end. libCacheSim draws from its own
    generator, so it agrees with this class in distribution, not miss for miss."""

    def __init__(self, capacity: int, seed: int = 0) -> None:
        self.capacity = capacity
        self.rng = SplitMix64(seed)
        self.members: list[Hashable] = []
        self.position: dict[Hashable, int] = {}
        self.size: dict[Hashable, int] = {}
        self.used = 0

    def access(self, key: Hashable, next_use: Optional[int] = None, size: int = 1) -> bool:
        if key in self.position:
            return True
        if size > self.capacity:
            return False
        while self.used + size > self.capacity:
            at = self.rng.below(len(self.members))
            victim = self.members[at]
            last = self.members.pop()
            if at < len(self.members):
                self.members[at] = last
                self.position[last] = at
            del self.position[victim]
            self.used -= self.size.pop(victim)
        self.position[key] = len(self.members)
        self.members.append(key)
        self.size[key] = size
        self.used += size
        return False

    def __len__(self) -> int:
        return len(self.members)

    def __contains__(self, key: Hashable) -> bool:
        return key in self.position
