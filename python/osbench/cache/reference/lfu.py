"""LFU: the reference engine's class (the readable definition the native engine follows)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable

from osbench.cache._parts import DemandPaging


class LFU(DemandPaging):
    """Least frequently used: evict the object with the fewest accesses since it entered.

    Counts start at 1 on insert and are forgotten on eviction. Ties go to the least recently
    used: each frequency has its own recency list, and an object only enters list f when it
    is accessed, so the first entry of the lowest list is the one to evict."""

    def __init__(self, capacity: int) -> None:
        super().__init__(capacity)
        self.freq: dict[Hashable, int] = {}
        self.by_freq: dict[int, OrderedDict[Hashable, None]] = {}
        self.min_freq = 0

    def _hit(self, key: Hashable) -> None:
        f = self.freq[key]
        del self.by_freq[f][key]
        if not self.by_freq[f]:
            del self.by_freq[f]
            if self.min_freq == f:
                self.min_freq = f + 1
        self.by_freq.setdefault(f + 1, OrderedDict())[key] = None
        self.freq[key] = f + 1

    def _evict(self) -> Hashable:
        while self.min_freq not in self.by_freq:  # several evictions: the lowest count moves up
            self.min_freq += 1
        coldest = self.by_freq[self.min_freq]
        victim, _ = coldest.popitem(last=False)
        if not coldest:
            del self.by_freq[self.min_freq]
        del self.freq[victim]
        return victim

    def _insert(self, key: Hashable) -> None:
        self.by_freq.setdefault(1, OrderedDict())[key] = None
        self.freq[key] = 1
        self.min_freq = 1
