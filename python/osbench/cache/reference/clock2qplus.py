"""Clock2Q+: the reference engine's class (the readable definition the native engine follows)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable
from typing import Optional

from osbench.cache._parts import Ghost
from osbench.errors import ArgumentError


def queue_sizes(capacity: int, fifo_size_ratio: float, ghost_size_ratio: float) -> tuple[int, int, int]:
    """(small FIFO, main, ghost) sizes as ``Clock2QPlus_init`` computes them:
    ``(int64_t)cache_size * fifo_size_ratio`` truncated, the rest, and
    ``(int64_t)(cache_size * ghost_size_ratio)``."""
    fifo = int(float(capacity) * fifo_size_ratio)
    return fifo, capacity - fifo, int(float(capacity) * ghost_size_ratio)


class Clock2QPlus:
    """Clock2Q+ as libCacheSim defines it (``libCacheSim/cache/eviction/Clock2QPlus.c``): a
    small FIFO of newcomers in front of a main FIFO run as a CLOCK, a ghost FIFO of the ids
    the small FIFO let go, and a correlation window in which a hit in the small FIFO does not
    count. Parameters as ``libcachesim.Clock2QPlus`` passes them: ``fifo_size_ratio`` 0.1,
    ``ghost_size_ratio`` 0.9, ``move_to_main_threshold`` 1, ``corr_window_ratio`` 0.5.

    The rules (``Clock2QPlus_find``, ``_insert``, ``_evict``, ``_evict_fifo``, ``_evict_main``,
    ``_can_insert`` under ``cache_get_base``):

    - Sizes: small ``int(capacity * fifo_size_ratio)``, main the rest, ghost
      ``int(capacity * ghost_size_ratio)`` (no ghost when 0); the correlation window is
      ``small * corr_window_ratio`` admissions to the small FIFO (a float).
    - A hit in the small FIFO counts (``freq += 1``) only if at least the window's number of
      admissions to the small FIFO came after the object's own; a hit in main always counts.
    - A miss first takes the id out of the ghost, remembering whether it was there. An object
      larger than the small FIFO is refused (``_can_insert``); otherwise victims leave until
      the newcomer fits in the whole cache: from main while main holds more than its size or
      the small FIFO is empty, else from the small FIFO.
    - Evicting from the small FIFO takes its oldest object: counted hits (at least the
      threshold) move it to main's new end with a count of 0, and the next oldest is looked
      at; otherwise its id enters the ghost (a FIFO by bytes: its oldest ids leave to make
      room) and it is the one victim. Evicting from main takes its oldest object: a counted
      hit sends it back to main's new end with its count cleared, and the next is looked at;
      otherwise it leaves.
    - The newcomer then enters main if its id was in the ghost; else, if it is not smaller
      than the small FIFO it is not admitted at all (after the room was made: libCacheSim's
      ``size >= fifo->cache_size`` beside its ``size <= fifo->cache_size`` check); else main
      while nothing has been evicted yet and the small FIFO is full (warm-up), else the small
      FIFO's new end, stamped with the admissions count.

    Objects moved by an eviction are not checked against main's size: main may hold more
    than its share until the next eviction takes from it."""

    def __init__(
        self,
        capacity: int,
        fifo_size_ratio: float = 0.1,
        ghost_size_ratio: float = 0.9,
        move_to_main_threshold: int = 1,
        corr_window_ratio: float = 0.5,
    ) -> None:
        self.capacity = capacity
        self.fifo_size, self.main_size, ghost_size = queue_sizes(capacity, fifo_size_ratio, ghost_size_ratio)
        if self.fifo_size < 2:
            raise ArgumentError(
                f"capacity={capacity} is not accepted: its small FIFO ({fifo_size_ratio} of it) must hold an object"
                " smaller than itself"
            )
        self.threshold = move_to_main_threshold
        self.window = float(self.fifo_size) * corr_window_ratio
        self.fifo: OrderedDict[Hashable, list[int]] = OrderedDict()  # key -> [size, freq, stamp]; last: newest
        self.main: OrderedDict[Hashable, list[int]] = OrderedDict()  # key -> [size, freq]
        self.ghost = Ghost(ghost_size)
        self.fifo_used = self.main_used = 0
        self.admitted = 0  # admissions to the small FIFO
        self.has_evicted = False

    @property
    def used(self) -> int:
        return self.fifo_used + self.main_used

    def access(self, key: Hashable, next_use: Optional[int] = None, size: int = 1) -> bool:
        entry = self.fifo.get(key)
        if entry is not None:
            if self.admitted - entry[2] >= self.window:
                entry[1] += 1
            return True
        ghost_hit = self.ghost.forget(key)
        entry = self.main.get(key)
        if entry is not None:
            entry[1] += 1
            return True
        if size > self.fifo_size:
            return False
        while self.used + size > self.capacity:
            self.evict()
        if ghost_hit:
            self.add_main(key, size)
        elif size >= self.fifo_size:
            pass  # refused after the room was made, as libCacheSim does
        elif not self.has_evicted and self.fifo_used >= self.fifo_size:
            self.add_main(key, size)
        else:
            self.admitted += 1
            self.fifo[key] = [size, 0, self.admitted]
            self.fifo_used += size
        return False

    def add_main(self, key: Hashable, size: int) -> None:
        self.main[key] = [size, 0]
        self.main_used += size

    def evict(self) -> None:
        self.has_evicted = True
        if self.main_used > self.main_size or self.fifo_used == 0:
            while self.main_used > 0:
                key, (size, freq) = self.main.popitem(last=False)
                if freq < 1:
                    self.main_used -= size
                    return
                self.main[key] = [size, 0]  # back to main's new end, its count cleared
        else:
            while self.fifo_used > 0:
                key, (size, freq, _) = self.fifo.popitem(last=False)
                self.fifo_used -= size
                if freq >= self.threshold:
                    self.add_main(key, size)
                    continue
                self.remember(key, size)
                return

    def remember(self, key: Hashable, size: int) -> None:
        """The ghost's ``get``: a FIFO of ids by bytes; an id already there stays where it is."""
        self.ghost.add(key, size)

    def __len__(self) -> int:
        return len(self.fifo) + len(self.main)

    def __contains__(self, key: Hashable) -> bool:
        return key in self.fifo or key in self.main
