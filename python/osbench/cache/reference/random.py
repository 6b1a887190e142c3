"""Random eviction: the reference engine's class (the readable definition the native engine follows)."""

from __future__ import annotations

from collections.abc import Hashable

from osbench.cache._parts import DemandPaging, Members
from osbench.splitmix import SplitMix64


class Random(DemandPaging):
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
        super().__init__(capacity)
        self.rng = SplitMix64(seed)
        self.members = Members()

    def _evict(self) -> Hashable:
        return self.members.swap_remove(self.members.draw(self.rng))

    def _insert(self, key: Hashable) -> None:
        self.members.append(key)
