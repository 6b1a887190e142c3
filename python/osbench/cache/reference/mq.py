"""MQ, Multi-Queue: the reference engine's class (the readable definition the native engine follows)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable
from typing import Optional

INT32_MAX = 2**31 - 1


class MQ:
    """Multi-Queue (Zhou, Philbin and Li, USENIX ATC 2001) as libCacheSim defines it
    (``libCacheSim/cache/eviction/MQ.c``: ``MQ_init``, ``MQ_find``, ``MQ_insert``,
    ``MQ_evict``, ``MQ_adjust``, ``MQ_queue_num``; the Python binding's ``MQ(n_queue=8,
    lifetime=10000, qout_size_ratio=4.0)`` passes them to ``MQ_init``).

    ``n_queue`` LRU queues; an object with access count ``f`` lives in queue
    ``min(floor(log2 f), n_queue - 1)``. A virtual clock ticks once per hit and once per
    insertion. A hit counts the access (up to 2**31 - 1), moves the object to the recent end
    of its count's queue and sets its expiry to ``clock + lifetime``; a miss on an id held in
    Qout (a FIFO of evicted ids with their counts, ``int(capacity * qout_size_ratio)``
    entries) takes the id out of Qout, and the object enters with its remembered count plus
    one, otherwise with count 1, at the recent end of its count's queue, with the same expiry.
    After each hit and each insertion the clock ticks and, for queues 1 and up in turn, the
    least recent object of the queue, if its expiry is below the clock, moves to the recent
    end of the queue below with a new expiry. The victim is the least recent object of the
    lowest non-empty queue; its id and count enter Qout (whose oldest ids leave while it has
    no room). An id found in Qout leaves it even when its object is not admitted.

    With ``size=`` the capacity and Qout count bytes: an object larger than the cache is never
    admitted, victims leave until the newcomer fits, and an id enters Qout only if its size
    fits Qout."""

    def __init__(self, capacity: int, n_queue: int = 8, lifetime: int = 10000, qout_size_ratio: float = 4.0) -> None:
        self.capacity = capacity
        self.n_queue = n_queue
        self.lifetime = lifetime
        self.qout_size = int(capacity * qout_size_ratio)
        self.queues: list[OrderedDict[Hashable, None]] = [OrderedDict() for _ in range(n_queue)]  # least recent first
        self.queue: dict[Hashable, int] = {}
        self.count: dict[Hashable, int] = {}
        self.expiry: dict[Hashable, int] = {}
        self.size: dict[Hashable, int] = {}
        self.used = 0
        self.qout: OrderedDict[Hashable, tuple[int, int]] = OrderedDict()  # key -> (size, count), oldest first
        self.qout_used = 0
        self.clock = 0

    def _queue_of(self, count: int) -> int:
        q = 0
        while count > 1 and q < self.n_queue - 1:
            count >>= 1
            q += 1
        return q

    def _place(self, key: Hashable, q: int) -> None:
        self.queues[q][key] = None
        self.queue[key] = q

    def access(self, key: Hashable, next_use: Optional[int] = None, size: int = 1) -> bool:
        if key in self.queue:
            del self.queues[self.queue[key]][key]
            self.count[key] = min(self.count[key] + 1, INT32_MAX)
            self._place(key, self._queue_of(self.count[key]))
            self.expiry[key] = self.clock + self.lifetime
            self._adjust()
            return True
        remembered = self.qout.pop(key, None)
        if remembered is not None:
            self.qout_used -= remembered[0]
        if size > self.capacity:
            return False
        while self.used + size > self.capacity:
            self._evict()
        count = 1 if remembered is None else min(remembered[1] + 1, INT32_MAX)
        self.count[key] = count
        self.size[key] = size
        self.used += size
        self._place(key, self._queue_of(count))
        self.expiry[key] = self.clock + self.lifetime
        self._adjust()
        return False

    def _adjust(self) -> None:
        self.clock += 1
        for q in range(1, self.n_queue):
            if self.queues[q]:
                oldest = next(iter(self.queues[q]))
                if self.expiry[oldest] < self.clock:
                    del self.queues[q][oldest]
                    self._place(oldest, q - 1)
                    self.expiry[oldest] = self.clock + self.lifetime

    def _evict(self) -> None:
        q = next(i for i in range(self.n_queue) if self.queues[i])
        victim, _ = self.queues[q].popitem(last=False)
        del self.queue[victim], self.expiry[victim]
        count, size = self.count.pop(victim), self.size.pop(victim)
        self.used -= size
        if size <= self.qout_size:
            while self.qout_used + size > self.qout_size:
                self.qout_used -= self.qout.popitem(last=False)[1][0]
            self.qout[victim] = (size, count)
            self.qout_used += size

    def __len__(self) -> int:
        return len(self.queue)

    def __contains__(self, key: Hashable) -> bool:
        return key in self.queue
