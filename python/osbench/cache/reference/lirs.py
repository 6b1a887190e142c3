"""LIRS: the reference engine's class (the readable definition the native engine follows)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Optional

from osbench.errors import ArgumentError


@dataclass
class Entry:
    """One copy of a block in the stack S, the queue Q or NH (libCacheSim keeps one object per
    list and copy)."""

    key: Hashable
    size: int
    is_lir: bool = False
    in_cache: bool = True


class Copies:
    """One of LIRS's LRU lists: copies of blocks by a token each, oldest first (the bottom), a
    block's newest copy found by its key until any copy of it leaves."""

    def __init__(self) -> None:
        self.order: OrderedDict[int, Entry] = OrderedDict()
        self.newest: dict[Hashable, int] = {}
        self.tokens = 0

    def __len__(self) -> int:
        return len(self.order)

    def __getitem__(self, token: int) -> Entry:
        return self.order[token]

    def find(self, key: Hashable) -> Optional[int]:
        return self.newest.get(key)

    def insert(self, key: Hashable, size: int, is_lir: bool = False) -> int:
        """A new copy of ``key`` on top."""
        token = self.tokens
        self.tokens += 1
        self.order[token] = Entry(key, size, is_lir)
        self.newest[key] = token
        return token

    def touch(self, token: int) -> None:
        self.order.move_to_end(token)

    def remove(self, token: int) -> Entry:
        """The copy leaves; its block is not found any more (even with another copy left)."""
        entry = self.order.pop(token)
        self.newest.pop(entry.key, None)
        return entry

    def bottom(self) -> Optional[int]:
        return next(iter(self.order), None)

    def discard(self, key: Hashable) -> None:
        """The block's newest copy leaves, if it is found."""
        token = self.find(key)
        if token is not None:
            self.remove(token)


class LIRS:
    """LIRS (Jiang and Zhang, SIGMETRICS 2002) as libCacheSim implements it
    (``libCacheSim/cache/eviction/LIRS.c``), with three LRU lists: the stack S (LIR blocks and
    HIR blocks, resident or not), the queue Q (resident HIR blocks) and NH (the non-resident
    HIR blocks of S, oldest first). Limits: ``hirs_limit = max(1, int(0.01 * capacity))``
    and ``lirs_limit = capacity - hirs_limit``, in objects or bytes; libCacheSim's class has
    no parameters. Each list is an LRU whose new end is its top; a block has one copy per
    list it is in, each with its own flags and the size it entered with.

    One access, as ``cache_get_base`` runs ``LIRS_find``, ``LIRS_can_insert``, ``LIRS_evict``
    and ``LIRS_insert``, then ``limitStack``:

    - Lookup: the block's copies in S and in Q, if any, move to their tops. A LIR block hits
      and S is pruned (its bottom HIR blocks leave S, the non-resident ones NH too). A
      resident HIR block in S hits and turns LIR: its Q copy leaves, LIR blocks are demoted
      (``evictLIR``) until it fits among the LIR blocks. A resident HIR block in Q only hits,
      and after the demotions that make room for it among the LIR blocks (``hit_RD_HIRinQ``)
      gets a new HIR copy on top of S. A non-resident block misses.
    - Admission (a miss): a non-resident HIR block of S: LIR blocks are demoted until it fits
      among them, and it leaves NH. A block in neither list: refused if larger than either
      limit; when neither set has room for it, resident HIR blocks leave (``evictHIR``) until
      the HIR set has room.
    - Room: while the cache's count (libCacheSim's ``occupied_byte``, kept by these rules)
      and the newcomer exceed the capacity: for a non-resident HIR block of S, HIR blocks
      leave while the HIR set is at its limit, then one LIR block is demoted; for a new block,
      one HIR block leaves when neither set has room.
    - Entry: a non-resident HIR block of S turns a resident LIR block (its size: the copy's).
      A new block enters S as LIR while the LIR set has room, else S and Q as a resident HIR.
    - Demoting a LIR block (``evictLIR``) takes S's bottom block whatever its state (the LIR
      count and the cache's count both lose its size) and, if it is not larger than the HIR
      limit, enters it at Q's top as a resident HIR after HIR blocks leave to make room; then
      S is pruned. A HIR block leaving (``evictHIR``) is Q's bottom; if S holds a copy, that
      copy turns non-resident and enters NH.
    - After every access, while S holds more than twice the capacity, NH's oldest block
      leaves S and NH.

    The counts are libCacheSim's own (``lirs_count``, ``hirs_count``, ``occupied_byte``), kept
    as its code keeps them, also where they part from what is resident: a demotion that meets
    a HIR block at the bottom of S (S is pruned after demotions and LIR hits, not after a
    resident HIR block in S turns LIR) subtracts it from the LIR count all the same;
    and a resident HIR block met in Q alone gets its new copy in S after the demotions that
    make room, which may push its own Q copy out: the S copy still says resident, so
    libCacheSim hits it while no count holds it, and the cache can hold more than its
    capacity. Reproduced, as bugs of libCacheSim's. ``len`` and ``used`` report what is
    resident (what would hit).

    A list may hold two copies of one block: libCacheSim's lists are LRU caches whose hash
    table chains a key inserted again, and a demotion can meet a block that left S without
    leaving NH, or that Q holds already. Inserting adds a copy on top; a lookup finds the
    block's newest copy until any copy of it leaves the list (:class:`Copies`, as the core's
    per-list slot map does); an old copy leaves from the bottom in its turn."""

    def __init__(self, capacity: int) -> None:
        if capacity < 2:
            raise ArgumentError(
                f"capacity={capacity} is not accepted: at least 2 for lirs (its LIR set would hold nothing)"
            )
        self.capacity = capacity
        self.hirs_limit = max(1, int(0.01 * capacity))
        self.lirs_limit = capacity - self.hirs_limit
        self.s = Copies()
        self.q = Copies()
        self.nh = Copies()
        self.s_bytes = 0  # what S holds, all copies (limitStack)
        self.lirs_count = 0
        self.hirs_count = 0
        self.occupied = 0

    # --- the stack's copies --------------------------------------------------------------

    def s_insert(self, key: Hashable, size: int, is_lir: bool) -> None:
        self.s.insert(key, size, is_lir)
        self.s_bytes += size

    def s_remove(self, token: int) -> None:
        self.s_bytes -= self.s.remove(token).size

    # --- libCacheSim's internal functions ------------------------------------------------

    def prune(self) -> None:
        """``LIRS_prune``: HIR blocks leave the bottom of S, which keeps its top block."""
        while len(self.s) > 1:
            bottom = self.s.bottom()
            assert bottom is not None
            e = self.s[bottom]
            if e.is_lir:
                break
            if not e.in_cache:
                self.nh.discard(e.key)
            self.s_remove(bottom)

    def evict_lir(self) -> None:
        """``evictLIR``: S's bottom block leaves S, and enters Q as a resident HIR block if it
        fits the HIR limit."""
        bottom = self.s.bottom()
        if bottom is None:
            return
        e = self.s[bottom]
        self.lirs_count -= e.size
        self.s_remove(bottom)
        self.occupied -= e.size
        if e.size <= self.hirs_limit:
            while self.hirs_count + e.size > self.hirs_limit and self.evict_hir():
                pass
            self.q.insert(e.key, e.size)
            self.hirs_count += e.size
            self.occupied += e.size
        self.prune()

    def evict_hir(self) -> bool:
        """``evictHIR``: Q's bottom block leaves the cache; its copy in S, if any, turns
        non-resident and enters NH. False when Q is empty."""
        bottom = self.q.bottom()
        if bottom is None:
            return False
        e = self.q.remove(bottom)
        self.hirs_count -= e.size
        s = self.s.find(e.key)
        if s is not None:
            self.s[s].in_cache = False
            self.nh.insert(e.key, e.size)
        self.occupied -= e.size
        return True

    # --- one access ----------------------------------------------------------------------

    def access(self, key: Hashable, next_use: Optional[int] = None, size: int = 1) -> bool:
        hit = self.find(key)
        if not hit and self.can_insert(key, size):
            while self.occupied + size > self.capacity and self.evict(key, size):
                pass
            self.insert(key, size)
        while self.s_bytes > 2 * self.capacity:
            oldest = self.nh.bottom()
            if oldest is None:
                break
            s = self.s.find(self.nh.remove(oldest).key)
            if s is not None:
                self.s_remove(s)
        return hit

    def find(self, key: Hashable) -> bool:
        s, q = self.s.find(key), self.q.find(key)
        if s is not None:
            self.s.touch(s)
        if q is not None:
            self.q.touch(q)
        if s is not None:
            e = self.s[s]
            if e.is_lir:
                self.prune()
                return True
            if not e.in_cache:
                return False
            if q is not None:  # hit_RD_HIRinS
                q_size = self.q.remove(q).size
                self.hirs_count -= q_size
                self.occupied -= q_size
            while self.lirs_count + e.size > self.lirs_limit and len(self.s):
                self.evict_lir()
            e.is_lir = True
            self.lirs_count += e.size
            self.occupied += e.size
            return True
        if q is not None:  # hit_RD_HIRinQ (a resident block)
            size = self.q[q].size
            while self.lirs_count + size > self.lirs_limit and len(self.s):
                self.evict_lir()
            self.s_insert(key, size, False)
            return True
        return False

    def can_insert(self, key: Hashable, size: int) -> bool:
        if size > self.capacity:
            return False
        s = self.s.find(key)
        if s is not None:  # a non-resident HIR block of S (a resident one would have hit)
            s_size = self.s[s].size
            while self.lirs_count + s_size > self.lirs_limit and len(self.s):
                self.evict_lir()
            self.nh.discard(key)
            return True
        if size > self.lirs_limit or size > self.hirs_limit:
            return False
        if self.lirs_count + size > self.lirs_limit and self.hirs_count + size > self.hirs_limit:
            while self.hirs_count + size > self.hirs_limit and self.evict_hir():
                pass
        return True

    def evict(self, key: Hashable, size: int) -> bool:
        """One step of making room (``LIRS_evict``); False when it could do nothing."""
        if self.s.find(key) is not None:
            progress = False
            while self.hirs_count >= self.hirs_limit and self.evict_hir():
                progress = True
            if len(self.s):
                self.evict_lir()
                progress = True
            return progress
        if self.lirs_count + size > self.lirs_limit and self.hirs_count + size > self.hirs_limit:
            return self.evict_hir()
        return False

    def insert(self, key: Hashable, size: int) -> None:
        s = self.s.find(key)
        if s is not None:
            e = self.s[s]
            e.is_lir = e.in_cache = True
            self.lirs_count += e.size
            self.occupied += e.size
        elif self.lirs_count + size <= self.lirs_limit:
            self.s_insert(key, size, True)
            self.lirs_count += size
            self.occupied += size
        else:
            self.s_insert(key, size, False)
            self.q.insert(key, size)
            self.hirs_count += size
            self.occupied += size

    # --- what is resident ----------------------------------------------------------------

    def _resident_in_s(self) -> list[Entry]:
        """S's LIR and resident copies whose block Q does not hold (Q's copies are resident)."""
        return [e for e in self.s.order.values() if (e.is_lir or e.in_cache) and self.q.find(e.key) is None]

    def __contains__(self, key: Hashable) -> bool:
        s = self.s.find(key)
        return (s is not None and (self.s[s].is_lir or self.s[s].in_cache)) or self.q.find(key) is not None

    def __len__(self) -> int:
        return len(self.q) + len(self._resident_in_s())

    @property
    def used(self) -> int:
        return sum(e.size for e in self.q.order.values()) + sum(e.size for e in self._resident_in_s())
