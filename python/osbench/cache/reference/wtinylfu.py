"""W-TinyLFU, a window LRU in front of an SLRU main cache, admission by a counting sketch: the
reference engine's class (the readable definition the native engine follows)."""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Hashable
from typing import Optional

from osbench.errors import ArgumentError

MASK32 = (1 << 32) - 1
MASK64 = (1 << 64) - 1
_P1 = 0x9E3779B185EBCA87
_P2 = 0xC2B2AE3D27D4EB4F
_P3 = 0x165667B19E3779F9
_P4 = 0x85EBCA77C2B2AE63
_P5 = 0x27D4EB2F165667C5
SEEDS = (0x12345678, 0x12344321)
"""The sketch's two hash seeds (libCacheSim's ``HASH_SEED0`` and ``HASH_SEED1``,
``libCacheSim/dataStructure/hash/hash.h``)."""
ERROR = 0.001
"""The sketch's target error rate, as ``WTinyLFU_init`` asks for it."""
SAMPLE = 32
"""Main-cache hits between two halvings of the counters, per object of main-cache capacity."""


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (64 - r))) & MASK64


def xxh64_u64(value: int, seed: int) -> int:
    """XXH64 (Collet's xxHash, 64-bit) of the 8 little-endian bytes of ``value``: the input
    shorter than a stripe, so one 8-byte round and the final avalanche."""
    h = (seed + _P5 + 8) & MASK64
    k = (_rotl((value * _P2) & MASK64, 31) * _P1) & MASK64
    h = (_rotl(h ^ k, 27) * _P1 + _P4) & MASK64
    h = ((h ^ (h >> 33)) * _P2) & MASK64
    h = ((h ^ (h >> 29)) * _P3) & MASK64
    return h ^ (h >> 32)


def sketch_shape(entries: int) -> tuple[int, int]:
    """(hashes, counters) of libCacheSim's counting Bloom filter for ``entries`` objects at
    :data:`ERROR` (``minimalIncrementCBF_init``, ``libCacheSim/dataStructure/minimalIncrementCBF.c``):
    ``-ln(error) / ln(2)**2`` counters per entry, ``ln(2)`` times that many hashes, rounded
    up; ``entries`` is a C ``int`` (the main cache's capacity, wrapped to 32 bits), the count
    at most ``INT_MAX`` and at least twice the hashes."""
    entries = ((entries + (1 << 31)) & MASK32) - (1 << 31)
    per_entry = -math.log(ERROR) / 0.480453013918201
    hashes = math.ceil(0.693147180559945 * per_entry)
    counters = int(min(math.ceil(per_entry * entries), 2**31 - 1))
    if counters < hashes:
        counters = 2 * hashes
    return hashes, counters


class WTinyLFU:
    """W-TinyLFU (Einziger, Friedman and Manes, 2017) as libCacheSim defines it
    (``libCacheSim/cache/eviction/WTinyLFU.c``: ``WTinyLFU_init``, ``WTinyLFU_find``,
    ``WTinyLFU_insert``, ``WTinyLFU_evict``, ``WTinyLFU_can_insert``; its defaults
    ``main-cache=SLRU,window-size=0.01``; the main SLRU as ``SLRU_init`` with
    ``seg-size=1:4``, ``libCacheSim/cache/eviction/SLRU.c``).

    The window, an LRU, holds ``int(capacity * window)``; the main cache the rest, in two LRU
    segments, probation ``int(1/5 * main)`` and protected ``int(4/5 * main)``. A hit in the
    window moves the object to the window's recent end. A hit in main counts the object in
    the sketch and moves it as SLRU does: from probation to protected's recent end, protected's
    least recent objects then cooling down to probation's recent end, probation's least
    recent leaving while it is over (a hit in protected stays in protected). Every
    ``32 * main`` main hits the sketch halves its counters. A miss admits only an object no
    larger than the window and than probation; while the cache cannot take it, one eviction
    runs: the window's least recent object (the candidate) leaves the window, into main if
    main has room for it (and the eviction goes on with the next candidate), else into main
    in place of main's victim (probation's least recent, or protected's if probation is
    empty) if the sketch counts the candidate more often than the victim, else out of the
    cache; each candidate is counted in the sketch. With the window empty main's victim
    leaves. The newcomer enters the window's recent end and is counted. An object entering
    main goes to the recent end of the first segment with room, or, if neither has, of
    probation after main evicts until it fits.

    One rule differs from the source at the commit read (``aa0fc40``), where an eviction that
    swaps the candidate for main's victim goes on with the next candidate: the build of the
    ``libcachesim`` 0.3.5 package ends the eviction there, and this class follows the build
    (hit for hit on random traces, unit and sized, ``tests/cache/test_peers.py``).

    The sketch is libCacheSim's counting Bloom filter (:func:`sketch_shape` for
    ``int(main)`` entries): ten counters per object at ``(a + i * b) % counters`` for
    ``i < 10``, ``a`` and ``b`` the low 32 bits of the XXH64 of the object's id under the two
    :data:`SEEDS` (in 32-bit arithmetic); a count is the least of its counters; counting an
    object adds one to all ten. The id is the key itself (an integer, taken modulo 2**64, as
    libCacheSim's ``obj_id``); a key that is not an integer is numbered in order of first
    appearance. With ``size=`` the capacity, window and segments count bytes."""

    def __init__(self, capacity: int, window: float = 0.01) -> None:
        self.capacity = capacity
        self.window_capacity = int(capacity * window)
        self.main_capacity = capacity - self.window_capacity
        self.segment_capacity = (int(1 / 5 * self.main_capacity), int(4 / 5 * self.main_capacity))
        if self.window_capacity < 1 or self.segment_capacity[0] < 1:
            raise ArgumentError(
                f"capacity={capacity} is not accepted by wtinylfu with window={window}: the window "
                f"({self.window_capacity}) and the main cache's probation segment "
                f"({self.segment_capacity[0]}) must each hold at least one object"
            )
        self.window_lru: OrderedDict[Hashable, int] = OrderedDict()  # least recent first
        self.window_used = 0
        self.segments: tuple[OrderedDict[Hashable, int], ...] = (OrderedDict(), OrderedDict())
        self.segment_used = [0, 0]
        self.segment_of: dict[Hashable, int] = {}
        self.hashes, n_counters = sketch_shape(self.main_capacity)
        self.counters = [0] * n_counters
        self.hits_to_halving = SAMPLE * self.main_capacity
        self.main_hits = 0
        self.numbers: dict[Hashable, int] = {}

    # ------------------------------------------------------------------ the sketch

    def _slots(self, key: Hashable) -> list[int]:
        if isinstance(key, int):
            obj_id = key & MASK64
        else:
            obj_id = self.numbers.setdefault(key, len(self.numbers))
        a = xxh64_u64(obj_id, SEEDS[0]) & MASK32
        b = xxh64_u64(obj_id, SEEDS[1]) & MASK32
        n = len(self.counters)
        return [((a + i * b) & MASK32) % n for i in range(self.hashes)]

    def estimate(self, key: Hashable) -> int:
        """How often the sketch has counted ``key``: the least of its counters."""
        return min(self.counters[x] for x in self._slots(key))

    def _count(self, key: Hashable) -> None:
        # libCacheSim adds one to every counter of the key (its minimum is never the largest
        # 32-bit value on a trace shorter than 2**32 accesses).
        for x in self._slots(key):
            self.counters[x] = (self.counters[x] + 1) & MASK32

    # ------------------------------------------------------------------ the main SLRU

    @property
    def main_used(self) -> int:
        return self.segment_used[0] + self.segment_used[1]

    def _main_push(self, key: Hashable, size: int, s: int) -> None:
        self.segments[s][key] = size
        self.segment_used[s] += size
        self.segment_of[key] = s

    def _main_take(self, key: Hashable, s: int) -> int:
        size = self.segments[s].pop(key)
        self.segment_used[s] -= size
        return size

    def _main_victim(self) -> Hashable:
        s = 0 if self.segments[0] else 1
        return next(iter(self.segments[s]))

    def _main_evict(self) -> None:
        key = self._main_victim()
        self._main_take(key, self.segment_of.pop(key))

    def _main_insert(self, key: Hashable, size: int) -> None:
        into = next((s for s in (0, 1) if self.segment_used[s] + size <= self.segment_capacity[s]), None)
        if into is None:
            while self.main_used + size > self.main_capacity:
                self._main_evict()
            into = 0
        self._main_push(key, size, into)

    def _main_hit(self, key: Hashable, s: int) -> None:
        if s == 1:
            self.segments[1].move_to_end(key)
            return
        self._main_push(key, self._main_take(key, 0), 1)
        while self.segment_used[1] > self.segment_capacity[1]:
            self._cool(1)

    def _cool(self, s: int) -> None:
        """Segment ``s`` is over its allowance: its least recent object moves down one."""
        if s == 0:
            self._main_evict()
            return
        key = next(iter(self.segments[1]))
        self._main_push(key, self._main_take(key, 1), 0)
        while self.segment_used[0] > self.segment_capacity[0]:
            self._cool(0)

    # ------------------------------------------------------------------ the cache

    def access(self, key: Hashable, next_use: Optional[int] = None, size: int = 1) -> bool:
        if key in self.window_lru:
            self.window_lru.move_to_end(key)
            return True
        s = self.segment_of.get(key)
        if s is not None:
            self._main_hit(key, s)
            self._count(key)
            self.main_hits += 1
            if self.main_hits >= self.hits_to_halving:
                self.main_hits = 0
                self.counters = [c >> 1 for c in self.counters]
            return True
        if size > self.capacity or size > self.window_capacity or size > self.segment_capacity[0]:
            return False
        while self.window_used + self.main_used + size > self.capacity:
            self._evict()
        self.window_lru[key] = size
        self.window_used += size
        self._count(key)
        return False

    def _evict(self) -> None:
        """libCacheSim's ``WTinyLFU_evict``: candidates leave the window until one leaves the
        cache, or main's victim does once the window is empty."""
        while self.window_lru:
            key, size = next(iter(self.window_lru.items()))
            done = True
            if self.main_used + size <= self.main_capacity:
                self._main_insert(key, size)
                done = False
            elif self.estimate(key) > self.estimate(self._main_victim()):
                self._main_evict()
                self._main_insert(key, size)
            del self.window_lru[key]
            self.window_used -= size
            self._count(key)
            if done:
                return
        self._main_evict()

    @property
    def used(self) -> int:
        """Bytes held (objects, with unit sizes)."""
        return self.window_used + self.main_used

    def __len__(self) -> int:
        return len(self.window_lru) + len(self.segment_of)

    def __contains__(self, key: Hashable) -> bool:
        return key in self.window_lru or key in self.segment_of
