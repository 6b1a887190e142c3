"""The access every demand-paging reference policy shares: the base class of most classes of
:mod:`osbench.cache.reference` (it lives beside that package, which holds one file per policy).

One access runs as libCacheSim's ``cache_get_base`` runs a policy: look the key up; on a hit
let the policy note it; on a miss refuse an object the cache cannot take, make room (the
policy picks each victim) until the newcomer fits, and insert it. The class keeps what every
such cache keeps, each cached object's size and the bytes they take; a policy keeps its own
order and says what makes it that policy: what a hit does (:meth:`_hit`), which object leaves
(:meth:`_evict`) and where a newcomer goes (:meth:`_insert`)."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Optional


class DemandPaging:
    """A cache of ``capacity`` objects (of bytes, with ``size=``) where every miss that fits
    inserts the object. ``size`` holds each cached key's size and ``used`` their sum."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.size: dict[Hashable, int] = {}  # cached key -> size
        self.used = 0

    def access(self, key: Hashable, next_use: Optional[int] = None, size: int = 1) -> bool:
        """True on a hit; a miss inserts the key, evicting until it fits, unless the cache
        cannot take it (:meth:`_fits`)."""
        if key in self.size:
            self._hit(key)
            return True
        if not self._fits(size):
            return False
        while self.used + size > self.capacity:
            self.used -= self.size.pop(self._evict())
        self.size[key] = size
        self.used += size
        self._insert(key)
        return False

    def _hit(self, key: Hashable) -> None:
        """A hit on ``key``: by default it changes nothing."""

    def _fits(self, size: int) -> bool:
        """Whether a missed object of ``size`` may enter: by default, when it is no larger than
        the cache (a larger one changes nothing)."""
        return size <= self.capacity

    def _evict(self) -> Hashable:
        """Take the policy's victim out of the policy's own order and return its key (its size
        is then dropped here)."""
        raise NotImplementedError

    def _insert(self, key: Hashable) -> None:
        """Put the newcomer ``key`` in the policy's own order (its size is already in
        ``size``)."""
        raise NotImplementedError

    def __len__(self) -> int:
        return len(self.size)

    def __contains__(self, key: Hashable) -> bool:
        return key in self.size
