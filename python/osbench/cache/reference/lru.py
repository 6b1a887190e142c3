"""LRU: the reference engine's class (the readable definition the native engine follows)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable
from typing import Optional


class LRU:
    """Least recently used: evict the object whose last access is oldest.

    An OrderedDict keeps keys in access order: the first is the least recently used."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.order: OrderedDict[Hashable, int] = OrderedDict()  # key -> size
        self.used = 0

    def access(self, key: Hashable, next_use: Optional[int] = None, size: int = 1) -> bool:
        if key in self.order:
            self.order.move_to_end(key)
            return True
        if size > self.capacity:
            return False
        while self.used + size > self.capacity:
            self.used -= self.order.popitem(last=False)[1]
        self.order[key] = size
        self.used += size
        return False

    def __len__(self) -> int:
        return len(self.order)

    def __contains__(self, key: Hashable) -> bool:
        return key in self.order
