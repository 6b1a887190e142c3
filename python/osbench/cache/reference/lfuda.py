"""LFUDA, LFU with dynamic aging: the reference engine's class (the readable definition the native engine follows)."""

from __future__ import annotations

import heapq
from collections.abc import Hashable
from typing import Optional

from osbench.cache._parts import DemandPaging


class LFUDA(DemandPaging):
    """LFU with Dynamic Aging (Arlitt, Cherkasova, Dilley, Friedrich and Jin, 2000), the
    textbook rule: an object's priority is ``L + count`` (count: its accesses since it
    entered, 1 on insertion), recomputed at each hit; the victim is the lowest priority, and
    ``L`` (the age, 0 at first) becomes the victim's priority, so that old counts stop
    protecting objects nobody asks for any more. Ties of priority go to the object that took
    its priority first (libCacheSim's order within one frequency bucket). Priorities are
    integers.

    libCacheSim 0.3.5's ``LFUDA`` (``libCacheSim/cache/eviction/LFUDA.c``: ``LFUDA_find``,
    ``LFUDA_evict``, ``update_min_freq``) is not this class's peer: a hit adds ``L`` to the
    object's priority instead of recomputing ``L + count``, and its lowest-bucket search only
    looks up to the highest priority a hit has reached, so after an eviction that empties the
    lowest bucket it keeps pointing at the empty bucket: the next eviction dereferences no
    object (a crash at capacity 1 on three distinct keys, and on small caches of Zipf traces),
    or scans billions of empty buckets (no answer in minutes at capacity 10).

    With ``size=`` the capacity counts bytes (the priority does not look at sizes): victims
    leave until the newcomer fits; an object larger than the cache is never admitted."""

    def __init__(self, capacity: int) -> None:
        super().__init__(capacity)
        self.age = 0
        self.clock = 0
        self.count: dict[Hashable, int] = {}
        self.stamp: dict[Hashable, tuple[int, int]] = {}  # key -> (priority, when it was set)
        self.heap: list[tuple[int, int, Hashable]] = []  # stale entries are skipped

    def access(self, key: Hashable, next_use: Optional[int] = None, size: int = 1) -> bool:
        self.clock += 1
        return super().access(key, next_use, size)

    def _hit(self, key: Hashable) -> None:
        self.count[key] += 1
        self._rank(key)

    def _evict(self) -> Hashable:
        while True:
            priority, when, victim = heapq.heappop(self.heap)
            if self.stamp.get(victim) == (priority, when):
                self.age = priority
                del self.count[victim], self.stamp[victim]
                return victim

    def _insert(self, key: Hashable) -> None:
        self.count[key] = 1
        self._rank(key)

    def _rank(self, key: Hashable) -> None:
        priority = self.age + self.count[key]
        self.stamp[key] = (priority, self.clock)
        heapq.heappush(self.heap, (priority, self.clock, key))
