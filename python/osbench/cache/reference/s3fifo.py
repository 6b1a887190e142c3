"""S3-FIFO: the reference engine's class (the readable definition the native engine follows)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Optional

from osbench.cache._parts import Ghost, GhostLookup
from osbench.errors import ArgumentError


class S3FIFO(GhostLookup):
    """S3-FIFO (Yang et al., SOSP 2023) as libCacheSim defines it with its defaults.

    Three FIFO queues: *small* (``int(capacity * 0.1)`` objects), *main* (the rest) and a
    *ghost* of ids only (``int(capacity * 0.9)`` entries). Each cached object counts its hits
    since it entered its queue. A miss on a ghost id removes it from the ghost and inserts
    the object into main; any other miss inserts into small, except before the first eviction
    when small is already full (then into main), and except when small holds a single object:
    an object as large as small is never inserted (libCacheSim refuses it). To make room:
    if main is over its size or small is empty, main's oldest object is reinserted at main's
    new end with its count ``min(count, 3) - 1`` while its count is at least 1, else
    evicted; otherwise small's oldest object moves to main (count reset to 0) if it was hit
    at least twice (``move_to_main_threshold``), else it is evicted and its id enters the
    ghost (whose own oldest id leaves when it is full). Repeated until one object has left.

    Capacities below 10 are refused: small would hold nothing (libCacheSim aborts).

    With ``size=`` the capacity, the three queue sizes and their contents count bytes: an
    object larger than small is never admitted (a ghost id still leaves the ghost), one as
    large as small is not inserted, room is made until the newcomer fits, and an id enters
    the ghost only if its size fits the ghost."""

    def __init__(self, capacity: int, small_ratio: float = 0.1, ghost_ratio: float = 0.9, threshold: int = 2) -> None:
        self.capacity = capacity
        self.small_size = int(capacity * small_ratio)
        self.main_size = capacity - self.small_size
        if self.small_size <= 0 or self.main_size <= 0:
            raise ArgumentError(
                f"capacity={capacity} is not accepted by s3fifo: its small queue (10%) and main queue "
                "must each hold at least one object, so capacity must be at least 10"
            )
        self.threshold = threshold
        self.small: OrderedDict[Hashable, int] = OrderedDict()  # oldest first, key -> hit count
        self.main: OrderedDict[Hashable, int] = OrderedDict()
        self.ghost = Ghost(int(capacity * ghost_ratio))
        self.size: dict[Hashable, int] = {}  # cached key -> size
        self.small_used = self.main_used = 0
        self.has_evicted = False

    def _access(self, key: Hashable, size: int, admit: Optional[Callable[[Hashable, int], bool]]) -> bool:
        if key in self.small:
            self.small[key] += 1
            return True
        ghost_hit = self.ghost.forget(key)
        if key in self.main:
            self.main[key] += 1
            return True
        if size > self.small_size:  # libCacheSim admits only what fits in small
            return False
        if admit is not None and not admit(key, size):
            return False
        while self.small_used + self.main_used + size > self.capacity:
            self._evict()
        if size >= self.small_size and not ghost_hit:
            return False  # an object as large as the small queue is not inserted
        self.size[key] = size
        if ghost_hit or (not self.has_evicted and self.small_used >= self.small_size):
            self.main[key] = 0
            self.main_used += size
        else:
            self.small[key] = 0
            self.small_used += size
        return False

    def _evict(self) -> None:
        self.has_evicted = True
        if self.main_used > self.main_size or not self.small:
            while self.main:
                key, count = self.main.popitem(last=False)
                if count < 1:
                    self.main_used -= self.size.pop(key)
                    return
                self.main[key] = min(count, 3) - 1
        else:
            while self.small:
                key, count = self.small.popitem(last=False)
                size = self.size[key]
                self.small_used -= size
                if count >= self.threshold:
                    self.main[key] = 0
                    self.main_used += size
                else:
                    del self.size[key]
                    self.ghost.add(key, size)
                    return

    @property
    def used(self) -> int:
        """Bytes cached (small and main), with ``size=``."""
        return self.small_used + self.main_used

    def __len__(self) -> int:
        return len(self.small) + len(self.main)

    def __contains__(self, key: Hashable) -> bool:
        return key in self.small or key in self.main
