"""LIRS: the reference engine's class (the readable definition the native engine follows)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Optional

from osbench.errors import ArgumentError


@dataclass
class Entry:
    """One block's copy in the stack S or the queue Q (libCacheSim keeps one object per list)."""

    size: int
    is_lir: bool
    in_cache: bool


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
    resident (what would hit)."""

    def __init__(self, capacity: int) -> None:
        if capacity < 2:
            raise ArgumentError(
                f"capacity={capacity} is not accepted: at least 2 for lirs (its LIR set would hold nothing)"
            )
        self.capacity = capacity
        self.hirs_limit = max(1, int(0.01 * capacity))
        self.lirs_limit = capacity - self.hirs_limit
        self.s: OrderedDict[Hashable, Entry] = OrderedDict()  # last: top (most recent)
        self.q: OrderedDict[Hashable, Entry] = OrderedDict()
        self.nh: OrderedDict[Hashable, int] = OrderedDict()
        self.s_bytes = 0  # what S holds, all copies (limitStack)
        self.lirs_count = 0
        self.hirs_count = 0
        self.occupied = 0

    # --- the LRU lists -------------------------------------------------------------------

    def s_insert(self, key: Hashable, size: int, is_lir: bool) -> Entry:
        e = self.s[key] = Entry(size, is_lir, True)
        self.s_bytes += size
        return e

    def s_remove(self, key: Hashable) -> None:
        self.s_bytes -= self.s.pop(key).size

    def nh_remove(self, key: Hashable) -> None:
        self.nh.pop(key, None)

    # --- libCacheSim's internal functions ------------------------------------------------

    def prune(self) -> None:
        """``LIRS_prune``: HIR blocks leave the bottom of S, which keeps its top block."""
        while len(self.s) > 1:
            key, e = next(iter(self.s.items()))
            if e.is_lir:
                break
            if not e.in_cache:
                self.nh_remove(key)
            self.s_remove(key)

    def evict_lir(self) -> None:
        """``evictLIR``: S's bottom block leaves S, and enters Q as a resident HIR block if it
        fits the HIR limit."""
        key, e = next(iter(self.s.items()))
        self.lirs_count -= e.size
        self.s_remove(key)
        self.occupied -= e.size
        if e.size <= self.hirs_limit:
            while self.hirs_count + e.size > self.hirs_limit:
                self.evict_hir()
            self.q[key] = Entry(e.size, False, True)
            self.hirs_count += e.size
            self.occupied += e.size
        self.prune()

    def evict_hir(self) -> None:
        """``evictHIR``: Q's bottom block leaves the cache; its copy in S, if any, turns
        non-resident and enters NH."""
        key, e = self.q.popitem(last=False)
        self.hirs_count -= e.size
        s = self.s.get(key)
        if s is not None:
            s.in_cache = False
            self.nh[key] = e.size
        self.occupied -= e.size

    # --- one access ----------------------------------------------------------------------

    def access(self, key: Hashable, next_use: Optional[int] = None, size: int = 1) -> bool:
        hit = self.find(key)
        if not hit and self.can_insert(key, size):
            while self.occupied + size > self.capacity:
                self.evict(key, size)
            self.insert(key, size)
        while self.s_bytes > 2 * self.capacity and self.nh:
            old, _ = self.nh.popitem(last=False)
            if old in self.s:
                self.s_remove(old)
        return hit

    def find(self, key: Hashable) -> bool:
        s, q = self.s.get(key), self.q.get(key)
        if s is not None:
            self.s.move_to_end(key)
        if q is not None:
            self.q.move_to_end(key)
        if s is not None:
            if s.is_lir:
                self.prune()
                return True
            if not s.in_cache:
                return False
            if q is not None:  # hit_RD_HIRinS
                self.hirs_count -= q.size
                del self.q[key]
                self.occupied -= q.size
            while self.lirs_count + s.size > self.lirs_limit:
                self.evict_lir()
            s.is_lir = True
            self.lirs_count += s.size
            self.occupied += s.size
            return True
        if q is not None:  # hit_RD_HIRinQ (a resident block: Q holds no other)
            while self.lirs_count + q.size > self.lirs_limit:
                self.evict_lir()
            self.s_insert(key, q.size, False)
            return True
        return False

    def can_insert(self, key: Hashable, size: int) -> bool:
        if size > self.capacity:
            return False
        s = self.s.get(key)
        if s is not None:  # a non-resident HIR block of S (a resident one would have hit)
            while self.lirs_count + s.size > self.lirs_limit:
                self.evict_lir()
            self.nh_remove(key)
            return True
        if size > self.lirs_limit or size > self.hirs_limit:
            return False
        if self.lirs_count + size > self.lirs_limit and self.hirs_count + size > self.hirs_limit:
            while self.hirs_count + size > self.hirs_limit:
                self.evict_hir()
        return True

    def evict(self, key: Hashable, size: int) -> None:
        s = self.s.get(key)
        if s is not None:
            while self.hirs_count >= self.hirs_limit:
                self.evict_hir()
            self.evict_lir()
        elif self.lirs_count + size > self.lirs_limit and self.hirs_count + size > self.hirs_limit:
            self.evict_hir()

    def insert(self, key: Hashable, size: int) -> None:
        s = self.s.get(key)
        if s is not None:
            s.is_lir = s.in_cache = True
            self.lirs_count += s.size
            self.occupied += s.size
        elif self.lirs_count + size <= self.lirs_limit:
            self.s_insert(key, size, True)
            self.lirs_count += size
            self.occupied += size
        else:
            self.s_insert(key, size, False)
            self.q[key] = Entry(size, False, True)
            self.hirs_count += size
            self.occupied += size

    # --- what is resident ----------------------------------------------------------------

    def __contains__(self, key: Hashable) -> bool:
        s, q = self.s.get(key), self.q.get(key)
        return (s is not None and (s.is_lir or s.in_cache)) or (q is not None and q.in_cache)

    def __len__(self) -> int:
        return len({k for k, e in self.s.items() if e.is_lir or e.in_cache} | set(self.q))

    @property
    def used(self) -> int:
        held = {k: e.size for k, e in self.q.items()}
        held.update({k: e.size for k, e in self.s.items() if e.is_lir or e.in_cache})
        return sum(held.values())
