"""FIFO: the reference engine's class (the readable definition the native engine follows)."""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable

from osbench.cache._parts import DemandPaging


class FIFO(DemandPaging):
    """First in, first out: evict the object that entered first. Hits change nothing."""

    def __init__(self, capacity: int) -> None:
        super().__init__(capacity)
        self.queue: deque[Hashable] = deque()  # oldest first

    def _evict(self) -> Hashable:
        return self.queue.popleft()

    def _insert(self, key: Hashable) -> None:
        self.queue.append(key)
