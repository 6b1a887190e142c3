"""Native equals reference hit for hit (hypothesis, on traces built to evict many times), curves
equal the reference engine's replays, streams and files equal in-memory replays."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import event, given, settings, target
from hypothesis import strategies as st
from strategies import CacheCase, cache_cases, evictions, sized_cases

import osbench as ob
from osbench.cache import OFFLINE, POLICIES

VARIANTS = [(p, False) for p in POLICIES] + [("clock", True)]


def masks(case: CacheCase, policy: str, engine: str, capacity: int, **kw: object) -> list[bool]:
    r = ob.cache.replay(case.keys, policy, capacity, mask=True, sizes=case.sizes, engine=engine, **kw)  # type: ignore[arg-type]
    assert r.mask is not None and r.hits == int(r.mask.sum())
    return r.mask.tolist()


@settings(max_examples=150, deadline=None)
@given(case=cache_cases())
def test_native_equals_reference_hit_for_hit(case: CacheCase) -> None:
    evicted = evictions(case)
    target(float(evicted), label="LRU evictions")
    event("LRU evicts 20 times or more" if evicted >= 20 else "LRU evicts fewer than 20 times")
    for policy, bit in VARIANTS:
        cap = case.capacity_for(policy)
        native = masks(case, policy, "native", cap, bit_on_insert=bit)
        assert native == masks(case, policy, "reference", cap, bit_on_insert=bit), (policy, bit)


@settings(max_examples=60, deadline=None)
@given(case=cache_cases(max_length=250), halves=st.lists(st.integers(1, 6), min_size=1, max_size=5))
def test_curves_equal_the_reference_engines_replays(case: CacheCase, halves: list[int]) -> None:
    """Each native curve (one pass for LRU and OPT, one replay per capacity for the others)
    against the reference engine's replays, an independent computation; capacities from half
    the case's to three times it."""
    t = ob.traces.Trace(case.keys)
    for policy in POLICIES:
        caps = [max(case.capacity_for(policy), case.capacity * h // 2) for h in halves]
        want = [ob.cache.replay(case.keys, policy, c, engine="reference").hit_ratio for c in caps]
        assert ob.cache.curve(t, policy, caps).tolist() == want, policy
    arc = [case.capacity * h for h in halves]
    assert ob.cache.curve(t, "arc", arc, engine="reference").tolist() == ob.cache.curve(t, "arc", arc).tolist()


@settings(max_examples=60, deadline=None)
@given(case=cache_cases())
def test_stack_policies_never_lose_hits_with_more_room(case: CacheCase) -> None:
    caps = list(range(1, 3 * case.capacity + 2))
    for policy in ("lru", "opt"):
        hits = ob.cache.curve(case.keys, policy, caps)
        assert np.all(np.diff(hits) >= 0), policy


def test_large_stack_curves_equal_replays() -> None:
    """LRU's and OPT's curves come from one stack pass, their replays from one simulation per
    capacity: two computations. Long enough for the LRU window to compact many times."""
    t = ob.traces.zipf(5000, 0.9, 60_000, seed=3)
    caps = [1, 10, 100, 1000, 2000]
    for policy in ("lru", "opt"):
        assert ob.cache.curve(t, policy, caps).tolist() == [ob.cache.replay(t, policy, c).hit_ratio for c in caps]


@settings(max_examples=60, deadline=None)
@given(case=cache_cases(max_capacity=15, max_length=250))
def test_online_caches_agree(case: CacheCase) -> None:
    keys = case.keys.tolist()
    for policy in POLICIES:
        if policy in OFFLINE:
            continue
        size = case.capacity_for(policy)
        want = masks(case, policy, "native", size)
        native = ob.cache.new(policy, size)
        ref = ob.cache.new(policy, size, engine="reference")
        for i, k in enumerate(keys):
            assert native.access(k) == ref.access(k) == want[i], (policy, i)
            assert len(native) == len(ref) and (k in native) == (k in ref)


def test_real_trace_engines_agree(dataset) -> None:  # type: ignore[no-untyped-def]
    t = ob.traces.read_oracle_general(dataset("cloudphysics"))
    assert (len(t), t.n_distinct) == (113_872, 48_974)
    short = ob.traces.Trace(t.keys[:20_000])
    for policy in POLICIES:
        assert ob.cache.replay(short, policy, 500).hits == ob.cache.replay(short, policy, 500, engine="reference").hits


@settings(max_examples=80, deadline=None)
@given(case=sized_cases())
def test_sized_native_equals_reference_hit_for_hit(case: CacheCase) -> None:
    evicted = evictions(case)
    target(float(evicted), label="LRU evictions")
    event("LRU evicts 10 times or more" if evicted >= 10 else "LRU evicts fewer than 10 times")
    for policy in POLICIES:
        cap = case.capacity_for(policy)
        assert masks(case, policy, "native", cap) == masks(case, policy, "reference", cap), policy
        caps = [cap, cap * 2 + 5]
        want = [ob.cache.replay(case.keys, policy, c, sizes=case.sizes, engine="reference").hit_ratio for c in caps]
        assert ob.cache.curve(case.keys, policy, caps, sizes=case.sizes).tolist() == want, policy


@settings(max_examples=40, deadline=None)
@given(case=cache_cases())
def test_unit_sizes_change_nothing(case: CacheCase) -> None:
    ones = CacheCase(case.keys, case.capacity, np.ones(len(case.keys), dtype=np.uint64))
    for policy in POLICIES:
        cap = case.capacity_for(policy)
        assert masks(case, policy, "native", cap) == masks(ones, policy, "native", cap), policy


def test_sizes_with_files_and_streams(tmp_path) -> None:  # type: ignore[no-untyped-def]
    t = ob.traces.zipf(400, 0.9, 20_000, seed=8)
    t = ob.traces.Trace(t.keys, sizes=(t.keys % 13 + 1) * 100)
    path = tmp_path / "s.oracleGeneral.bin.zst"
    ob.traces.write(t, path)
    for policy in ob.cache.POLICIES:
        want = ob.cache.replay(t, policy, 5000, sizes=True)
        assert want.hits == ob.cache.replay(t, policy, 5000, sizes=t.sizes).hits
        assert ob.cache.replay(path, policy, 5000, sizes=True, chunk_size=3000).hits == want.hits, policy
    s = ob.cache.stream("lru", 100)
    s.feed(np.array([1, 2], dtype=np.int64), None, np.array([50, 60], dtype=np.uint64))
    with pytest.raises(ValueError, match=r"start a new one|sizes"):
        s.feed(np.array([3], dtype=np.int64))
