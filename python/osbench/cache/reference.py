"""Cache replacement, the readable way: one class per policy (lecture section 4).

This is the teaching code and the oracle for the native engine, which must agree with it
hit for hit. Every class has the same interface::

    cache = LRU(capacity=3)
    cache.access(key)          # True on a hit; a miss inserts the key (demand paging)
    len(cache), key in cache

Objects have unit size and ``capacity`` counts objects, except that the classes in
``SIZED_POLICIES`` also take ``access(key, next_use, size)`` with a capacity in bytes (their
``used`` then holds the bytes cached), and :class:`GDSF` also takes a ``cost``. :class:`OPT` is offline:
``access(key, next_use)`` also needs the time of the key's next access.
"""

from __future__ import annotations

import heapq
from collections import OrderedDict, deque
from collections.abc import Hashable, Sequence
from typing import Any, Optional

from osbench.errors import ArgumentError
from osbench.traces import NEVER, next_use_reference

_NONE: Any = object()  # "no key": a sentinel no user key can equal


class FIFO:
    """First in, first out: evict the object that entered first. Hits change nothing."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.queue: deque[Hashable] = deque()
        self.cached: dict[Hashable, int] = {}  # key -> size
        self.used = 0

    def access(self, key: Hashable, next_use: Optional[int] = None, size: int = 1) -> bool:
        if key in self.cached:
            return True
        if size > self.capacity:
            return False
        while self.used + size > self.capacity:
            self.used -= self.cached.pop(self.queue.popleft())
        self.queue.append(key)
        self.cached[key] = size
        self.used += size
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
        self.size: dict[Hashable, int] = {}
        self.used = 0

    def access(self, key: Hashable, next_use: Optional[int] = None, size: int = 1) -> bool:
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
        if size > self.capacity:
            return False
        while self.used + size > self.capacity:
            while self.min_freq not in self.by_freq:  # several evictions: the lowest count moves up
                self.min_freq += 1
            coldest = self.by_freq[self.min_freq]
            victim, _ = coldest.popitem(last=False)
            if not coldest:
                del self.by_freq[self.min_freq]
            del self.freq[victim]
            self.used -= self.size.pop(victim)
        self.size[key] = size
        self.used += size
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


class ARC:
    """Adaptive Replacement Cache (Megiddo and Modha, FAST 2003), Figure 4 of the paper.

    T1: cached, seen once recently. T2: cached, seen at least twice. B1, B2: ghosts, the keys
    recently evicted from T1 and T2. ``p`` is the target size of T1, a real number: a ghost hit
    in B1 says recency deserved more room (p grows), one in B2 that frequency did (p shrinks).
    Each OrderedDict lists its keys from least to most recently used.

    With ``size=`` (capacity in bytes) the rules are libCacheSim's ARC, which counts every list
    in bytes (a ghost keeps the size it was evicted with): see :meth:`_access_sized`."""

    def __init__(self, capacity: int) -> None:
        self.c = capacity
        self.p = 0.0
        # key -> size (1 without ``size=``)
        self.t1: OrderedDict[Hashable, int] = OrderedDict()
        self.t2: OrderedDict[Hashable, int] = OrderedDict()
        self.b1: OrderedDict[Hashable, int] = OrderedDict()
        self.b2: OrderedDict[Hashable, int] = OrderedDict()
        # sized mode: bytes in each list, and whether the last ghost hit was in B2
        self.bytes = {"t1": 0, "t2": 0, "b1": 0, "b2": 0}
        self.last_ghost_in_b2 = False

    def _replace(self, key_in_b2: bool) -> None:
        """REPLACE: evict T1's LRU into B1, or T2's LRU into B2."""
        if self.t1 and ((key_in_b2 and len(self.t1) == self.p) or len(self.t1) > self.p):
            old, _ = self.t1.popitem(last=False)
            self.b1[old] = 1
        else:
            old, _ = self.t2.popitem(last=False)
            self.b2[old] = 1

    def access(self, key: Hashable, next_use: Optional[int] = None, size: Optional[int] = None) -> bool:
        if size is not None:
            return self._access_sized(key, size)
        c = self.c
        if key in self.t1 or key in self.t2:  # Case I: a hit
            (self.t1 if key in self.t1 else self.t2).pop(key)
            self.t2[key] = 1
            return True
        if key in self.b1:  # Case II: ghost hit in B1
            delta = 1.0 if len(self.b1) >= len(self.b2) else len(self.b2) / len(self.b1)
            self.p = min(self.p + delta, float(c))
            self._replace(False)
            del self.b1[key]
            self.t2[key] = 1
            return False
        if key in self.b2:  # Case III: ghost hit in B2
            delta = 1.0 if len(self.b2) >= len(self.b1) else len(self.b1) / len(self.b2)
            self.p = max(self.p - delta, 0.0)
            self._replace(True)
            del self.b2[key]
            self.t2[key] = 1
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
        self.t1[key] = 1
        return False

    def _move(self, key: Hashable, src: str, dst: str) -> None:
        """Move ``key`` from list ``src`` to the most recent end of list ``dst``."""
        size = getattr(self, src).pop(key)
        getattr(self, dst)[key] = size
        self.bytes[src] -= size
        self.bytes[dst] += size

    def _drop_lru(self, name: str) -> None:
        _, size = getattr(self, name).popitem(last=False)
        self.bytes[name] -= size

    def _replace_sized(self) -> None:
        """libCacheSim's REPLACE in bytes: T1's LRU to B1 if T1 is over p (or at p after a B2
        ghost hit, the latest ghost hit counting even if its object was not admitted) or T2
        is empty; else T2's LRU to B2."""
        t1, b = self.bytes["t1"], self.last_ghost_in_b2
        if (t1 > 0 and (t1 > self.p or (t1 == self.p and b))) or self.bytes["t2"] == 0:
            self._move(next(iter(self.t1)), "t1", "b1")
        else:
            self._move(next(iter(self.t2)), "t2", "b2")

    def _access_sized(self, key: Hashable, size: int) -> bool:
        """As libCacheSim: a ghost hit adapts p and forgets the ghost even if the newcomer is
        then too large to admit; evictions run one at a time until the newcomer fits."""
        by = self.bytes
        if key in self.t1 or key in self.t2:
            self.last_ghost_in_b2 = False
            if key in self.t1:
                self._move(key, "t1", "t2")
            else:
                self.t2.move_to_end(key)
            return True
        ghost_hit = False
        if key in self.b1:
            self.last_ghost_in_b2, ghost_hit = False, True
            self.p = min(self.p + max(by["b2"] / by["b1"], 1.0), float(self.c))
            by["b1"] -= self.b1.pop(key)
        elif key in self.b2:
            self.last_ghost_in_b2, ghost_hit = True, True
            self.p = max(self.p - max(by["b1"] / by["b2"], 1.0), 0.0)
            by["b2"] -= self.b2.pop(key)
        if size > self.c:
            return False
        while by["t1"] + by["t2"] + size > self.c:
            if ghost_hit:
                self._replace_sized()
            elif by["t1"] + by["b1"] + size > self.c:
                if by["b1"] > 0:
                    self._drop_lru("b1")
                    self._replace_sized()
                else:
                    self._drop_lru("t1")  # T1 fills the cache: its LRU leaves without a ghost
            else:
                if sum(by.values()) >= 2 * self.c and by["b2"] > 0:
                    self._drop_lru("b2")
                self._replace_sized()
        if ghost_hit:
            self.t2[key] = size
            by["t2"] += size
            self.last_ghost_in_b2 = False
        else:
            self.t1[key] = size
            by["t1"] += size
        return False

    @property
    def used(self) -> int:
        """Bytes cached (T1 and T2), with ``size=``."""
        return self.bytes["t1"] + self.bytes["t2"]

    def __len__(self) -> int:
        return len(self.t1) + len(self.t2)

    def __contains__(self, key: Hashable) -> bool:
        return key in self.t1 or key in self.t2


class OPT:
    """Belady's optimal replacement (MIN, 1966), with demand paging: every miss inserts, and a
    full cache evicts the object whose next use is farthest away (never again = infinitely far).

    Offline: ``access(key, next_use)`` needs the index of the key's next access (``NEVER``
    when there is none). A heap of (-next_use, key) finds the victim; entries left behind by
    hits are stale and skipped. Which never-again object goes first changes no hit.

    With ``size=`` (libCacheSim's Belady in bytes) a miss evicts the farthest next uses until
    the newcomer fits; never-again objects still go first, so their order still changes no hit."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.next: dict[Hashable, int] = {}
        self.size: dict[Hashable, int] = {}
        self.used = 0
        self.heap: list[tuple[int, int, Hashable]] = []
        self.pushes = 0  # tie-breaker so keys themselves are never compared

    def access(self, key: Hashable, next_use: Optional[int] = None, size: int = 1) -> bool:
        if next_use is None:
            raise ArgumentError("next_use is not accepted as None: OPT needs each access's next use")
        hit = key in self.next
        if not hit:
            if size > self.capacity:
                return False
            while self.used + size > self.capacity:
                neg_next, _, victim = heapq.heappop(self.heap)
                if self.next.get(victim) == -neg_next:
                    del self.next[victim]
                    self.used -= self.size.pop(victim)
            self.size[key] = size
            self.used += size
        self.next[key] = next_use
        self.pushes += 1
        heapq.heappush(self.heap, (-next_use, self.pushes, key))
        return hit

    def __len__(self) -> int:
        return len(self.next)

    def __contains__(self, key: Hashable) -> bool:
        return key in self.next


class Sieve:
    """SIEVE (Zhang et al., NSDI 2024): a FIFO queue with one visited bit per object and a
    hand that sweeps from the oldest object towards the newest.

    A hit sets the visited bit and moves nothing. A newcomer enters at the new end with its
    bit clear. To evict, the hand starts where it stopped last time (at the oldest object the
    first time, or after it has passed the newest): each visited object it meets has its bit
    cleared and is kept; the first unvisited one is evicted, and the hand stays on its newer
    neighbour (or returns to the oldest object if there is none). As libCacheSim's Sieve."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.visited: dict[Hashable, bool] = {}
        # The queue as a doubly linked list: newer[k] is the neighbour towards the new end.
        self.newer: dict[Hashable, Any] = {}
        self.older: dict[Hashable, Any] = {}
        self.newest: Any = _NONE
        self.oldest: Any = _NONE
        self.hand: Any = _NONE
        self.size: dict[Hashable, int] = {}
        self.used = 0

    def access(self, key: Hashable, next_use: Optional[int] = None, size: int = 1) -> bool:
        if key in self.visited:
            self.visited[key] = True
            return True
        if size > self.capacity:
            return False
        while self.used + size > self.capacity:
            self._evict()
        self.visited[key] = False
        self.size[key] = size
        self.used += size
        self.older[key], self.newer[key] = self.newest, _NONE
        if self.newest is _NONE:
            self.oldest = key
        else:
            self.newer[self.newest] = key
        self.newest = key
        return False

    def _evict(self) -> None:
        key = self.oldest if self.hand is _NONE else self.hand
        while self.visited[key]:
            self.visited[key] = False
            key = self.oldest if self.newer[key] is _NONE else self.newer[key]
        self.hand = self.newer[key]
        older, newer = self.older.pop(key), self.newer.pop(key)
        del self.visited[key]
        self.used -= self.size.pop(key)
        if older is _NONE:
            self.oldest = newer
        else:
            self.newer[older] = newer
        if newer is _NONE:
            self.newest = older
        else:
            self.older[newer] = older

    def __len__(self) -> int:
        return len(self.visited)

    def __contains__(self, key: Hashable) -> bool:
        return key in self.visited


class S3FIFO:
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
        self.ghost_size = int(capacity * ghost_ratio)
        if self.small_size <= 0 or self.main_size <= 0:
            raise ArgumentError(
                f"capacity={capacity} is not accepted by s3fifo: its small queue (10%) and main queue "
                "must each hold at least one object, so capacity must be at least 10"
            )
        self.threshold = threshold
        self.small: OrderedDict[Hashable, int] = OrderedDict()  # oldest first, key -> hit count
        self.main: OrderedDict[Hashable, int] = OrderedDict()
        self.ghost: OrderedDict[Hashable, int] = OrderedDict()  # key -> size
        self.size: dict[Hashable, int] = {}  # cached key -> size
        self.small_used = self.main_used = self.ghost_used = 0
        self.has_evicted = False

    def access(self, key: Hashable, next_use: Optional[int] = None, size: int = 1) -> bool:
        if key in self.small:
            self.small[key] += 1
            return True
        ghost_size = self.ghost.pop(key, None)
        ghost_hit = ghost_size is not None
        if ghost_size is not None:
            self.ghost_used -= ghost_size
        if key in self.main:
            self.main[key] += 1
            return True
        if size > self.small_size:  # libCacheSim admits only what fits in small
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
                    if size <= self.ghost_size and key not in self.ghost:
                        while self.ghost_used + size > self.ghost_size:
                            self.ghost_used -= self.ghost.popitem(last=False)[1]
                        self.ghost[key] = size
                        self.ghost_used += size
                    return

    @property
    def used(self) -> int:
        """Bytes cached (small and main), with ``size=``."""
        return self.small_used + self.main_used

    def __len__(self) -> int:
        return len(self.small) + len(self.main)

    def __contains__(self, key: Hashable) -> bool:
        return key in self.small or key in self.main


class TwoQ:
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
        self.aout_size = int(capacity * aout_ratio)
        self.am_size = capacity - self.ain_size
        if self.ain_size <= 0:
            raise ArgumentError(
                f"capacity={capacity} is not accepted by twoq: its Ain queue (25%) must hold at least "
                "one object, so capacity must be at least 4"
            )
        # key -> size; with ``size=`` the capacity and the three targets count bytes
        self.ain: OrderedDict[Hashable, int] = OrderedDict()  # oldest first
        self.aout: OrderedDict[Hashable, int] = OrderedDict()
        self.am: OrderedDict[Hashable, int] = OrderedDict()  # least recent first
        self.ain_used = self.aout_used = self.am_used = 0

    def access(self, key: Hashable, next_use: Optional[int] = None, size: int = 1) -> bool:
        if key in self.ain:
            return True
        ghost_size = self.aout.pop(key, None)
        ghost_hit = ghost_size is not None
        if ghost_size is not None:
            self.aout_used -= ghost_size
        if key in self.am:
            self.am.move_to_end(key)
            return True
        if size > self.ain_size:  # libCacheSim admits only what fits in Ain (the ghost is gone)
            return False
        while self.ain_used + self.am_used + size > self.capacity:
            if self.ain_used > self.ain_size:
                old, old_size = self.ain.popitem(last=False)
                self.ain_used -= old_size
                if old_size <= self.aout_size and old not in self.aout:
                    while self.aout_used + old_size > self.aout_size:
                        self.aout_used -= self.aout.popitem(last=False)[1]
                    self.aout[old] = old_size
                    self.aout_used += old_size
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


GDSF_SCALE = 1.0e6
"""GDSF's value of one hit on a one-byte object (libCacheSim's constant)."""


class GDSF:
    """Greedy-Dual-Size-Frequency (Cherkasova 1998), lecture section 4.5: evict by value per
    byte. An object's priority is ``L + count * cost / size`` (count: its hits since it
    entered, starting at 1; size 1 without ``size=``; cost ``GDSF_SCALE`` = 1e6, libCacheSim's
    constant, without ``cost=``), recomputed at each hit; ``L`` (the inflation that ages old
    objects) becomes the priority of each evicted object. As libCacheSim's GDSF, a miss
    first inserts the newcomer and then evicts the lowest priority while the cache is over
    capacity, so a newcomer whose priority is the lowest leaves at once. Ties of priority go
    to the object accessed least recently. The priorities are float64 computed with the
    same operations in the same order as libCacheSim (``count * cost`` first, then ``/ size``,
    then ``L +``), so ties fall the same way.

    ``cost`` is the price of bringing the object in (a refetch, or the prefill recompute of
    a KV block), in any unit: an expensive object is worth keeping even if it is rarely
    used. Like its size, an object keeps the cost it entered with; the ``cost`` given with a
    hit is not looked at."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.inflation = 0.0
        self.clock = 0
        self.count: dict[Hashable, int] = {}
        self.stamp: dict[Hashable, tuple[float, int]] = {}  # key -> (priority, last access)
        self.heap: list[tuple[float, int, Hashable]] = []  # stale entries are skipped
        self.size: dict[Hashable, int] = {}
        self.cost: dict[Hashable, float] = {}
        self.used = 0

    def access(self, key: Hashable, next_use: Optional[int] = None, size: int = 1, cost: float = GDSF_SCALE) -> bool:
        self.clock += 1
        hit = key in self.count
        if hit:
            self.count[key] += 1
        else:
            if size > self.capacity:
                return False  # never admitted
            self.count[key] = 1
            self.size[key] = size
            self.cost[key] = cost
            self.used += size
        priority = self.inflation + self.count[key] * self.cost[key] / self.size[key]
        self.stamp[key] = (priority, self.clock)
        heapq.heappush(self.heap, (priority, self.clock, key))
        while self.used > self.capacity:
            priority, clock, victim = heapq.heappop(self.heap)
            if self.stamp.get(victim) == (priority, clock):
                self.inflation = priority
                del self.count[victim], self.stamp[victim], self.cost[victim]
                self.used -= self.size.pop(victim)
        return hit

    def __len__(self) -> int:
        return len(self.count)

    def __contains__(self, key: Hashable) -> bool:
        return key in self.count


POLICY_CLASSES: dict[str, Any] = {
    "fifo": FIFO,
    "lru": LRU,
    "lfu": LFU,
    "clock": Clock,
    "arc": ARC,
    "opt": OPT,
    "sieve": Sieve,
    "s3fifo": S3FIFO,
    "twoq": TwoQ,
    "gdsf": GDSF,
}


def make(policy: str, capacity: int, bit_on_insert: bool = False) -> Any:
    """A fresh cache of the named policy."""
    if policy == "clock":
        return Clock(capacity, bit_on_insert=bit_on_insert)
    return POLICY_CLASSES[policy](capacity)


SIZED_POLICIES: tuple[str, ...] = ("fifo", "lru", "lfu", "clock", "arc", "opt", "sieve", "s3fifo", "twoq", "gdsf")
"""Classes whose ``access`` takes ``size=`` (capacity then counts bytes, as in libCacheSim:
an object larger than the capacity is never admitted, a miss evicts until the newcomer fits,
a hit keeps the size the object entered with)."""

COSTED_POLICIES: tuple[str, ...] = ("gdsf",)
"""Classes whose ``access`` takes ``cost=`` (the value of keeping an object)."""


def replay(
    keys: Sequence[Hashable],
    policy: str,
    capacity: int,
    bit_on_insert: bool = False,
    sizes: Optional[Sequence[int]] = None,
    costs: Optional[Sequence[float]] = None,
) -> list[bool]:
    """Replay ``keys`` through a fresh cache; one hit flag per access. ``sizes``: one object
    size per access (capacity in bytes), for the policies in ``SIZED_POLICIES``; ``costs``:
    one cost per access, for the policies in ``COSTED_POLICIES``."""
    cache = make(policy, capacity, bit_on_insert)
    if costs is not None:
        unit = [1] * len(keys)
        return [
            cache.access(k, None, int(s), float(c)) for k, s, c in zip(keys, unit if sizes is None else sizes, costs)
        ]
    if sizes is not None:
        future = next_use_reference(keys) if policy == "opt" else [None] * len(keys)
        return [cache.access(k, n, int(s)) for k, n, s in zip(keys, future, sizes)]
    if policy == "opt":
        nexts = next_use_reference(keys)
        return [cache.access(k, n) for k, n in zip(keys, nexts)]
    return [cache.access(k) for k in keys]


__all__ = [
    "ARC",
    "COSTED_POLICIES",
    "FIFO",
    "GDSF",
    "LFU",
    "LRU",
    "NEVER",
    "OPT",
    "POLICY_CLASSES",
    "S3FIFO",
    "SIZED_POLICIES",
    "Clock",
    "Sieve",
    "TwoQ",
    "make",
    "replay",
]
