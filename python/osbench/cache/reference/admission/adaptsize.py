"""AdaptSize: the reference engine's filter (the readable definition the native engine follows)."""

from __future__ import annotations

import math
from collections.abc import Hashable
from dataclasses import dataclass

from osbench.cache.reference.admission.prob import MAX_MODULE
from osbench.splitmix import SplitMix64

EWMA_DECAY = 0.3
GSS_R = 0.61803399
TOL = 3.0e-8
MASK64 = (1 << 64) - 1


@dataclass
class _Seen:
    times: float
    size: int


def _div(a: float, b: float) -> float:
    """``a / b`` as C computes it in doubles (a zero divisor gives an infinity or NaN)."""
    if b != 0.0:
        return a / b
    if a == 0.0 or math.isnan(a):
        return math.nan
    return math.copysign(math.inf, a) * math.copysign(1.0, b)


class AdaptSize:
    """AdaptSize (Berger, Sitaraman and Harchol-Balter, NSDI 2017) as libCacheSim has it
    (``cache/admission/adaptsize/adaptsize.cpp``, class ``Adaptsize``): a missed object of
    ``size`` enters with probability ``exp(-size / c)``, ``c`` tuned to the trace.

    :meth:`seen` is ``updateStats``, on every access: per object, the requests of the current
    interval and the last size; ``stat_size`` sums the sizes of the objects known (a changed
    size is counted against each table holding the object, as libCacheSim does). Every
    ``reconf_interval`` accesses (``reconfigure``; while the objects known hold no more than 3x
    the capacity it looks again 1000 accesses later) the interval's counts fold into the long-term
    ones (weights decay by 0.3), objects below weight 0.1 are forgotten, and ``c`` becomes the
    one of the best modelled hit ratio (:meth:`_model_hit_rate`, ``modelHitRate``): a scan of
    log2(c) over 2, 6, 10... below log2(capacity), then golden-section search of at most
    ``max_iteration`` steps. The arithmetic is libCacheSim's, operation for operation.

    Where libCacheSim's order comes from its hash tables, objects are visited in the order they
    were first counted (a forgotten object counted again goes last, as Python's dicts keep
    them); the draws are splitmix64's from ``seed``. So AdaptSize equals libCacheSim in
    distribution, not miss for miss."""

    def __init__(self, capacity: int, max_iteration: int, reconf_interval: int, seed: int) -> None:
        self.cache_size = capacity
        self.max_iteration = max_iteration
        self.reconf_interval = reconf_interval
        self.next_reconf = reconf_interval
        self.stat_size = 0  # an unsigned 64-bit counter, as libCacheSim's
        self.c = float(1 << 15)
        self.interval: dict[Hashable, _Seen] = {}
        self.longterm: dict[Hashable, _Seen] = {}
        self.sizes: list[float] = []
        self.times: list[float] = []
        self.rng = SplitMix64(seed)

    def seen(self, key: Hashable, size: int) -> None:
        self._reconfigure()
        here, there = self.interval.get(key), self.longterm.get(key)
        if here is None and there is None:
            self.stat_size = (self.stat_size + size) & MASK64
        else:
            for known in (here, there):
                if known is not None and known.size != size:
                    self.stat_size = (self.stat_size - known.size + size) & MASK64
        if here is None:
            here = self.interval[key] = _Seen(0.0, 0)
        here.times += 1.0
        here.size = size

    def admit(self, key: Hashable, size: int) -> bool:
        prob = math.exp(-float(size) / self.c)
        return (self.rng.next_u64() % MAX_MODULE) / MAX_MODULE < prob

    def _reconfigure(self) -> None:
        self.next_reconf = (self.next_reconf - 1) & MASK64
        if self.next_reconf > 0:
            return
        if self.stat_size <= (self.cache_size * 3) & MASK64:
            self.next_reconf += 1000
            return
        self.next_reconf = self.reconf_interval
        for old in self.longterm.values():
            old.times *= EWMA_DECAY
        for key, now in self.interval.items():
            merged = self.longterm.get(key)
            if merged is None:
                self.longterm[key] = _Seen(now.times, now.size)
            else:
                merged.times += (1.0 - EWMA_DECAY) * now.times
                merged.size = now.size
        self.interval = {}
        self.times, self.sizes = [], []
        kept = {}
        for key, known in self.longterm.items():
            if known.times < 0.1:
                self.stat_size = (self.stat_size - known.size) & MASK64
                continue
            self.times.append(known.times)
            self.sizes.append(float(known.size))
            kept[key] = known
        self.longterm = kept
        self._search()

    def _search(self) -> None:
        gss_v = 1.0 - GSS_R
        x0 = 0.0
        x1 = math.log2(float(self.cache_size))
        x3 = x1
        best = 0.0
        i = 2
        while i < x3:
            rate = self._model_hit_rate(float(i))
            if rate > best:
                best, x1 = rate, float(i)
            i += 4
        h1 = best
        if x3 - x1 > x1 - x0:
            x2 = x1 + gss_v * (x3 - x1)
            h2 = self._model_hit_rate(x2)
        else:
            x2, h2 = x1, h1
            x1 = x0 + gss_v * (x1 - x0)
            h1 = self._model_hit_rate(x1)
        iteration = 0
        while iteration < self.max_iteration and abs(x3 - x0) > TOL * (abs(x1) + abs(x2)):
            iteration += 1
            if math.isnan(h1) or math.isnan(h2):
                break
            if h2 > h1:
                x0, x1 = x1, x2
                x2 = GSS_R * x1 + gss_v * x3
                h1 = h2
                h2 = self._model_hit_rate(x2)
            else:
                x3, x2 = x2, x1
                x1 = GSS_R * x2 + gss_v * x0
                h2 = h1
                h1 = self._model_hit_rate(x1)
        if math.isnan(h1) or math.isnan(h2):
            return  # libCacheSim warns and keeps the old c
        self.c = 2.0 ** (x1 if h1 > h2 else x2)

    def _model_hit_rate(self, log2c: float) -> float:
        """``modelHitRate``: the hit ratio (weighted by request rate) the model gives c = 2**log2c."""
        cache_size = float(self.cache_size)
        total = 0.0
        for t, s in zip(self.times, self.sizes):
            total += t * math.exp(-s / 2.0**log2c) * s
        if total <= 0:
            return 0.0
        the_t = cache_size / total
        probs = [math.exp(-s / 2.0**log2c) for s in self.sizes]
        for _ in range(20):
            the_c = 0.0
            if the_t > 1e70:
                break
            for t, s, p in zip(self.times, self.sizes, probs):
                req_t = t * the_t
                if req_t > 150:
                    the_c += s
                else:
                    adm = p * (math.exp(req_t) - 1.0)
                    the_c += s * (adm / (1.0 + adm))
            the_t = _div(cache_size * the_t, the_c)
        weighted = 0.0
        for lam, p in zip(self.times, probs):
            a, b = _op1(the_t, lam, p), _op2(the_t, lam, p)
            r = 0.0 if a != 0 and b == 0 else _div(a, b)
            if r < 0.0:
                r = 0.0
            elif r > 1.0:
                r = 1.0
            weighted += lam * r
        return weighted


def _op1(t: float, lam: float, p: float) -> float:
    return lam * p * t * (840.0 + 60.0 * lam * t + 20.0 * lam * lam * t * t + lam * lam * lam * t * t * t)


def _op2(t: float, lam: float, p: float) -> float:
    return (
        840.0
        + 120.0 * lam * (-3.0 + 7.0 * p) * t
        + 60.0 * lam * lam * (1.0 + p) * t * t
        + 4.0 * lam * lam * lam * (-1.0 + 5.0 * p) * t * t * t
        + lam * lam * lam * lam * p * t * t * t * t
    )
