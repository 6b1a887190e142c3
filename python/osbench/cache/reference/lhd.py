"""LHD (least hit density): the reference engine's class (the readable definition the native
engine follows)."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Optional

from osbench.cache._parts import DemandPaging, Members
from osbench.splitmix import SplitMix64

MAX_AGE = 20_000
"""Ages (coarsened) are counted up to here; an object this old has the lowest density."""
CLASSES = 16
"""Classes by the sum of an object's last two hit ages (libCacheSim's ``HIT_AGE_CLASSES``; its
single application uses classes 16 to 31 of 256)."""
APP_OFFSET = 16
"""libCacheSim's class index is ``app * 16 + hit-age class`` with app 1: the initial densities
(``(class + 1) / (age + 1)``) are taken at that index."""
SAMPLES_EARLY, SAMPLES_LATE = 8, 32
"""Candidates drawn per eviction before and after the 50th reconfiguration (``ASSOCIATIVITY``)."""
ADMISSIONS = 8
"""The last admitted objects that looked evictable, always candidates too."""
EXPLORE_ONE_IN = 32
ACCESSES_PER_RECONFIGURATION = 1 << 20
EWMA_DECAY = 0.9
AGE_COARSENING_ERROR = 0.01
LOWEST = -1.7976931348623157e308
"""The lowest finite double: the density of an object at the maximum age."""


class LHD(DemandPaging):
    """LHD (Beckmann, Chen and Cidon, NSDI 2018) as libCacheSim runs it
    (``libCacheSim/cache/eviction/LHD/lhd.cpp`` and ``lhd.hpp``, class ``repl::LHD``, through
    ``LHD_Interface.cpp``; associativity 32, admissions 8): evict, of a few objects drawn at
    random, the one of lowest hit density, the expected hits per byte and per unit of time its
    class has shown at its age.

    - Time is counted in updates (hits and insertions; ``timestamp``); an object's age is the
      time since its last update shifted right by ``shift`` (10 at first), at most
      ``MAX_AGE - 1``. Its class is ``hit_age_class(last hit age + the one before)``, by powers
      of two (``hitAgeClass``); a newcomer's two ages are 0 and ``MAX_AGE``.
    - Density (``getHitDensity``): ``densities[class][age] / size``, plus 1 for an explorer;
      the lowest double at the maximum age. The densities start at ``(16 + class + 1) / (age +
      1)`` and are recomputed every 2**20 updates (``reconfigure``) from the hits and evictions
      counted by class and age, after decaying them by 0.9 (``updateClass``,
      ``modelHitDensity``); at the 6th and 26th reconfiguration the age shift is set from the
      average number of cached objects and the counts are stretched or compressed to it
      (``adaptAgeCoarsening``).
    - Eviction (``rank``): draw 8 cached objects (32 after 50 reconfigurations), position
      ``below(len)`` each, and consider also the 8 last admitted objects that looked
      evictable, if still cached; the lowest density leaves (the first considered among
      equals). A running average of the victims' densities (decay 0.9) is kept.
    - Update (``update``), on a hit or an insertion, draws ``below(32) == 0``: if so, while the
      explorer budget (1% of the capacity) is positive and fewer than 50 reconfigurations have
      passed, the object becomes an explorer (its size taken from the budget until it is hit
      or evicted). A newcomer not drawn so whose density is below the victims' average joins
      the ring of recently admitted candidates.

    Where libCacheSim keeps single-precision floats this class keeps doubles, and the budget
    is ``capacity // 100``; a hit keeps the size the object entered with, as in every policy
    here (libCacheSim's LHD takes a hit's new size). The draws are splitmix64 seeded with
    ``seed`` (:class:`osbench.splitmix.SplitMix64`) over the cached keys in a list with
    swap-remove, as libCacheSim's ``tags``; libCacheSim draws ``next_rand() %`` from its own
    generator, so it agrees with this class in distribution, not miss for miss."""

    def __init__(self, capacity: int, seed: int = 0) -> None:
        super().__init__(capacity)
        self.rng = SplitMix64(seed)
        self.members = Members()
        # per cached key: [last update, last hit age, the one before, size, explorer]
        self.tag: dict[Hashable, list] = {}  # type: ignore[type-arg]
        self.time = 0
        self.until_reconfiguration = ACCESSES_PER_RECONFIGURATION
        self.reconfigurations = 0
        self.shift = 10
        self.ewma_objects = 0.0
        self.ewma_mass = 0.0
        self.hits = [[0.0] * MAX_AGE for _ in range(CLASSES)]
        self.evictions = [[0.0] * MAX_AGE for _ in range(CLASSES)]
        self.densities: Optional[list[list[float]]] = None  # None: the initial formula
        self.admitted: list[Optional[Hashable]] = [None] * ADMISSIONS
        self.admitted_head = 0
        self.ewma_victim = 0.0
        self.explorer_budget = capacity // 100

    def _hit(self, key: Hashable) -> None:
        self._update(key, insert=False)

    def _insert(self, key: Hashable) -> None:
        self.members.append(key)
        self.tag[key] = [0, 0, MAX_AGE, self.size[key], False]
        self._update(key, insert=True)

    # -- the model --------------------------------------------------------------------------

    def _age(self, tag: list) -> int:  # type: ignore[type-arg]
        return min((self.time - tag[0]) >> self.shift, MAX_AGE - 1)

    @staticmethod
    def _class(tag: list) -> int:  # type: ignore[type-arg]
        age = tag[1] + tag[2]
        if age == 0:
            return CLASSES - 1
        log = 0
        while age < MAX_AGE and log < CLASSES - 1:
            age <<= 1
            log += 1
        return log

    def _density(self, tag: list) -> float:  # type: ignore[type-arg]
        age = self._age(tag)
        if age == MAX_AGE - 1:
            return LOWEST
        c = self._class(tag)
        d = (APP_OFFSET + c + 1) / (age + 1) if self.densities is None else self.densities[c][age]
        d = d / tag[3]
        if tag[4]:
            d += 1.0
        return d

    def _update(self, key: Hashable, insert: bool) -> None:
        tag = self.tag[key]
        if not insert:
            age = self._age(tag)
            self.hits[self._class(tag)][age] += 1.0
            if tag[4]:
                self.explorer_budget += tag[3]
            tag[2] = tag[1]
            tag[1] = age
        tag[0] = self.time
        explore = self.rng.below(EXPLORE_ONE_IN) == 0
        if explore and self.explorer_budget > 0 and self.reconfigurations < 50:
            tag[4] = True
            self.explorer_budget -= tag[3]
        else:
            tag[4] = False
        if insert and not explore and self._density(tag) < self.ewma_victim:
            self.admitted[self.admitted_head % ADMISSIONS] = key
            self.admitted_head += 1
        self.time += 1
        self.until_reconfiguration -= 1
        if self.until_reconfiguration == 0:
            self._reconfigure()
            self.until_reconfiguration = ACCESSES_PER_RECONFIGURATION
            self.reconfigurations += 1

    def _evict(self) -> Hashable:
        victim: Optional[int] = None
        best = 0.0
        samples = SAMPLES_LATE if self.reconfigurations > 50 else SAMPLES_EARLY
        for _ in range(samples):
            at = self.members.draw(self.rng)
            d = self._density(self.tag[self.members[at]])
            if victim is None or d < best:
                victim, best = at, d
        for key in self.admitted:
            if key is not None and key in self.members:
                d = self._density(self.tag[key])
                if d < best:
                    victim, best = self.members.position[key], d
        assert victim is not None
        self.ewma_victim = EWMA_DECAY * self.ewma_victim + (1.0 - EWMA_DECAY) * best
        key = self.members.swap_remove(victim)
        tag = self.tag.pop(key)
        self.evictions[self._class(tag)][self._age(tag)] += 1.0
        if tag[4]:
            self.explorer_budget += tag[3]
        return key

    def _reconfigure(self) -> None:
        for c in range(CLASSES):
            self.hits[c] = [h * EWMA_DECAY for h in self.hits[c]]
            self.evictions[c] = [e * EWMA_DECAY for e in self.evictions[c]]
        self._adapt_age_coarsening()
        densities = self.densities
        if densities is None:
            densities = [[(APP_OFFSET + c + 1) / (a + 1) for a in range(MAX_AGE)] for c in range(CLASSES)]
        for c in range(CLASSES):
            hits, evictions, dens = self.hits[c], self.evictions[c], densities[c]
            events = hits[MAX_AGE - 1] + evictions[MAX_AGE - 1]
            total_hits = hits[MAX_AGE - 1]
            lifetime = events
            for a in range(MAX_AGE - 2, -1, -1):
                total_hits += hits[a]
                events += hits[a] + evictions[a]
                lifetime += events
                dens[a] = total_hits / lifetime if events > 1e-5 else 0.0
        self.densities = densities

    def _adapt_age_coarsening(self) -> None:
        self.ewma_objects = self.ewma_objects * EWMA_DECAY + len(self.members)
        self.ewma_mass = self.ewma_mass * EWMA_DECAY + 1.0
        if self.reconfigurations not in (5, 25):
            return
        optimal = self.ewma_objects / self.ewma_mass / (AGE_COARSENING_ERROR * MAX_AGE)
        log2 = 1
        while (1 << log2) < optimal:
            log2 += 1
        delta = log2 - self.shift
        self.shift = log2
        self.ewma_objects *= 8
        self.ewma_mass *= 8
        for counts in (*self.hits, *self.evictions):
            if delta < 0:  # stretch
                d = -delta
                for a in range(MAX_AGE >> d, MAX_AGE - 1):
                    counts[MAX_AGE - 1] += counts[a]
                for a in range(MAX_AGE - 2, -1, -1):
                    counts[a] = counts[a >> d] / (1 << d)
            elif delta > 0:  # compress
                for a in range(MAX_AGE >> delta):
                    total = counts[a << delta]
                    for i in range(1, 1 << delta):
                        total += counts[(a << delta) + i]
                    counts[a] = total
                for a in range(MAX_AGE >> delta, MAX_AGE - 1):
                    counts[a] = 0.0
