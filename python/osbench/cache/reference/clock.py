"""CLOCK (second chance): the reference engine's class (the readable definition the native engine follows)."""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable
from typing import Optional


class Clock:
    """CLOCK, or second chance: the cached objects sit on a circle, one reference bit each.

    A hit sets the bit. On a miss with a full cache the hand sweeps: a set bit is cleared and
    the hand moves on; the first object with a clear bit is evicted, the newcomer takes its
    place, and the hand moves past it. A newcomer's bit starts clear (libCacheSim's CLOCK);
    ``bit_on_insert=True`` starts it set, as in the textbook.

    The circle is kept as a queue whose front is under the hand: moving the hand past an
    object sends it to the back, and the newcomer joins at the back (the last to be examined).
    With ``size=`` the capacity counts bytes and the hand evicts until the newcomer fits."""

    def __init__(self, capacity: int, bit_on_insert: bool = False) -> None:
        self.capacity = capacity
        self.bit_on_insert = bit_on_insert
        self.circle: deque[Hashable] = deque()  # front: under the hand
        self.referenced: dict[Hashable, bool] = {}
        self.size: dict[Hashable, int] = {}
        self.used = 0

    def access(self, key: Hashable, next_use: Optional[int] = None, size: int = 1) -> bool:
        if key in self.referenced:
            self.referenced[key] = True
            return True
        if size > self.capacity:
            return False
        while self.used + size > self.capacity:
            candidate = self.circle.popleft()
            if self.referenced[candidate]:
                self.referenced[candidate] = False
                self.circle.append(candidate)
            else:
                del self.referenced[candidate]
                self.used -= self.size.pop(candidate)
        self.circle.append(key)
        self.referenced[key] = self.bit_on_insert
        self.size[key] = size
        self.used += size
        return False

    def __len__(self) -> int:
        return len(self.circle)

    def __contains__(self, key: Hashable) -> bool:
        return key in self.referenced
