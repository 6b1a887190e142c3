"""LeCaR (learning cache replacement): the reference engine's class (the readable definition the
native engine follows)."""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Hashable
from typing import Optional

from osbench.cache._parts import DemandPaging
from osbench.splitmix import SplitMix64

LEARNING_RATE = 0.45
"""libCacheSim's ``lr``."""
DISCOUNT_AT_CAPACITY = 0.005
"""The discount rate is ``0.005 ** (1 / capacity)``: a regret ``capacity`` requests old weighs
0.005 of a fresh one (libCacheSim's ``dr``)."""


class LeCaR(DemandPaging):
    """LeCaR (Vietri et al., HotStorage 2018) as libCacheSim defines it
    (``libCacheSim/cache/eviction/LeCaR.c``, the default build without ``LECAR_USE_BELADY``):
    two experts, LRU and LFU, and a weight each (``w_lru``, ``w_lfu``, both 0.5 at first).

    - The LRU expert's candidate is the least recently used object; the LFU expert's is, among
      the objects of the lowest access count, the one that reached that count first (counts
      start at 1 on entry, a hit adds one; ``LeCaR_find``, ``insert_obj_info_freq_node``).
    - Eviction (``LeCaR_evict``): when the two candidates are one object, it leaves and is
      remembered by neither expert. Otherwise a draw ``r = below(100) / 100`` picks the LRU
      candidate if ``r < w_lru``, else the LFU one; the victim's key joins the front of that
      expert's history with the request number and its size. Each history holds at most
      ``capacity // 2`` (objects, or bytes in sized mode); its oldest keys leave first.
    - A miss on a key in a history (``LeCaR_find``): that expert's choice was a mistake. With
      ``t`` the requests since the eviction and ``r = dr ** t`` (``dr = 0.005 ** (1 /
      capacity)``), the erring expert's weight becomes ``w * exp(-0.45 * r) + 1e-10``, then both
      are normalised by their sum plus ``2e-10``, the other's after adding ``1e-10``
      (``update_weight``). The key leaves the history and enters the cache as new.
    - ``now`` counts every request, hit or miss, admitted or not (``cache_get_base``).

    The draws are splitmix64 seeded with ``seed`` (:class:`osbench.splitmix.SplitMix64`), one
    per eviction whose candidates differ. libCacheSim draws ``next_rand() % 100`` from its own
    generator, so it agrees with this class in distribution, not miss for miss."""

    def __init__(self, capacity: int, seed: int = 0) -> None:
        super().__init__(capacity)
        self.rng = SplitMix64(seed)
        self.discount = DISCOUNT_AT_CAPACITY ** (1.0 / capacity)
        self.w_lru = 0.5
        self.w_lfu = 0.5
        self.now = 0
        self.recency: OrderedDict[Hashable, None] = OrderedDict()  # oldest first
        self.count: dict[Hashable, int] = {}
        self.by_count: dict[int, OrderedDict[Hashable, None]] = {}  # count -> keys, first to reach it first
        # The experts' histories: key -> (request of its eviction, size), oldest first.
        self.history: dict[str, OrderedDict[Hashable, tuple[int, int]]] = {"lru": OrderedDict(), "lfu": OrderedDict()}
        self.history_used = {"lru": 0, "lfu": 0}

    def access(self, key: Hashable, next_use: Optional[int] = None, size: int = 1) -> bool:
        self.now += 1
        if key not in self:  # a miss: an expert that evicted it is regretted
            for expert, other in (("lru", "lfu"), ("lfu", "lru")):
                if key in self.history[expert]:
                    evicted_at, ghost_size = self.history[expert].pop(key)
                    self.history_used[expert] -= ghost_size
                    self._regret(expert, other, self.now - evicted_at)
        return super().access(key, next_use, size)

    def _hit(self, key: Hashable) -> None:
        self.recency.move_to_end(key)
        c = self.count[key]
        self._leave_count(key, c)
        self.count[key] = c + 1
        self.by_count.setdefault(c + 1, OrderedDict())[key] = None

    def _insert(self, key: Hashable) -> None:
        self.recency[key] = None
        self.count[key] = 1
        self.by_count.setdefault(1, OrderedDict())[key] = None

    def _leave_count(self, key: Hashable, c: int) -> None:
        del self.by_count[c][key]
        if not self.by_count[c]:
            del self.by_count[c]

    def _regret(self, erring: str, other: str, t: int) -> None:
        w = {"lru": self.w_lru, "lfu": self.w_lfu}
        r = self.discount ** float(t)
        bad = w[erring] * math.exp(-LEARNING_RATE * r) + 1e-10
        total = bad + w[other] + 2e-10
        w[erring] = bad / total
        w[other] = (w[other] + 1e-10) / total
        self.w_lru, self.w_lfu = w["lru"], w["lfu"]

    def _evict(self) -> Hashable:
        lru_choice = next(iter(self.recency))
        lfu_choice = next(iter(self.by_count[min(self.by_count)]))
        expert: Optional[str] = None
        victim = lru_choice
        if lru_choice != lfu_choice:
            if self.rng.below(100) / 100.0 < self.w_lru:
                expert = "lru"
            else:
                expert, victim = "lfu", lfu_choice
        del self.recency[victim]
        self._leave_count(victim, self.count.pop(victim))
        size = self.size[victim]
        if expert is not None:
            history = self.history[expert]
            history[victim] = (self.now, size)
            self.history_used[expert] += size
            while self.history_used[expert] > self.capacity // 2:
                _, (_, old_size) = history.popitem(last=False)
                self.history_used[expert] -= old_size
        return victim
