"""Cache replacement, the readable way: one class per policy (lecture section 4).

This is the teaching code and the oracle for the native engine, which must agree with it
hit for hit. Every class has the same interface::

    cache = LRU(capacity=3)
    cache.access(key)          # True on a hit; a miss inserts the key (demand paging)
    len(cache), key in cache

Objects have unit size; ``capacity`` counts objects. :class:`OPT` is offline:
``access(key, next_use)`` also needs the time of the key's next access.
"""

from __future__ import annotations

import heapq
from collections import OrderedDict, deque
from typing import Any, Hashable, Optional, Sequence

from osbench.traces import NEVER, next_use_reference


class FIFO:
    """First in, first out: evict the object that entered first. Hits change nothing."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.queue: deque[Hashable] = deque()
        self.cached: set[Hashable] = set()

    def access(self, key: Hashable, next_use: Optional[int] = None) -> bool:
        if key in self.cached:
            return True
        if len(self.queue) == self.capacity:
            self.cached.discard(self.queue.popleft())
        self.queue.append(key)
        self.cached.add(key)
        return False

    def __len__(self) -> int:
        return len(self.queue)

    def __contains__(self, key: Hashable) -> bool:
        return key in self.cached


class LRU:
    """Least recently used: evict the object whose last access is oldest.

    An OrderedDict keeps keys in access order: the first is the least recently used."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.order: OrderedDict[Hashable, None] = OrderedDict()

    def access(self, key: Hashable, next_use: Optional[int] = None) -> bool:
        if key in self.order:
            self.order.move_to_end(key)
            return True
        if len(self.order) == self.capacity:
            self.order.popitem(last=False)
        self.order[key] = None
        return False

    def __len__(self) -> int:
        return len(self.order)

    def __contains__(self, key: Hashable) -> bool:
        return key in self.order


class LFU:
    """Least frequently used: evict the object with the fewest accesses since it entered.

    Counts start at 1 on insert and are forgotten on eviction. Ties go to the least recently
    used: each frequency has its own recency list, and an object only enters list f when it
    is accessed, so the first entry of the lowest list is the one to evict."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.freq: dict[Hashable, int] = {}
        self.by_freq: dict[int, OrderedDict[Hashable, None]] = {}
        self.min_freq = 0

    def access(self, key: Hashable, next_use: Optional[int] = None) -> bool:
        f = self.freq.get(key, 0)
        if f:
            del self.by_freq[f][key]
            if not self.by_freq[f]:
                del self.by_freq[f]
                if self.min_freq == f:
                    self.min_freq = f + 1
            self.by_freq.setdefault(f + 1, OrderedDict())[key] = None
            self.freq[key] = f + 1
            return True
        if len(self.freq) == self.capacity:
            coldest = self.by_freq[self.min_freq]
            victim, _ = coldest.popitem(last=False)
            if not coldest:
                del self.by_freq[self.min_freq]
            del self.freq[victim]
        self.by_freq.setdefault(1, OrderedDict())[key] = None
        self.freq[key] = 1
        self.min_freq = 1
        return False

    def __len__(self) -> int:
        return len(self.freq)

    def __contains__(self, key: Hashable) -> bool:
        return key in self.freq


class Clock:
    """CLOCK, or second chance: the cached objects sit on a circle, one reference bit each.

    A hit sets the bit. On a miss with a full cache the hand sweeps: a set bit is cleared and
    the hand moves on; the first object with a clear bit is evicted, the newcomer takes its
    slot, and the hand moves past it. A newcomer's bit starts clear (libCacheSim's CLOCK);
    ``bit_on_insert=True`` starts it set, as in the textbook."""

    def __init__(self, capacity: int, bit_on_insert: bool = False) -> None:
        self.capacity = capacity
        self.bit_on_insert = bit_on_insert
        self.slots: list[Hashable] = []
        self.hand = 0
        self.referenced: dict[Hashable, bool] = {}

    def access(self, key: Hashable, next_use: Optional[int] = None) -> bool:
        if key in self.referenced:
            self.referenced[key] = True
            return True
        if len(self.slots) < self.capacity:
            self.slots.append(key)
        else:
            while self.referenced[self.slots[self.hand]]:
                self.referenced[self.slots[self.hand]] = False
                self.hand = (self.hand + 1) % len(self.slots)
            del self.referenced[self.slots[self.hand]]
            self.slots[self.hand] = key
            self.hand = (self.hand + 1) % len(self.slots)
        self.referenced[key] = self.bit_on_insert
        return False

    def __len__(self) -> int:
        return len(self.slots)

    def __contains__(self, key: Hashable) -> bool:
        return key in self.referenced


class ARC:
    """Adaptive Replacement Cache (Megiddo and Modha, FAST 2003), Figure 4 of the paper.

    T1: cached, seen once recently. T2: cached, seen at least twice. B1, B2: ghosts, the keys
    recently evicted from T1 and T2. ``p`` is the target size of T1, a real number: a ghost hit
    in B1 says recency deserved more room (p grows), one in B2 that frequency did (p shrinks).
    Each OrderedDict lists its keys from least to most recently used."""

    def __init__(self, capacity: int) -> None:
        self.c = capacity
        self.p = 0.0
        self.t1: OrderedDict[Hashable, None] = OrderedDict()
        self.t2: OrderedDict[Hashable, None] = OrderedDict()
        self.b1: OrderedDict[Hashable, None] = OrderedDict()
        self.b2: OrderedDict[Hashable, None] = OrderedDict()

    def _replace(self, key_in_b2: bool) -> None:
        """REPLACE: evict T1's LRU into B1, or T2's LRU into B2."""
        if self.t1 and ((key_in_b2 and len(self.t1) == self.p) or len(self.t1) > self.p):
            old, _ = self.t1.popitem(last=False)
            self.b1[old] = None
        else:
            old, _ = self.t2.popitem(last=False)
            self.b2[old] = None

    def access(self, key: Hashable, next_use: Optional[int] = None) -> bool:
        c = self.c
        if key in self.t1 or key in self.t2:  # Case I: a hit
            (self.t1 if key in self.t1 else self.t2).pop(key)
            self.t2[key] = None
            return True
        if key in self.b1:  # Case II: ghost hit in B1
            delta = 1.0 if len(self.b1) >= len(self.b2) else len(self.b2) / len(self.b1)
            self.p = min(self.p + delta, float(c))
            self._replace(False)
            del self.b1[key]
            self.t2[key] = None
            return False
        if key in self.b2:  # Case III: ghost hit in B2
            delta = 1.0 if len(self.b2) >= len(self.b1) else len(self.b1) / len(self.b2)
            self.p = max(self.p - delta, 0.0)
            self._replace(True)
            del self.b2[key]
            self.t2[key] = None
            return False
        # Case IV: a key in no list
        l1 = len(self.t1) + len(self.b1)
        total = l1 + len(self.t2) + len(self.b2)
        if l1 == c:
            if len(self.t1) < c:
                self.b1.popitem(last=False)
                self._replace(False)
            else:
                self.t1.popitem(last=False)
        elif total >= c:
            if total == 2 * c:
                self.b2.popitem(last=False)
            self._replace(False)
        self.t1[key] = None
        return False

    def __len__(self) -> int:
        return len(self.t1) + len(self.t2)

    def __contains__(self, key: Hashable) -> bool:
        return key in self.t1 or key in self.t2


class OPT:
    """Belady's optimal replacement (MIN, 1966), with demand paging: every miss inserts, and a
    full cache evicts the object whose next use is farthest away (never again = infinitely far).

    Offline: ``access(key, next_use)`` needs the index of the key's next access (``NEVER``
    when there is none). A heap of (-next_use, key) finds the victim; entries left behind by
    hits are stale and skipped. Which never-again object goes first changes no hit."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.next: dict[Hashable, int] = {}
        self.heap: list[tuple[int, int, Hashable]] = []
        self.pushes = 0  # tie-breaker so keys themselves are never compared

    def access(self, key: Hashable, next_use: Optional[int] = None) -> bool:
        if next_use is None:
            raise ValueError("next_use is not accepted as None: OPT needs each access's next use")
        hit = key in self.next
        if not hit and len(self.next) == self.capacity:
            while True:
                neg_next, _, victim = heapq.heappop(self.heap)
                if self.next.get(victim) == -neg_next:
                    del self.next[victim]
                    break
        self.next[key] = next_use
        self.pushes += 1
        heapq.heappush(self.heap, (-next_use, self.pushes, key))
        return hit

    def __len__(self) -> int:
        return len(self.next)

    def __contains__(self, key: Hashable) -> bool:
        return key in self.next


POLICY_CLASSES: dict[str, Any] = {"fifo": FIFO, "lru": LRU, "lfu": LFU, "clock": Clock, "arc": ARC, "opt": OPT}


def make(policy: str, capacity: int, bit_on_insert: bool = False) -> Any:
    """A fresh cache of the named policy."""
    if policy == "clock":
        return Clock(capacity, bit_on_insert=bit_on_insert)
    return POLICY_CLASSES[policy](capacity)


def replay(keys: Sequence[Hashable], policy: str, capacity: int, bit_on_insert: bool = False) -> list[bool]:
    """Replay ``keys`` through a fresh cache; one hit flag per access."""
    cache = make(policy, capacity, bit_on_insert)
    if policy == "opt":
        nexts = next_use_reference(keys)
        return [cache.access(k, n) for k, n in zip(keys, nexts)]
    return [cache.access(k) for k in keys]


__all__ = ["FIFO", "LRU", "LFU", "Clock", "ARC", "OPT", "POLICY_CLASSES", "make", "replay", "NEVER"]
