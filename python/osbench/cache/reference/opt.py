"""OPT, Belady's MIN: the reference engine's class (the readable definition the native engine follows)."""

from __future__ import annotations

import heapq
from collections.abc import Hashable
from typing import Optional

from osbench.errors import ArgumentError


class OPT:
    """Belady's optimal replacement (MIN, 1966), with demand paging: every miss inserts, and a
    full cache evicts the object whose next use is farthest away (never again = infinitely far).

    Offline: ``access(key, next_use)`` needs the index of the key's next access (``NEVER``
    when there is none). A heap of (-next_use, key) finds the victim; entries left behind by
    hits are stale and skipped. Which never-again object goes first changes no hit.

    With ``size=`` (libCacheSim's Belady in bytes) a miss evicts the farthest next uses until
    the newcomer fits; never-again objects still go first, so their order still changes no hit."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.next: dict[Hashable, int] = {}
        self.size: dict[Hashable, int] = {}
        self.used = 0
        self.heap: list[tuple[int, int, Hashable]] = []
        self.pushes = 0  # tie-breaker so keys themselves are never compared

    def access(self, key: Hashable, next_use: Optional[int] = None, size: int = 1) -> bool:
        if next_use is None:
            raise ArgumentError("next_use is not accepted as None: OPT needs each access's next use")
        hit = key in self.next
        if not hit:
            if size > self.capacity:
                return False
            while self.used + size > self.capacity:
                neg_next, _, victim = heapq.heappop(self.heap)
                if self.next.get(victim) == -neg_next:
                    del self.next[victim]
                    self.used -= self.size.pop(victim)
            self.size[key] = size
            self.used += size
        self.next[key] = next_use
        self.pushes += 1
        heapq.heappush(self.heap, (-next_use, self.pushes, key))
        return hit

    def __len__(self) -> int:
        return len(self.next)

    def __contains__(self, key: Hashable) -> bool:
        return key in self.next
