"""2Q: the reference engine's class (the readable definition the native engine follows)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Optional

from osbench.cache._parts import Ghost, GhostLookup
from osbench.errors import ArgumentError


class TwoQ(GhostLookup):
    """2Q (Johnson and Shasha, VLDB 1994) as libCacheSim defines it with its defaults.

    *Ain*: a FIFO of first-time objects, target ``int(capacity * 0.25)``; *Aout*: a FIFO of
    ids evicted from Ain, ``int(capacity * 0.5)`` entries; *Am*: an LRU of objects seen again
    after leaving Ain, ``capacity - int(capacity * 0.25)`` objects. A hit in Ain changes
    nothing; a hit in Am moves the object to Am's recent end. A miss first makes room while
    Ain + Am is full: if Ain is over its target, Ain's oldest leaves into Aout (Aout's oldest
    id leaves when it is full), else Am's least recent is evicted. Then an id found in Aout
    (removed from it) goes to Am, evicting Am's least recent if Am alone is full; any other
    object enters Ain. Capacities below 4 are refused (Ain would hold nothing, and
    libCacheSim then caches nothing at all).

    With ``size=`` the capacity and the three targets count bytes: an object larger than
    Ain's target is never admitted (an id found in Aout still leaves it), room is made until
    the newcomer fits, and an id leaving Ain enters Aout only if its size fits Aout."""

    def __init__(self, capacity: int, ain_ratio: float = 0.25, aout_ratio: float = 0.5) -> None:
        self.capacity = capacity
        self.ain_size = int(capacity * ain_ratio)
        self.am_size = capacity - self.ain_size
        if self.ain_size <= 0:
            raise ArgumentError(
                f"capacity={capacity} is not accepted by twoq: its Ain queue (25%) must hold at least "
                "one object, so capacity must be at least 4"
            )
        # key -> size; with ``size=`` the capacity and the three targets count bytes
        self.ain: OrderedDict[Hashable, int] = OrderedDict()  # oldest first
        self.aout = Ghost(int(capacity * aout_ratio))
        self.am: OrderedDict[Hashable, int] = OrderedDict()  # least recent first
        self.ain_used = self.am_used = 0

    def _access(self, key: Hashable, size: int, admit: Optional[Callable[[Hashable, int], bool]]) -> bool:
        if key in self.ain:
            return True
        ghost_hit = self.aout.forget(key)
        if key in self.am:
            self.am.move_to_end(key)
            return True
        if size > self.ain_size:  # libCacheSim admits only what fits in Ain (the ghost is gone)
            return False
        if admit is not None and not admit(key, size):
            return False
        while self.ain_used + self.am_used + size > self.capacity:
            if self.ain_used > self.ain_size:
                old, old_size = self.ain.popitem(last=False)
                self.ain_used -= old_size
                self.aout.add(old, old_size)
            else:
                self.am_used -= self.am.popitem(last=False)[1]
        if ghost_hit:
            while self.am_used + size > self.am_size:
                self.am_used -= self.am.popitem(last=False)[1]
            self.am[key] = size
            self.am_used += size
        else:
            self.ain[key] = size
            self.ain_used += size
        return False

    @property
    def used(self) -> int:
        """Bytes cached (Ain and Am), with ``size=``."""
        return self.ain_used + self.am_used

    def __len__(self) -> int:
        return len(self.ain) + len(self.am)

    def __contains__(self, key: Hashable) -> bool:
        return key in self.ain or key in self.am
