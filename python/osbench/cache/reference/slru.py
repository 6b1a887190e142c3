"""SLRU, segmented LRU: the reference engine's class (the readable definition the native engine follows)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable
from typing import Optional

from osbench.errors import ArgumentError


class SLRU:
    """Segmented LRU (Karedla, Love and Wherry, 1994) as libCacheSim defines it
    (``libCacheSim/cache/eviction/SLRU.c``: ``SLRU_init``, ``SLRU_find``, ``SLRU_insert``,
    ``SLRU_evict``, ``SLRU_cool``, ``SLRU_can_insert``; the Python binding's ``SLRU`` passes
    no parameters, so ``n-seg=4``).

    ``segments`` LRU lists, 0 the lowest, each allowed ``capacity // segments``. A hit in the
    top segment moves the object to that segment's recent end; a hit lower down moves it to
    the recent end of the next segment up, and while that segment is over its allowance its
    least recent object moves down to the recent end of the segment below (cascading; an
    object leaving segment 0 is evicted). A miss admits only an object no larger than one
    segment's allowance; it evicts while the cache cannot take the newcomer (the victim is
    the least recent object of the lowest non-empty segment), then inserts it at the recent
    end of the lowest segment with room for it, or of segment 0 if none has (segment 0 may
    then hold more than its allowance, until a hit's cascade or an eviction drains it).

    With ``size=`` the capacity and the allowances count bytes. Capacities below
    ``segments`` are refused (a segment would hold nothing)."""

    def __init__(self, capacity: int, segments: int = 4) -> None:
        self.capacity = capacity
        self.segments = segments
        self.limit = capacity // segments
        if self.limit <= 0:
            raise ArgumentError(
                f"capacity={capacity} is not accepted by slru with segments={segments}: each segment "
                f"must hold at least one object, so capacity must be at least {segments}"
            )
        self.lists: list[OrderedDict[Hashable, int]] = [OrderedDict() for _ in range(segments)]  # least recent first
        self.held = [0] * segments
        self.segment: dict[Hashable, int] = {}
        self.used = 0

    def access(self, key: Hashable, next_use: Optional[int] = None, size: int = 1) -> bool:
        s = self.segment.get(key)
        if s is not None:
            if s == self.segments - 1:
                self.lists[s].move_to_end(key)
            else:
                self._push(key, self._take(key, s), s + 1)
                while self.held[s + 1] > self.limit:
                    self._cool(s + 1)
            return True
        if size > self.capacity or size > self.limit:
            return False
        while self.used + size > self.capacity:
            self._evict()
        into = next((i for i in range(self.segments) if self.held[i] + size <= self.limit), 0)
        self._push(key, size, into)
        self.used += size
        return False

    def _take(self, key: Hashable, s: int) -> int:
        size = self.lists[s].pop(key)
        self.held[s] -= size
        return size

    def _push(self, key: Hashable, size: int, s: int) -> None:
        self.lists[s][key] = size
        self.held[s] += size
        self.segment[key] = s

    def _cool(self, s: int) -> None:
        """Segment ``s`` is over its allowance: its least recent object moves down one."""
        if s == 0:
            self._evict()
            return
        key = next(iter(self.lists[s]))
        self._push(key, self._take(key, s), s - 1)
        while self.held[s - 1] > self.limit:
            self._cool(s - 1)

    def _evict(self) -> None:
        s = next(i for i in range(self.segments) if self.lists[i])
        key = next(iter(self.lists[s]))
        self.used -= self._take(key, s)
        del self.segment[key]

    def __len__(self) -> int:
        return len(self.segment)

    def __contains__(self, key: Hashable) -> bool:
        return key in self.segment
