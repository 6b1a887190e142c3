"""LRU: the reference engine's class (the readable definition the native engine follows)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable

from osbench.cache._parts import DemandPaging


class LRU(DemandPaging):
    """Least recently used: evict the object whose last access is oldest.

    An OrderedDict keeps keys in access order: the first is the least recently used."""

    def __init__(self, capacity: int) -> None:
        super().__init__(capacity)
        self.order: OrderedDict[Hashable, None] = OrderedDict()

    def _hit(self, key: Hashable) -> None:
        self.order.move_to_end(key)

    def _evict(self) -> Hashable:
        return self.order.popitem(last=False)[0]

    def _insert(self, key: Hashable) -> None:
        self.order[key] = None
