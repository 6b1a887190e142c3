"""GDSF, Greedy-Dual-Size-Frequency: the reference engine's class (the readable definition the native engine follows)."""

from __future__ import annotations

import heapq
from collections.abc import Hashable
from typing import Optional

GDSF_SCALE = 1.0e6
"""GDSF's value of one hit on a one-byte object (libCacheSim's constant)."""


class GDSF:
    """Greedy-Dual-Size-Frequency (Cherkasova 1998), lecture section 4.5: evict by value per
    byte. An object's priority is ``L + count * cost / size`` (count: its hits since it
    entered, starting at 1; size 1 without ``size=``; cost ``GDSF_SCALE`` = 1e6, libCacheSim's
    constant, without ``cost=``), recomputed at each hit; ``L`` (the inflation that ages old
    objects) becomes the priority of each evicted object. As libCacheSim's GDSF, a miss
    first inserts the newcomer and then evicts the lowest priority while the cache is over
    capacity, so a newcomer whose priority is the lowest leaves at once. Ties of priority go
    to the object accessed least recently. The priorities are float64 computed with the
    same operations in the same order as libCacheSim (``count * cost`` first, then ``/ size``,
    then ``L +``), so ties fall the same way.

    ``cost`` is the price of bringing the object in (a refetch, or the prefill recompute of
    a KV block), in any unit: an expensive object is worth keeping even if it is rarely
    used. Like its size, an object keeps the cost it entered with; the ``cost`` given with a
    hit is not looked at."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.inflation = 0.0
        self.clock = 0
        self.count: dict[Hashable, int] = {}
        self.stamp: dict[Hashable, tuple[float, int]] = {}  # key -> (priority, last access)
        self.heap: list[tuple[float, int, Hashable]] = []  # stale entries are skipped
        self.size: dict[Hashable, int] = {}
        self.cost: dict[Hashable, float] = {}
        self.used = 0

    def access(self, key: Hashable, next_use: Optional[int] = None, size: int = 1, cost: float = GDSF_SCALE) -> bool:
        self.clock += 1
        hit = key in self.count
        if hit:
            self.count[key] += 1
        else:
            if size > self.capacity:
                return False  # never admitted
            self.count[key] = 1
            self.size[key] = size
            self.cost[key] = cost
            self.used += size
        priority = self.inflation + self.count[key] * self.cost[key] / self.size[key]
        self.stamp[key] = (priority, self.clock)
        heapq.heappush(self.heap, (priority, self.clock, key))
        while self.used > self.capacity:
            priority, clock, victim = heapq.heappop(self.heap)
            if self.stamp.get(victim) == (priority, clock):
                self.inflation = priority
                del self.count[victim], self.stamp[victim], self.cost[victim]
                self.used -= self.size.pop(victim)
        return hit

    def __len__(self) -> int:
        return len(self.count)

    def __contains__(self, key: Hashable) -> bool:
        return key in self.count
