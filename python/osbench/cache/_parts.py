"""The pieces the reference policies share (:mod:`osbench.cache.reference` holds one file per
policy, so they live beside it): :class:`DemandPaging`, the access of half of them;
:class:`Members`, the cached keys of those that draw victims at random; :class:`Ghost`, the
recently evicted ids some of them remember; :class:`GhostLookup`, the access of those whose
lookup of a missing object changes their state before an admission filter is asked."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, Optional

from osbench.splitmix import SplitMix64


class DemandPaging(ABC):
    """A cache of ``capacity`` objects (of bytes, with ``size=``) where every miss that fits
    inserts the object. ``size`` holds each cached key's size and ``used`` their sum.

    One access runs as libCacheSim's ``cache_get_base`` runs a policy: look the key up; on a
    hit let the policy note it; on a miss refuse an object the cache cannot take, make room
    (the policy picks each victim) until the newcomer fits, and insert it. This class keeps
    what every such cache keeps, each cached object's size and the bytes they take; a policy
    keeps its own order and says what makes it that policy: what a hit does (:meth:`_hit`),
    which object leaves (:meth:`_evict`) and where a newcomer goes (:meth:`_insert`)."""

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
        """A hit on ``key``: by default it changes nothing (FIFO's order ignores hits)."""
        return None

    def _fits(self, size: int) -> bool:
        """Whether a missed object of ``size`` may enter: by default, when it is no larger than
        the cache (a larger one changes nothing)."""
        return size <= self.capacity

    @abstractmethod
    def _evict(self) -> Hashable:
        """Take the policy's victim out of the policy's own order and return its key (its size
        is then dropped here)."""

    @abstractmethod
    def _insert(self, key: Hashable) -> None:
        """Put the newcomer ``key`` in the policy's own order (its size is already in
        ``size``)."""

    def __len__(self) -> int:
        return len(self.size)

    def __contains__(self, key: Hashable) -> bool:
        return key in self.size


class Members:
    """The cached keys of a policy that draws its victims at random (random, hyperbolic,
    lhd), in a list: a draw is position ``rng.below(len)``; a newcomer joins at the end, and a
    leaving key's place is taken by the last key (swap-remove). The native engine keeps them
    the same way, so one seed draws the same objects in both engines."""

    def __init__(self) -> None:
        self.keys: list[Hashable] = []
        self.position: dict[Hashable, int] = {}  # key -> its index in keys

    def draw(self, rng: SplitMix64) -> int:
        """A position drawn uniformly from ``rng``."""
        return rng.below(len(self.keys))

    def append(self, key: Hashable) -> None:
        self.position[key] = len(self.keys)
        self.keys.append(key)

    def swap_remove(self, at: int) -> Hashable:
        """Take out the key at position ``at`` (the last key moves into its place); return it."""
        key = self.keys[at]
        last = self.keys.pop()
        if at < len(self.keys):
            self.keys[at] = last
            self.position[last] = at
        del self.position[key]
        return key

    def __getitem__(self, at: int) -> Hashable:
        return self.keys[at]

    def __len__(self) -> int:
        return len(self.keys)

    def __contains__(self, key: Hashable) -> bool:
        return key in self.position


class Ghost:
    """The ids (and sizes) of recently evicted objects, oldest first, at most ``limit`` bytes
    (objects, with unit sizes): S3-FIFO's ghost, 2Q's Aout, CLOCK2Q+'s ghost."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.ids: OrderedDict[Hashable, int] = OrderedDict()  # key -> size, oldest first
        self.used = 0

    def add(self, key: Hashable, size: int) -> None:
        """Remember ``key`` at the new end, the oldest ids leaving to make room; an id already
        here stays where it is, and one larger than the ghost is not remembered."""
        if size > self.limit or key in self.ids:
            return
        while self.used + size > self.limit:
            self.used -= self.ids.popitem(last=False)[1]
        self.ids[key] = size
        self.used += size

    def forget(self, key: Hashable) -> bool:
        """Take ``key`` out; whether it was here (a ghost hit)."""
        size = self.ids.pop(key, None)
        if size is None:
            return False
        self.used -= size
        return True


class GhostLookup(ABC):
    """The access of a policy whose lookup of a missing object changes its state (a ghost hit
    forgets the ghost; Cacheus learns from the miss), so that an admission filter is asked
    between its lookup and its insertion, in libCacheSim's order (its ``find``, then its
    ``can_insert``). The policy defines ``_access(key, size, admit)``; ``admit`` is None
    without a filter."""

    def access(self, key: Hashable, next_use: Optional[int] = None, size: int = 1) -> bool:
        return self._access(key, size, None)

    def access_gated(self, key: Hashable, next_use: Optional[int], size: Optional[int], gate: Any) -> bool:
        """:meth:`access` behind an admission filter, in libCacheSim's order (its ``find``, then
        its ``can_insert``): what the lookup changes stays changed whether or not the object is
        then admitted; where the policy checks sizes against ``gate`` is its ``_access``'s."""
        return self._access(key, 1 if size is None else size, gate.admit)

    @abstractmethod
    def _access(self, key: Hashable, size: int, admit: Optional[Callable[[Hashable, int], bool]]) -> bool:
        """One access; ``admit(key, size)``, when given, is asked before a newcomer enters."""
