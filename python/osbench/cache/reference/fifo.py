"""FIFO: the reference engine's class (the readable definition the native engine follows)."""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable
from typing import Optional


class FIFO:
    """First in, first out: evict the object that entered first. Hits change nothing."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.queue: deque[Hashable] = deque()
        self.cached: dict[Hashable, int] = {}  # key -> size
        self.used = 0

    def access(self, key: Hashable, next_use: Optional[int] = None, size: int = 1) -> bool:
        if key in self.cached:
            return True
        if size > self.capacity:
            return False
        while self.used + size > self.capacity:
            self.used -= self.cached.pop(self.queue.popleft())
        self.queue.append(key)
        self.cached[key] = size
        self.used += size
        return False

    def __len__(self) -> int:
        return len(self.queue)

    def __contains__(self, key: Hashable) -> bool:
        return key in self.cached
