"""Native equals reference hit for hit (hypothesis on random traces), curves equal replays, streams and files equal in-memory replays."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import osbench as ob
from osbench.cache import MIN_CAPACITY, POLICIES

VARIANTS = [(p, False) for p in POLICIES] + [("clock", True)]


@st.composite
def int_traces(draw: st.DrawFn) -> np.ndarray:
    """Traces over a small random pool of keys, from either the full int64 or uint64 range."""
    signed = draw(st.booleans())
    lo, hi = (-(2**63), 2**63 - 1) if signed else (0, 2**64 - 1)
    pool = draw(st.lists(st.integers(lo, hi), min_size=1, max_size=40, unique=True))
    keys = draw(st.lists(st.sampled_from(pool), max_size=400))
    return np.array(keys, dtype=np.int64 if signed else np.uint64)


@settings(max_examples=150, deadline=None)
@given(trace=int_traces(), capacity=st.integers(1, 45))
def test_native_equals_reference_hit_for_hit(trace: np.ndarray, capacity: int) -> None:
    for policy, bit in VARIANTS:
        if capacity < MIN_CAPACITY.get(policy, 1):
            continue
        native = ob.cache.replay(trace, policy, capacity, mask=True, bit_on_insert=bit)
        ref = ob.cache.replay(trace, policy, capacity, mask=True, bit_on_insert=bit, engine="reference")
        assert native.mask is not None and ref.mask is not None
        assert native.mask.tolist() == ref.mask.tolist(), (policy, bit)
        assert native.hits == ref.hits == int(native.mask.sum())


@settings(max_examples=60, deadline=None)
@given(trace=int_traces(), capacities=st.lists(st.integers(1, 50), min_size=1, max_size=8))
def test_curve_equals_per_capacity_replay(trace: np.ndarray, capacities: list[int]) -> None:
    t = ob.traces.Trace(trace)
    for policy in POLICIES:
        capacities = [c + MIN_CAPACITY.get(policy, 1) - 1 for c in capacities]
        got = ob.cache.curve(t, policy, capacities)
        want = [ob.cache.replay(t, policy, c).hit_ratio for c in capacities]
        assert got.tolist() == want, policy
    assert (
        ob.cache.curve(t, "arc", capacities, engine="reference").tolist()
        == ob.cache.curve(t, "arc", capacities).tolist()
    )


@settings(max_examples=60, deadline=None)
@given(trace=int_traces())
def test_stack_policies_never_lose_hits_with_more_room(trace: np.ndarray) -> None:
    caps = list(range(1, 42))
    for policy in ("lru", "opt"):
        hits = ob.cache.curve(trace, policy, caps)
        assert np.all(np.diff(hits) >= 0), policy


def test_large_curve_uses_every_path_and_agrees() -> None:
    # Long enough for the LRU window to compact, capacities beyond the OPT stack depth.
    t = ob.traces.zipf(5000, 0.9, 60_000, seed=3)
    caps = [1, 10, 100, 1000, 3000, 5000]
    for policy in ("lru", "opt", "lfu"):
        assert ob.cache.curve(t, policy, caps).tolist() == [ob.cache.replay(t, policy, c).hit_ratio for c in caps]


@settings(max_examples=60, deadline=None)
@given(keys=st.lists(st.integers(-(2**63), 2**64 - 1) | st.integers(0, 30), max_size=300), capacity=st.integers(1, 15))
def test_online_caches_agree(keys: list[int], capacity: int) -> None:
    for policy in POLICIES:
        if policy == "opt":
            continue
        size = capacity + MIN_CAPACITY.get(policy, 1) - 1
        native = ob.cache.new(policy, size)
        ref = ob.cache.new(policy, size, engine="reference")
        for k in keys:
            assert native.access(k) == ref.access(k), policy
            assert len(native) == len(ref) and (k in native) == (k in ref)


def test_real_trace_engines_agree(dataset) -> None:  # type: ignore[no-untyped-def]
    t = ob.traces.read_oracle_general(dataset("cloudphysics"))
    assert (len(t), t.n_distinct) == (113_872, 48_974)
    short = ob.traces.Trace(t.keys[:20_000])
    for policy in POLICIES:
        assert ob.cache.replay(short, policy, 500).hits == ob.cache.replay(short, policy, 500, engine="reference").hits


@settings(max_examples=80, deadline=None)
@given(trace=int_traces(), capacity=st.integers(1, 300), data=st.data())
def test_sized_native_equals_reference_hit_for_hit(trace: np.ndarray, capacity: int, data: st.DataObject) -> None:
    sizes = np.array(data.draw(st.lists(st.integers(1, 60), min_size=len(trace), max_size=len(trace))), dtype=np.int64)
    for policy in ob.cache.POLICIES:
        cap = max(capacity, ob.cache.MIN_CAPACITY.get(policy, 1))
        native = ob.cache.replay(trace, policy, cap, mask=True, sizes=sizes)
        ref = ob.cache.replay(trace, policy, cap, mask=True, sizes=sizes, engine="reference")
        assert native.mask is not None and ref.mask is not None
        assert native.mask.tolist() == ref.mask.tolist(), policy
    for policy in ob.cache.POLICIES:
        cap = max(capacity, ob.cache.MIN_CAPACITY.get(policy, 1))
        caps = [cap, cap * 2 + 5]
        got = ob.cache.curve(trace, policy, caps, sizes=sizes)
        assert got.tolist() == [ob.cache.replay(trace, policy, c, sizes=sizes).hit_ratio for c in caps], policy


@settings(max_examples=40, deadline=None)
@given(trace=int_traces(), capacity=st.integers(1, 45))
def test_unit_sizes_change_nothing(trace: np.ndarray, capacity: int) -> None:
    ones = np.ones(len(trace), dtype=np.uint64)
    for policy in ob.cache.POLICIES:
        cap = max(capacity, ob.cache.MIN_CAPACITY.get(policy, 1))
        plain = ob.cache.replay(trace, policy, cap, mask=True)
        sized = ob.cache.replay(trace, policy, cap, mask=True, sizes=ones)
        assert plain.mask is not None and sized.mask is not None
        assert plain.mask.tolist() == sized.mask.tolist(), policy


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
