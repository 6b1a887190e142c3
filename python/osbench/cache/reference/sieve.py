"""SIEVE: the reference engine's class (the readable definition the native engine follows)."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from osbench.cache._parts import DemandPaging

_NONE: Any = object()  # "no key": a sentinel no user key can equal


class Sieve(DemandPaging):
    """SIEVE (Zhang et al., NSDI 2024): a FIFO queue with one visited bit per object and a
    hand that sweeps from the oldest object towards the newest.

    A hit sets the visited bit and moves nothing. A newcomer enters at the new end with its
    bit clear. To evict, the hand starts where it stopped last time (at the oldest object the
    first time, or after it has passed the newest): each visited object it meets has its bit
    cleared and is kept; the first unvisited one is evicted, and the hand stays on its newer
    neighbour (or returns to the oldest object if there is none). As libCacheSim's Sieve."""

    def __init__(self, capacity: int) -> None:
        super().__init__(capacity)
        self.visited: dict[Hashable, bool] = {}
        # The queue as a doubly linked list: newer[k] is the neighbour towards the new end.
        self.newer: dict[Hashable, Any] = {}
        self.older: dict[Hashable, Any] = {}
        self.newest: Any = _NONE
        self.oldest: Any = _NONE
        self.hand: Any = _NONE

    def _hit(self, key: Hashable) -> None:
        self.visited[key] = True

    def _insert(self, key: Hashable) -> None:
        self.visited[key] = False
        self.older[key], self.newer[key] = self.newest, _NONE
        if self.newest is _NONE:
            self.oldest = key
        else:
            self.newer[self.newest] = key
        self.newest = key

    def _evict(self) -> Hashable:
        key = self.oldest if self.hand is _NONE else self.hand
        while self.visited[key]:
            self.visited[key] = False
            key = self.oldest if self.newer[key] is _NONE else self.newer[key]
        self.hand = self.newer[key]
        older, newer = self.older.pop(key), self.newer.pop(key)
        del self.visited[key]
        if older is _NONE:
            self.oldest = newer
        else:
            self.newer[older] = newer
        if newer is _NONE:
            self.newest = older
        else:
            self.older[newer] = older
        return key
