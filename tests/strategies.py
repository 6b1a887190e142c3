"""Hypothesis strategies built to exercise behaviour, not just to be valid.

A random trace over a few keys rarely makes a cache evict, and a comparison of two engines
that never evict shows nothing about their eviction rules. These strategies aim at the
behaviour under test: caches that evict many times (more keys than room, skewed popularity,
scans, loops), sized objects near the capacity, schedules full of ties, bursts and
preemptions, request streams that share prefixes and overflow the radix cache.
``tests/test_strategies.py`` samples each one and asserts how often it reaches that behaviour.

Randomness inside a case comes from a numpy generator seeded by a drawn integer: hypothesis
still shrinks a failure (the seed, the lengths, the segment kinds), and a case stays cheap to
draw at hundreds of accesses.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np
from hypothesis import strategies as st

import osbench as ob
from osbench.cache import reference

SEEDS = st.integers(0, 2**32 - 1)


@dataclass
class CacheCase:
    """Keys (int64 or uint64, over the whole range), a capacity and, for sized cases, one size
    per access (the capacity then counts bytes)."""

    keys: np.ndarray
    capacity: int
    sizes: Optional[np.ndarray] = None

    def capacity_for(self, policy: str) -> int:
        """The capacity, raised to the policy's minimum (S3-FIFO 10, 2Q 4)."""
        return max(self.capacity, ob.cache.MIN_CAPACITY.get(policy, 1))


def _key_pool(rng: np.random.Generator, n: int, signed: bool) -> np.ndarray:
    """``n`` distinct keys over the int64 (or uint64) range, the extremes among them."""
    if signed:
        edges = [0, -1, -(2**63), 2**63 - 1]
        drawn = rng.integers(-(2**63), 2**63 - 1, size=n, dtype=np.int64, endpoint=True)
    else:
        edges = [0, 1, 2**63, 2**64 - 1]
        drawn = rng.integers(0, 2**64 - 1, size=n, dtype=np.uint64, endpoint=True)
    dtype = np.int64 if signed else np.uint64
    pool = list(dict.fromkeys([*edges, *drawn.tolist()]))
    return np.array(pool[:n], dtype=dtype)


def _ids(rng: np.random.Generator, n: int, capacity: int, length: int, kinds: list[str]) -> np.ndarray:
    """Dense ids of a trace of ``length`` accesses, made of segments of the given kinds over
    ``n`` hot ids; scans take ids from ``n`` up, never seen before."""
    out: list[np.ndarray] = []
    fresh = n
    cuts = np.sort(rng.choice(np.arange(1, length), size=len(kinds) - 1, replace=False)) if len(kinds) > 1 else []
    for kind, part in zip(kinds, np.split(np.arange(length), cuts)):
        size = len(part)
        if kind == "skewed":  # rank r with probability about r**-(1 - 1/a): a hot head, a long tail
            out.append((n * rng.random(size) ** rng.choice([1.5, 2.0, 3.0])).astype(np.int64))
        elif kind == "scan":  # one-off keys: each passes through the cache once
            out.append(np.arange(fresh, fresh + size))
            fresh += size
        elif kind == "loop":  # a cycle a little larger than the cache: LRU and FIFO always miss
            width = min(n, capacity + 1 + int(rng.integers(0, capacity + 2)))
            start = int(rng.integers(0, n - width + 1))
            out.append(start + np.arange(size) % width)
        else:  # uniform
            out.append(rng.integers(0, n, size))
    return np.concatenate(out)


@st.composite
def cache_cases(draw: st.DrawFn, max_capacity: int = 40, max_length: int = 400) -> CacheCase:
    """Unit-size traces on which every policy evicts many times: 2 to 6 times as many hot keys
    as the capacity, 8 to 16 accesses per slot, in one to four segments (skewed, scan, loop,
    uniform)."""
    capacity = draw(st.integers(1, max_capacity))
    rng = np.random.default_rng(draw(SEEDS))
    n = max(capacity * draw(st.integers(2, 6)), 12)
    length = min(max_length, capacity * draw(st.integers(8, 16)) + draw(st.integers(20, 60)))
    kinds = draw(st.lists(st.sampled_from(["skewed", "skewed", "scan", "loop", "uniform"]), min_size=1, max_size=4))
    ids = _ids(rng, n, capacity, length, kinds)
    pool = _key_pool(rng, int(ids.max()) + 1, signed=draw(st.booleans()))
    return CacheCase(pool[ids], capacity)


@st.composite
def sized_cases(draw: st.DrawFn) -> CacheCase:
    """Sized traces whose objects are a fair share of the capacity (1 to 400 bytes): a few
    small, many between a quarter and a half, some near or above the capacity (never
    admitted). Each key keeps its size, except that one access in five may bring a new size
    when ``resize`` is drawn (a hit keeps the size the object entered with)."""
    capacity = draw(st.integers(10, 400))
    rng = np.random.default_rng(draw(SEEDS))
    n = draw(st.integers(8, 40))
    length = draw(st.integers(60, 300))
    kinds = draw(st.lists(st.sampled_from(["skewed", "skewed", "scan", "loop", "uniform"]), min_size=1, max_size=3))
    ids = _ids(rng, n, 4, length, kinds)

    def sizes_of(count: int) -> np.ndarray:
        band = rng.choice(3, size=count, p=[0.2, 0.6, 0.2])
        small = rng.integers(1, max(2, capacity // 8), size=count, endpoint=True)
        mid = rng.integers(max(1, capacity // 4), max(1, capacity // 2), size=count, endpoint=True)
        near = rng.integers(max(1, capacity * 7 // 10), capacity * 6 // 5, size=count, endpoint=True)
        return np.choose(band, [small, mid, near])

    sizes = sizes_of(int(ids.max()) + 1)[ids]
    if draw(st.booleans()):
        resized = rng.random(length) < 0.2
        sizes = np.where(resized, sizes_of(length), sizes)
    pool = _key_pool(rng, int(ids.max()) + 1, signed=draw(st.booleans()))
    return CacheCase(pool[ids], capacity, sizes.astype(np.uint64))


def evictions(case: CacheCase, policy: str = "lru") -> int:
    """How many objects ``policy`` (reference engine) evicts on the case: the misses it
    admitted, less what it holds at the end."""
    cache = reference.make(policy, case.capacity_for(policy))
    admitted = 0
    keys = case.keys.tolist()
    sizes = [None] * len(keys) if case.sizes is None else case.sizes.tolist()
    for k, s in zip(keys, sizes):
        hit = cache.access(k) if s is None else cache.access(k, None, s)
        admitted += not hit and k in cache
    return admitted - len(cache)


# ------------------------------------------------------------------ scheduling


@st.composite
def workloads(draw: st.DrawFn, max_jobs: int = 40) -> ob.sched.Workload:
    """Jobs on a grid of 1/4, so that arrivals, sizes and completions tie (with some free-float
    sizes): three in ten arrive with the job before them (bursts), the others 1/4 to 10 later;
    four in ten are long (4 to 16), the others short (1/4 to 2), so that short jobs arrive
    while long ones run and preemptive policies preempt (load about 1); classes 0 to 2 and
    predictions off by up to a factor of 2."""
    rng = np.random.default_rng(draw(SEEDS))
    n = draw(st.integers(6, max_jobs))
    gaps = np.where(rng.random(n) < 0.3, 0.0, rng.integers(1, 41, size=n) * 0.25)
    arrival = np.cumsum(gaps) - gaps[0]
    long = rng.random(n) < 0.4
    size = np.where(long, rng.integers(16, 65, size=n), rng.integers(1, 9, size=n)) * 0.25
    free = rng.random(n) < draw(st.sampled_from([0.0, 0.2]))
    size = np.where(free, rng.uniform(0.01, 4.0, size=n), size)
    predicted = size * rng.choice([0.5, 1.0, 1.5, 2.0], size=n)
    classes = rng.integers(0, 3, size=n)
    return ob.sched.Workload(arrival, size, classes, predicted)


def preemptions(w: ob.sched.Workload) -> int:
    """Times SRPT interrupts a job before it is done (runs in its timeline beyond one per job)."""
    runs = [j for j, _, _ in ob.sched.timeline(w, "srpt") if j >= 0]
    return len(runs) - len(w)


# ------------------------------------------------------------------ radix


@dataclass
class RadixCase:
    prompts: list[list[int]]
    capacity: Optional[int]
    page_size: int


@st.composite
def radix_cases(draw: st.DrawFn) -> RadixCase:
    """Request streams that share prefixes and overflow the cache: two to four system prompts
    (2 to 10 tokens) under most requests, conversations that extend an earlier prompt, exact
    repeats, tokens from a vocabulary of 6 (siblings share first tokens and pages); a
    capacity of a twentieth to a fifth of the tokens (or unlimited, one case in six)."""
    rng = np.random.default_rng(draw(SEEDS))
    systems = [rng.integers(0, 6, size=int(rng.integers(2, 11))).tolist() for _ in range(draw(st.integers(2, 4)))]
    prompts: list[list[int]] = []
    for _ in range(draw(st.integers(8, 30))):
        roll = rng.random()
        if prompts and roll < 0.15:
            prompt = prompts[int(rng.integers(max(0, len(prompts) - 4), len(prompts)))]
        elif prompts and roll < 0.6:
            prompt = (
                prompts[int(rng.integers(0, len(prompts)))] + rng.integers(0, 6, size=int(rng.integers(1, 6))).tolist()
            )
        else:
            prompt = (
                systems[int(rng.integers(0, len(systems)))] + rng.integers(0, 6, size=int(rng.integers(0, 9))).tolist()
            )
        prompts.append(prompt)
    total = sum(map(len, prompts))
    unlimited = draw(st.integers(0, 5)) == 0
    capacity = None if unlimited else max(1, int(total * draw(st.sampled_from([0.05, 0.1, 0.2]))))
    return RadixCase(prompts, capacity, draw(st.sampled_from([1, 1, 2, 3])))
