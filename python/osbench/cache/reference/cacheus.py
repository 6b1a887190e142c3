"""Cacheus (scan- and churn-resistant experts, adaptive learning rate): the reference engine's
class (the readable definition the native engine follows)."""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Optional

from osbench.cache._parts import GhostLookup
from osbench.errors import ArgumentError
from osbench.splitmix import SplitMix64

NEW = 1
"""An object that entered SR as a newcomer and has not been hit since (SR-LRU's ``new_obj``)."""
DEMOTED = 2
"""An object that came back to SR from R (SR-LRU's ``demoted``)."""


class Cacheus(GhostLookup):
    """Cacheus (Rodriguez et al., FAST 2021) as libCacheSim defines it (the sources the
    ``libcachesim`` 0.3.5 package builds: ``libCacheSim/cache/eviction/Cacheus.c`` with its
    two experts, ``SR_LRU.c`` and ``CR_LFU.c``): every cached object is held by both experts,
    and each eviction follows one of them, drawn by weight.

    - **SR-LRU**, the scan-resistant expert, splits the cache into two LRU lists: SR, where a
      newcomer enters, and R, where an object moves on its first hit in SR (``SR_LRU_find``);
      each starts at ``capacity // 2``. When R holds more than its size its least recent
      objects go back to the front of SR (demoted). A history H (an LRU list of the keys
      SR-LRU let go, with the count each had and whether it left as a newcomer never hit)
      holds less than ``capacity``: while it holds ``capacity`` or more its oldest key leaves.
      A miss on a key in H enters R instead of SR, after R's least recent objects have made
      room (``SR_LRU_insert``). After every insertion, while SR holds more than its size, its
      oldest object leaves the cache to H (SR-LRU evicts it without a vote, and CR-LFU
      forgets it). The SR-LRU candidate is the oldest of SR (of R when SR is empty,
      ``SR_LRU_to_evict``).
    - SR's size grows when a key that left SR as a newcomer comes back from H: by ``delta = 1``
      if ``demoted // new < 1``, else ``demoted // new + 0.5`` (``demoted``: demotions to SR
      less demoted objects that left SR to H; ``new``: newcomers that left to H; integer
      quotients, as libCacheSim's), and the sum is truncated; if ``size + delta`` exceeds what
      the cache holds less one, it becomes that. R's size is ``capacity`` less SR's. The rule
      that would shrink SR on a hit of a demoted object never fires in libCacheSim (it reads
      the flag on the object's fresh copy in R), so SR never shrinks otherwise.
    - **CR-LFU**, the churn-resistant expert: counts start at 1, or at one more than the count
      H remembers for the key; a hit adds one. Its candidate is, among the objects of the
      lowest count, the one that reached that count last (``CR_LFU_to_evict``: the tail of the
      count's list, where arrivals join).
    - The cache is full when the objects it holds plus the newcomer exceed ``capacity``
      (``cache_get_base``). Each eviction (``Cacheus_evict``) draws ``r = below(100) / 100``;
      it follows SR-LRU if ``r < w_lru``, else CR-LFU. When the two candidates are one object
      it leaves to H only. Otherwise the chosen victim also joins the front of that expert's
      ghost list (an LRU list of ``capacity // 2``, objects or bytes), the other expert
      forgets it, and it enters H with its count.
    - A newcomer larger than its list (SR's size, or R's if it is in H) is not inserted,
      though the evictions made for it stand (``SR_LRU_can_insert`` is asked after them).
    - Every miss (``check_and_update_history``): a key in the SR-LRU ghost multiplies
      ``w_lru`` by ``exp(-lr)``, one in the CR-LFU ghost ``w_lfu``; then ``w_lru = w_lru /
      (w_lru + w_lfu)`` and ``w_lfu = 1 - w_lru``, and the key leaves both ghosts.
    - The learning rate ``lr`` starts at ``0.001 + below(1000) / 1000``. Every ``capacity``
      requests (``update_lr``) the hit rate of the interval is the integer quotient of its
      hits by ``capacity`` (1 only when every request hit, as libCacheSim divides integers);
      with ``d_hr`` and ``d_lr`` the changes since the last update: if ``d_lr != 0``, ``lr``
      moves by ``lr * |d_lr|``, up when ``d_hr / d_lr > 0``, else down (to 0.0001 if that
      does not leave it above 0.001); if ``d_lr == 0``, an interval with no hit rate or no
      gain adds one to the unlearn count, and a gaining one after ten of those redraws ``lr``
      as at the start.

    The draws are splitmix64 seeded with ``seed`` (:class:`osbench.splitmix.SplitMix64`), in
    libCacheSim's places: the first learning rate, one per eviction (even when the candidates
    agree), and each redrawn learning rate. libCacheSim draws ``next_rand() % 100`` and
    ``% 1000`` from its own generator, so it agrees with this class in distribution, not miss
    for miss. Objects have the size they entered with; in sized mode every list counts
    bytes."""

    def __init__(self, capacity: int, seed: int = 0) -> None:
        if capacity < 2:
            raise ArgumentError(
                f"capacity={capacity} is not accepted: at least 2 for cacheus (its SR and R lists would hold nothing)"
            )
        self.capacity = capacity
        self.ghost_capacity = capacity // 2
        self.rng = SplitMix64(seed)
        self.lr = self._draw_lr()
        self.lr_previous = 0.0
        self.w_lru = 0.5
        self.w_lfu = 0.5
        self.now = 0
        self.hits_in_interval = 0
        self.hit_rate_previous = 0.0
        self.unlearn = 0
        # SR-LRU: the two lists of the cache, key -> NEW, DEMOTED or 0, oldest first; their
        # sizes; the history H, key -> (size, count, left as NEW), oldest first.
        self.sr: OrderedDict[Hashable, int] = OrderedDict()
        self.r: OrderedDict[Hashable, int] = OrderedDict()
        self.sr_size = capacity // 2
        self.r_size = capacity // 2
        self.sr_used = 0
        self.r_used = 0
        self.demoted = 0
        self.new = 0
        self.h: OrderedDict[Hashable, tuple[int, int, bool]] = OrderedDict()
        self.h_used = 0
        # CR-LFU: counts, and per count the keys in order of arrival (the last one leaves first).
        self.count: dict[Hashable, int] = {}
        self.by_count: dict[int, OrderedDict[Hashable, None]] = {}
        self.size: dict[Hashable, int] = {}
        # The experts' ghosts: key -> size, oldest first.
        self.ghosts: dict[str, OrderedDict[Hashable, int]] = {"lru": OrderedDict(), "lfu": OrderedDict()}
        self.ghost_used = {"lru": 0, "lfu": 0}

    @property
    def used(self) -> int:
        return self.sr_used + self.r_used

    def _draw_lr(self) -> float:
        return 0.001 + self.rng.below(1000) / 1000.0

    def _access(self, key: Hashable, size: int, admit: Optional[Callable[[Hashable, int], bool]]) -> bool:
        """One access. A miss is learnt from (``Cacheus_find``'s ``check_and_update_history``),
        and every access counts towards the learning rate's update (``Cacheus_get``), whether or
        not ``admit`` then lets the object in (libCacheSim's ``can_insert``)."""
        self.now += 1
        hit = key in self.count
        if hit:
            self._hit(key)
            self.hits_in_interval += 1
        else:
            self._learn(key)
            if (admit is None or admit(key, size)) and size <= self.capacity:
                while self.used + size > self.capacity:
                    self._evict()
                if size <= (self.r_size if key in self.h else self.sr_size):
                    self._insert(key, size)
        if self.now % self.capacity == 0:
            self._update_lr()
        return hit

    def _hit(self, key: Hashable) -> None:
        if key in self.r:
            self.r.move_to_end(key)
        else:  # its first hit in SR: on to R (its flag dropped), pushing R's least recent back
            s = self.size[key]
            del self.sr[key]
            self.sr_used -= s
            self.r[key] = 0
            self.r_used += s
            self._trim_r(0)
        c = self.count[key]
        self._leave_count(key, c)
        self._join_count(key, c + 1)

    def _trim_r(self, room: int) -> None:
        while self.r_used + room > self.r_size:
            old, _ = self.r.popitem(last=False)
            s = self.size[old]
            self.r_used -= s
            self.sr[old] = DEMOTED
            self.sr_used += s
            self.demoted += 1

    def _learn(self, key: Hashable) -> None:
        if key in self.ghosts["lru"]:
            self.w_lru = self.w_lru * math.exp(-self.lr)
        elif key in self.ghosts["lfu"]:
            self.w_lfu = self.w_lfu * math.exp(-self.lr)
        self.w_lru = self.w_lru / (self.w_lru + self.w_lfu)
        self.w_lfu = 1.0 - self.w_lru
        for expert in ("lru", "lfu"):
            s = self.ghosts[expert].pop(key, None)
            if s is not None:
                self.ghost_used[expert] -= s

    def _insert(self, key: Hashable, size: int) -> None:
        remembered = self.h.pop(key, None)
        self.size[key] = size
        if remembered is not None:
            h_size, h_count, was_new = remembered
            self.h_used -= h_size
            self._join_count(key, h_count + 1)
            self._trim_r(size)
            self.r[key] = 0
            self.r_used += size
            if was_new:
                self._grow_sr()
        else:
            self._join_count(key, 1)
            self.sr[key] = NEW
            self.sr_used += size
        while self.sr_used > self.sr_size:
            self._drop(next(iter(self.sr)))
        self._trim_h()

    def _grow_sr(self) -> None:
        quotient = self.demoted // self.new
        delta = 1.0 if 1.0 > quotient + 0.5 else quotient + 0.5
        held = self.sr_used + self.r_used
        if self.sr_size + delta > held - 1:
            self.sr_size = held - 1
        else:
            self.sr_size = int(self.sr_size + delta)
        self.r_size = self.capacity - self.sr_size

    def _drop(self, key: Hashable) -> None:
        """``key`` leaves the cache (both experts) for the history H, with its count."""
        s = self.size.pop(key)
        if key in self.sr:
            flag = self.sr.pop(key)
            self.sr_used -= s
        else:
            flag = self.r.pop(key)
            self.r_used -= s
        if flag == NEW:
            self.new += 1
        elif flag == DEMOTED:
            self.demoted -= 1
        c = self.count[key]
        self._leave_count(key, c)
        del self.count[key]
        self.h[key] = (s, c, flag == NEW)
        self.h_used += s

    def _trim_h(self) -> None:
        while self.h_used >= self.capacity:
            _, (s, _, _) = self.h.popitem(last=False)
            self.h_used -= s

    def _evict(self) -> None:
        lru_choice = next(iter(self.sr)) if self.sr else next(iter(self.r))
        lfu_choice = next(reversed(self.by_count[min(self.by_count)]))
        follow_lru = self.rng.below(100) / 100.0 < self.w_lru
        if lru_choice == lfu_choice:
            self._drop(lru_choice)
            self._trim_h()
            return
        expert, victim = ("lru", lru_choice) if follow_lru else ("lfu", lfu_choice)
        s = self.size[victim]
        self._drop(victim)
        self._trim_h()
        if s <= self.ghost_capacity:
            ghost = self.ghosts[expert]
            while self.ghost_used[expert] + s > self.ghost_capacity:
                _, old = ghost.popitem(last=False)
                self.ghost_used[expert] -= old
            ghost[victim] = s
            self.ghost_used[expert] += s

    def _update_lr(self) -> None:
        hit_rate = float(self.hits_in_interval // self.capacity)
        d_hit_rate = hit_rate - self.hit_rate_previous
        d_lr = self.lr - self.lr_previous
        self.lr_previous = self.lr
        self.hit_rate_previous = hit_rate
        if d_lr != 0:
            sign = 1.0 if d_hit_rate / d_lr > 0 else -1.0
            step = abs(self.lr * d_lr)
            moved = self.lr + sign * step
            self.lr = moved if moved > 0.001 else 0.0001
            self.unlearn = 0
        elif hit_rate == 0 or d_hit_rate <= 0:
            self.unlearn += 1
        elif self.unlearn >= 10:
            self.unlearn = 0
            self.lr = self._draw_lr()
        self.hits_in_interval = 0

    def _join_count(self, key: Hashable, c: int) -> None:
        self.count[key] = c
        self.by_count.setdefault(c, OrderedDict())[key] = None

    def _leave_count(self, key: Hashable, c: int) -> None:
        del self.by_count[c][key]
        if not self.by_count[c]:
            del self.by_count[c]

    def __len__(self) -> int:
        return len(self.count)

    def __contains__(self, key: Hashable) -> bool:
        return key in self.count
