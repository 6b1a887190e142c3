"""CLOCK (second chance): the reference engine's class (the readable definition the native engine follows)."""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable

from osbench.cache._parts import DemandPaging


class Clock(DemandPaging):
    """CLOCK, or second chance: the cached objects sit on a circle, one reference bit each.

    A hit sets the bit. On a miss with a full cache the hand sweeps: a set bit is cleared and
    the hand moves on; the first object with a clear bit is evicted, the newcomer takes its
    place, and the hand moves past it. A newcomer's bit starts clear (libCacheSim's CLOCK);
    ``bit_on_insert=True`` starts it set, as in the textbook.

    The circle is kept as a queue whose front is under the hand: moving the hand past an
    object sends it to the back, and the newcomer joins at the back (the last to be examined).
    With ``size=`` the capacity counts bytes and the hand evicts until the newcomer fits."""

    def __init__(self, capacity: int, bit_on_insert: bool = False) -> None:
        super().__init__(capacity)
        self.bit_on_insert = bit_on_insert
        self.circle: deque[Hashable] = deque()  # front: under the hand
        self.referenced: dict[Hashable, bool] = {}

    def _hit(self, key: Hashable) -> None:
        self.referenced[key] = True

    def _evict(self) -> Hashable:
        while True:
            candidate = self.circle.popleft()
            if not self.referenced[candidate]:
                del self.referenced[candidate]
                return candidate
            self.referenced[candidate] = False
            self.circle.append(candidate)

    def _insert(self, key: Hashable) -> None:
        self.circle.append(key)
        self.referenced[key] = self.bit_on_insert
