"""LRU-K: the reference engine's class (the readable definition the native engine follows)."""

from __future__ import annotations

import heapq
from collections import OrderedDict, deque
from collections.abc import Hashable
from typing import Optional

from osbench.cache._parts import DemandPaging


class LRUK(DemandPaging):
    """LRU-K (O'Neil, O'Neil and Weikum, SIGMOD 1993) as libCacheSim defines it
    (``libCacheSim/cache/eviction/cpp/LRU_K.cpp``: ``LRU_K_find``, ``LRU_K_insert``,
    ``LRU_K_evict``; the Python binding's ``LRUK(k=2)`` passes ``k=`` to ``LRU_K_init``).

    Evict the object whose K-th most recent access is oldest (the largest backward
    K-distance). Time counts every request (``cache->n_req``), hits, misses and refused ones
    alike. An object remembers its accesses only while cached (no history outlives an
    eviction). Objects with fewer than ``k`` accesses since they entered have an infinite
    distance: they are evicted first, in the order they entered (a hit does not move them);
    after the ``k``-th access an object is ranked by the time of its ``k``-th most recent
    access, and only when no object has fewer than ``k`` accesses does the lowest of those
    leave. Times are distinct, so there are no ties. ``k=1`` is LRU.

    With ``size=`` the capacity counts bytes and victims leave until the newcomer fits; an
    object larger than the cache is never admitted."""

    def __init__(self, capacity: int, k: int = 2) -> None:
        super().__init__(capacity)
        self.k = k
        self.clock = 0
        self.history: dict[Hashable, deque[int]] = {}  # the last k access times, oldest first
        self.young: OrderedDict[Hashable, None] = OrderedDict()  # fewer than k accesses, oldest first
        self.kth: dict[Hashable, int] = {}  # the others: the time of their k-th most recent access
        self.ranked: list[tuple[int, Hashable]] = []  # (kth, key); an entry whose kth changed is stale

    def access(self, key: Hashable, next_use: Optional[int] = None, size: int = 1) -> bool:
        self.clock += 1  # every request counts, hit or miss
        return super().access(key, next_use, size)

    def _hit(self, key: Hashable) -> None:
        hist = self.history[key]
        hist.append(self.clock)
        if len(hist) > self.k:
            hist.popleft()
        if key in self.young:
            if len(hist) >= self.k:
                del self.young[key]
                self._rank(key, hist[0])
        else:
            self._rank(key, hist[0])

    def _insert(self, key: Hashable) -> None:
        self.history[key] = deque([self.clock])
        if self.k == 1:
            self._rank(key, self.clock)
        else:
            self.young[key] = None

    def _rank(self, key: Hashable, kth: int) -> None:
        self.kth[key] = kth
        heapq.heappush(self.ranked, (kth, key))

    def _evict(self) -> Hashable:
        if self.young:
            victim, _ = self.young.popitem(last=False)
        else:
            while True:
                kth, victim = heapq.heappop(self.ranked)
                if self.kth.get(victim) == kth:
                    break
            del self.kth[victim]
        del self.history[victim]
        return victim
