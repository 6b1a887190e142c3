"""ARC, Adaptive Replacement Cache: the reference engine's class (the readable definition the native engine follows)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, Optional


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

    def access_gated(self, key: Hashable, next_use: Optional[int], size: Optional[int], gate: Any) -> bool:
        """:meth:`access` behind an admission filter, in libCacheSim's order (``ARC_find``, then
        ``can_insert``): a ghost hit adapts p and forgets the ghost whether or not ``gate``
        then admits the object. libCacheSim's rules (:meth:`_access_sized`) in both modes, as
        the native engine's."""
        return self._access_sized(key, 1 if size is None else size, gate.admit)

    def _access_sized(self, key: Hashable, size: int, admit: Optional[Callable[[Hashable, int], bool]] = None) -> bool:
        """As libCacheSim: a ghost hit adapts p and forgets the ghost even if the newcomer is
        then too large to admit (or refused by ``admit``, an admission filter's question);
        evictions run one at a time until the newcomer fits."""
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
        if (admit is not None and not admit(key, size)) or size > self.c:
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
