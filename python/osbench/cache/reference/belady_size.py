"""Belady-size: the reference engine's class (the readable definition the native engine follows)."""

from __future__ import annotations

import math
from collections.abc import Hashable
from typing import Optional

from osbench.errors import ArgumentError
from osbench.traces import NEVER


def score(size: int, next_use: int, now: int) -> float:
    """``ln(size) + ln(next_use - now)``: bytes times distance, in libCacheSim's floats; minus
    infinity for a distance of 0 or less (libCacheSim's ``log(0)``, and the NaN of a negative
    distance, which its comparison never picks)."""
    if next_use <= now:
        return -math.inf
    return math.log(size) + math.log(next_use - now)


class BeladySize:
    """Belady's MIN weighed by size (``belady-size``), as libCacheSim's BeladySize defines it
    (``libCacheSim/cache/eviction/BeladySize.c``), with the victim found exactly. Offline:
    ``access(key, next_use)`` needs the index of the key's next access (``NEVER`` when none).

    The rules, from ``BeladySize_find``, ``BeladySize_insert`` and ``BeladySize_to_evict`` under
    ``cache_get_base`` (``libCacheSim/cache/cache.c``):

    - ``now`` counts the accesses so far, this one included (``cache->n_req``, incremented
      before the lookup, also for an object too large to enter).
    - A hit updates the object's next use; when it is the object's last use (never again) the
      object is taken out (``BeladySize_remove``), and the access still counts as a hit.
    - A miss of an object larger than the capacity changes nothing. Otherwise victims leave
      until the newcomer fits, and then the newcomer enters, unless it is never used again:
      ``BeladySize_insert`` declines it, after the room for it has been made.
    - The victim has the largest ``ln(size) + ln(next_use - now)`` (``score``), computed in
      floats as libCacheSim computes it; a distance of 0 scores minus infinity, so that object
      leaves only when nothing else is cached. Among equal scores the later next use leaves.

    Where libCacheSim differs: it samples ``n-sample`` (128) objects per eviction, with
    replacement, from its hash table's bucket heads (``hashtable_rand_obj``, driven by a
    process-wide random state), and keeps the first of the largest sampled scores. So it
    agrees with this class miss for miss whenever the sample holds the largest score (on a
    cache of a few objects it always does, and ties of score are then the only freedom: they
    need sizes whose products with distances coincide); on a cache of many objects the sample
    misses the largest score now and then, and libCacheSim's hits are a random approximation
    of these. When the only object cached has a distance of 0, libCacheSim finds no victim
    and calls its search again without end; this class evicts it. Its state is not a function
    of the trace alone (the random state is shared with every other sampling cache of the
    process), which is why the table names no libCacheSim class for it.

    Unit sizes make the score the logarithm of the distance: the order is then OPT's (the
    farthest next use first), except that an object never used again never enters."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.now = 0
        self.next: dict[Hashable, int] = {}
        self.size: dict[Hashable, int] = {}
        self.used = 0

    def access(self, key: Hashable, next_use: Optional[int] = None, size: int = 1) -> bool:
        if next_use is None:
            raise ArgumentError("next_use is not accepted as None: belady-size needs each access's next use")
        self.now += 1
        never = next_use >= int(NEVER)
        if key in self.next:
            if never:
                del self.next[key]
                self.used -= self.size.pop(key)
            else:
                self.next[key] = next_use
            return True
        if size > self.capacity:
            return False
        while self.used + size > self.capacity and self.next:
            victim = max(self.next, key=lambda k: (score(self.size[k], self.next[k], self.now), self.next[k]))
            del self.next[victim]
            self.used -= self.size.pop(victim)
        if not never:
            self.next[key] = next_use
            self.size[key] = size
            self.used += size
        return False

    def __len__(self) -> int:
        return len(self.next)

    def __contains__(self, key: Hashable) -> bool:
        return key in self.next
