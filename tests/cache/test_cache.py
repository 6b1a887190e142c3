"""Cache engine: native equals reference hit for hit; golden facts; curves; bad input."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import osbench as ob
from osbench import _native
from osbench.cache import MIN_CAPACITY, POLICIES, reference

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


def test_belady_anomaly_golden() -> None:
    seq = ob.traces.belady_sequence()
    for engine in ("native", "reference"):
        misses = {p: [ob.cache.replay(seq, p, c, engine=engine).misses for c in (3, 4)] for p in ("fifo", "lru", "opt")}
        assert misses == {"fifo": [9, 10], "lru": [10, 8], "opt": [7, 6]}
    # Exercise 5: len(seq) - hits of OPT at 3 frames = 7.
    assert len(seq) - ob.cache.replay(seq, "opt", 3).hits == 7


def test_demo04_zipf_matches_the_lecture() -> None:
    from osbench.cache.lecture import LECTURE_ZIPF_HIT_RATIO

    t = ob.traces.zipf(1000, 0.8, 30_000, seed=1)
    for policy, expected in LECTURE_ZIPF_HIT_RATIO.items():
        assert abs(ob.cache.replay(t, policy, 100).hit_ratio - expected) < 0.01, policy


def test_demo04_breakdown_shows_each_failure() -> None:
    from osbench.cache import lecture

    w = lecture.breakdown_workloads()
    hit = {name: {p: ob.cache.replay(t, p, 100).hit_ratio for p in POLICIES} for name, t in w.items()}
    loop, scan, drift = hit.values()
    assert all(loop[p] == 0.0 for p in ("fifo", "lru", "lfu", "clock", "arc")) and loop["opt"] > 0.5
    assert scan["lfu"] > scan["lru"] + 0.05 and scan["arc"] > scan["lru"] + 0.05
    assert drift["lfu"] < drift["lru"] - 0.2 and drift["arc"] >= drift["lru"]


def test_replay_result_fields() -> None:
    r = ob.cache.replay([1, 2, 1, 3, 1], "lru", 2)
    assert (r.policy, r.capacity, r.accesses, r.hits, r.misses) == ("lru", 2, 5, 2, 3)
    assert r.hit_ratio == 0.4 and r.miss_ratio == 0.6 and r.mask is None
    assert r.to_dict()["hits"] == 2
    empty = ob.cache.replay([], "arc", 5)
    assert (empty.accesses, empty.hits, empty.hit_ratio) == (0, 0, 0.0)
    assert ob.cache.replay(np.array([], dtype=np.uint64), "opt", 5, engine="reference").accesses == 0
    assert ob.cache.curve([], "lru", [1, 2]).tolist() == [0.0, 0.0]


def test_extreme_keys_are_distinct() -> None:
    u = np.array([2**64 - 1, 0, 2**63, 2**64 - 1, 2**63], dtype=np.uint64)
    assert ob.cache.replay(u, "lru", 3).hits == 2
    s = np.array([-(2**63), -1, 2**63 - 1, -1], dtype=np.int64)
    assert ob.cache.replay(s, "fifo", 3).hits == 1
    ids, n = ob.traces.Trace(u).dense()
    assert n == 3 and ids.tolist() == [0, 1, 2, 0, 2]


def test_reference_takes_any_hashable_keys() -> None:
    words = "you are a helpful assistant you are".split()
    assert ob.cache.replay(words, "lru", 10, engine="reference").hits == 2
    with pytest.raises(TypeError, match="integer keys"):
        ob.cache.replay(words, "lru", 10)


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


def test_online_cache_basics() -> None:
    c = ob.cache.new("lru", 2)
    assert c.access(42) is False and c.access(42) is True and 42 in c and len(c) == 1
    c.access(-(2**63))
    c.access(2**64 - 1)  # -1 and 2**64-1 are different keys online
    assert 42 not in c and -1 not in c and 2**64 - 1 in c
    with pytest.raises(ValueError, match="no online form"):
        ob.cache.new("opt", 3)
    with pytest.raises(ValueError, match="no online form"):
        _native.OnlineCache("opt", 3)
    with pytest.raises(ValueError, match="outside"):
        c.access(2**64)


def test_native_policy_names_match() -> None:
    assert tuple(_native.CACHE_POLICIES) == POLICIES
    assert set(reference.POLICY_CLASSES) == set(POLICIES)


@pytest.mark.parametrize("policy", sorted(MIN_CAPACITY))
def test_small_capacities_are_refused_clearly(policy: str) -> None:
    least = MIN_CAPACITY[policy]
    for call in (
        lambda: ob.cache.replay([1, 2], policy, least - 1),
        lambda: ob.cache.replay([1, 2], policy, least - 1, engine="reference"),
        lambda: ob.cache.curve([1, 2], policy, [least, least - 1]),
        lambda: ob.cache.new(policy, least - 1),
    ):
        with pytest.raises(ValueError, match=f"at least {least}"):
            call()
    for direct in (lambda: _native.OnlineCache(policy, least - 1), lambda: reference.make(policy, least - 1)):
        with pytest.raises(ValueError, match="capacity"):
            direct()
    assert ob.cache.replay([1, 2, 1], policy, least).accesses == 3


def test_sieve_keeps_a_hit_object_the_hand_passes() -> None:
    # cap 3: 1,2,3 fill; 1 is hit (visited); 4 evicts: the hand clears 1 and evicts 2;
    # 5 evicts 3 (the hand rests after 2); 1 stays and hits.
    for engine in ("native", "reference"):
        r = ob.cache.replay([1, 2, 3, 1, 4, 5, 1, 2], "sieve", 3, mask=True, engine=engine)
        assert r.mask is not None and np.flatnonzero(r.mask).tolist() == [3, 6]


def test_gdsf_newcomer_can_leave_at_once() -> None:
    # cap 1: 1 is hit (priority 2e6); 2 enters at 1e6, the lowest, and leaves at once (L=1e6);
    # 2 again enters at 2e6, ties with 1, and 1 (accessed earlier) leaves.
    for engine in ("native", "reference"):
        r = ob.cache.replay([1, 1, 2, 2, 1], "gdsf", 1, mask=True, engine=engine)
        assert r.mask is not None and r.mask.tolist() == [False, True, False, False, False]
    g = reference.GDSF(1)
    for k in [1, 1, 2]:
        g.access(k)
    assert g.inflation == 1e6 and 1 in g and 2 not in g


def test_arc_keeps_a_real_valued_target() -> None:
    # Ghost hits move p by |B2|/|B1| or |B1|/|B2|, fractions: rounding p would change results.
    arc = reference.ARC(10)
    seen = set()
    for k in ob.traces.zipf(60, 0.6, 3000, seed=5).keys.tolist():
        arc.access(k)
        seen.add(arc.p)
    assert any(p != int(p) for p in seen)


# ------------------------------------------------------------------ bad input


@pytest.mark.parametrize("capacity", [0, -1, 2.5, "10", None, True])
def test_bad_capacity(capacity: object) -> None:
    with pytest.raises((ValueError, TypeError), match="capacity"):
        ob.cache.replay([1, 2, 3], "lru", capacity)  # type: ignore[arg-type]
    with pytest.raises((ValueError, TypeError), match="capacity"):
        ob.cache.new("lru", capacity)  # type: ignore[arg-type]


def test_bad_policy_lists_the_valid_ones() -> None:
    for call in (
        lambda: ob.cache.replay([1], "LRU2", 3),
        lambda: ob.cache.curve([1], "mru", [3]),
        lambda: ob.cache.new("x", 3),
    ):
        with pytest.raises(ValueError, match="fifo, lru, lfu, clock, arc, opt"):
            call()
    with pytest.raises(ValueError, match="fifo, lru, lfu, clock, arc, opt"):
        _native.cache_replay("nope", np.zeros(3, dtype=np.uint32), 1, 3)


@pytest.mark.parametrize(
    "trace, error",
    [
        (np.array([1.0, 2.0]), TypeError),
        (np.array(["a", "b"]), TypeError),
        (np.array([[1, 2], [3, 4]]), ValueError),
        (np.array([1, "a", None], dtype=object), TypeError),
        ([[1, 2], [3]], TypeError),
    ],
)
def test_bad_traces_for_the_native_engine(trace: object, error: type) -> None:
    with pytest.raises(error, match="trace"):
        ob.cache.replay(trace, "lru", 3)


def test_bad_engine_and_capacities() -> None:
    with pytest.raises(ValueError, match="engine"):
        ob.cache.replay([1], "lru", 3, engine="gpu")
    with pytest.raises(ValueError, match="capacities"):
        ob.cache.curve([1, 2], "lru", [3, 0])


def test_native_functions_reject_bad_arrays_without_crashing() -> None:
    ids = np.array([0, 1, 5], dtype=np.uint32)
    with pytest.raises(ValueError, match="n_ids"):
        _native.cache_replay("lru", ids, 2, 3)
    with pytest.raises(ValueError, match="n_ids"):
        _native.cache_curve("lru", ids, 2, np.array([1], dtype=np.uint64))
    with pytest.raises(ValueError, match="next_use"):
        _native.cache_replay("opt", ids, 6, 3)
    with pytest.raises(ValueError, match="next_use"):
        _native.cache_replay("opt", ids, 6, 3, np.zeros(2, dtype=np.uint64))
    with pytest.raises(TypeError):
        _native.cache_replay("lru", ids.astype(np.float64), 6, 3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="int64 or uint64"):
        _native.dense_ids(np.zeros(3, dtype=np.float32))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="contiguous"):
        _native.dense_ids(np.arange(10, dtype=np.int64)[::2])
    with pytest.raises(ValueError, match="ids"):
        _native.next_use(ids, 3)
    with pytest.raises(OverflowError):
        _native.cache_replay("lru", ids, 6, -3)


def test_generators_are_seeded_and_shaped() -> None:
    a, b = ob.traces.zipf(100, 1.0, 1000, seed=7), ob.traces.zipf(100, 1.0, 1000, seed=7)
    assert np.array_equal(a.keys, b.keys) and a.keys.min() >= 0 and a.keys.max() < 100
    assert not np.array_equal(a.keys, ob.traces.zipf(100, 1.0, 1000, seed=8).keys)
    # rank 1 is the most popular
    counts = np.bincount(a.keys, minlength=100)
    assert counts[0] == counts.max()
    assert ob.traces.loop(3, 7).keys.tolist() == [0, 1, 2, 0, 1, 2, 0]
    s = ob.traces.scan(5, 100, scan_length=10, period=20, seed=1).keys
    assert len(s) == 100 and set(s[20:30].tolist()) == set(range(5, 15))
    d = ob.traces.drift(100, 1000, n_hot=10, phases=2, p_hot=1.0, seed=1).keys
    assert set(d[:500].tolist()) <= set(range(10)) and set(d[500:].tolist()) <= set(range(10, 20))
    with pytest.raises(ValueError, match="alpha"):
        ob.traces.zipf(10, -1.0, 10)
    with pytest.raises(ValueError, match="n_hot"):
        ob.traces.drift(10, 10, n_hot=6, phases=2)


def test_oracle_general_round_trip(tmp_path) -> None:  # type: ignore[no-untyped-def]
    t = ob.traces.zipf(50, 1.0, 500, seed=2)
    path = tmp_path / "t.oracleGeneral.bin"
    ob.traces.write_oracle_general(t, path)
    back = ob.traces.read_oracle_general(path)
    assert np.array_equal(back.keys.astype(np.int64), t.keys) and back.sizes.tolist() == [1] * 500
    path.write_bytes(path.read_bytes()[:-5])
    with pytest.raises(ValueError, match="byte offset 11976"):
        ob.traces.read_oracle_general(path)


def test_real_trace_engines_agree(dataset) -> None:  # type: ignore[no-untyped-def]
    t = ob.traces.read_oracle_general(dataset("cloudphysics"))
    assert (len(t), t.n_distinct) == (113_872, 48_974)
    short = ob.traces.Trace(t.keys[:20_000])
    for policy in POLICIES:
        assert ob.cache.replay(short, policy, 500).hits == ob.cache.replay(short, policy, 500, engine="reference").hits


# ------------------------------------------------------------------ object sizes


@settings(max_examples=80, deadline=None)
@given(trace=int_traces(), capacity=st.integers(1, 300), data=st.data())
def test_sized_native_equals_reference_hit_for_hit(trace: np.ndarray, capacity: int, data: st.DataObject) -> None:
    sizes = np.array(data.draw(st.lists(st.integers(1, 60), min_size=len(trace), max_size=len(trace))), dtype=np.int64)
    for policy in ob.cache.SIZED_POLICIES:
        cap = max(capacity, ob.cache.MIN_CAPACITY.get(policy, 1))
        native = ob.cache.replay(trace, policy, cap, mask=True, sizes=sizes)
        ref = ob.cache.replay(trace, policy, cap, mask=True, sizes=sizes, engine="reference")
        assert native.mask is not None and ref.mask is not None
        assert native.mask.tolist() == ref.mask.tolist(), policy
    for policy in ob.cache.SIZED_POLICIES:
        cap = max(capacity, ob.cache.MIN_CAPACITY.get(policy, 1))
        caps = [cap, cap * 2 + 5]
        got = ob.cache.curve(trace, policy, caps, sizes=sizes)
        assert got.tolist() == [ob.cache.replay(trace, policy, c, sizes=sizes).hit_ratio for c in caps], policy


@settings(max_examples=40, deadline=None)
@given(trace=int_traces(), capacity=st.integers(1, 45))
def test_unit_sizes_change_nothing(trace: np.ndarray, capacity: int) -> None:
    ones = np.ones(len(trace), dtype=np.uint64)
    for policy in ob.cache.SIZED_POLICIES:
        cap = max(capacity, ob.cache.MIN_CAPACITY.get(policy, 1))
        plain = ob.cache.replay(trace, policy, cap, mask=True)
        sized = ob.cache.replay(trace, policy, cap, mask=True, sizes=ones)
        assert plain.mask is not None and sized.mask is not None
        assert plain.mask.tolist() == sized.mask.tolist(), policy


def test_an_object_larger_than_the_cache_is_never_admitted() -> None:
    for policy in ob.cache.SIZED_POLICIES:
        for engine in ("native", "reference"):
            if policy == "twoq":  # as libCacheSim's TwoQ: only what fits in Ain (25%) is admitted
                r = ob.cache.replay([1, 1, 2, 2, 1], policy, 10, sizes=[3, 3, 2, 2, 1], mask=True, engine=engine)
            elif policy == "s3fifo":  # as libCacheSim's S3FIFO: only what is smaller than small (10%)
                r = ob.cache.replay([1, 1, 2, 2, 1], policy, 100, sizes=[10, 10, 9, 9, 4], mask=True, engine=engine)
            else:
                r = ob.cache.replay([1, 1, 2, 2, 1], policy, 10, sizes=[11, 11, 10, 10, 4], mask=True, engine=engine)
            assert r.mask is not None and r.mask.tolist() == [False, False, False, True, False], (policy, engine)


def test_sizes_with_files_and_streams(tmp_path) -> None:  # type: ignore[no-untyped-def]
    t = ob.traces.zipf(400, 0.9, 20_000, seed=8)
    t = ob.traces.Trace(t.keys, sizes=(t.keys % 13 + 1) * 100)
    path = tmp_path / "s.oracleGeneral.bin.zst"
    ob.traces.write(t, path)
    for policy in ob.cache.SIZED_POLICIES:
        want = ob.cache.replay(t, policy, 5000, sizes=True)
        assert want.hits == ob.cache.replay(t, policy, 5000, sizes=t.sizes).hits
        assert ob.cache.replay(path, policy, 5000, sizes=True, chunk_size=3000).hits == want.hits, policy
    s = ob.cache.stream("lru", 100)
    s.feed(np.array([1, 2], dtype=np.int64), None, np.array([50, 60], dtype=np.uint64))
    with pytest.raises(ValueError, match=r"start a new one|sizes"):
        s.feed(np.array([3], dtype=np.int64))


def test_bad_sizes() -> None:
    with pytest.raises(ValueError, match="one size per access"):
        ob.cache.replay([1, 2], "lru", 10, sizes=[1])
    for bad in ([0, 1], [-1, 1], [1.5, 1]):
        with pytest.raises(ValueError, match="positive integers"):
            ob.cache.replay([1, 2], "lru", 10, sizes=bad)
    with pytest.raises(ValueError, match="carries no sizes"):
        ob.cache.replay([1, 2], "lru", 10, sizes=True)
    with pytest.raises(ValueError, match="sizes"):
        _native.cache_replay("lru", np.zeros(2, dtype=np.uint32), 1, 3, None, False, False, np.ones(3, dtype=np.uint64))


# ------------------------------------------------------------------ sampled curves (SHARDS)


def test_sampling_everything_gives_the_exact_curve() -> None:
    t = ob.traces.zipf(2000, 0.9, 30_000, seed=6)
    caps = [10, 50, 500, 2000]
    for policy in ("lru", "sieve", "s3fifo"):
        assert ob.cache.curve(t, policy, caps, sample=1.0).tolist() == ob.cache.curve(t, policy, caps).tolist(), policy


def _splitmix_mask(keys: np.ndarray, rate: float, seed: int) -> np.ndarray:
    """SHARDS' key test written out in numpy: splitmix64(key + seed) mod 2**24 < rate * 2**24."""
    x = keys.astype(np.int64).view(np.uint64) + np.uint64(seed)
    with np.errstate(over="ignore"):
        x = x + np.uint64(0x9E3779B97F4A7C15)
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        x = x ^ (x >> np.uint64(31))
    return (x & np.uint64(2**24 - 1)) < np.uint64(int(rate * 2**24))


def test_spatial_sample_keeps_whole_keys_at_the_rate() -> None:
    keys = np.arange(-100_000, 100_000, dtype=np.int64)
    kept = ob.cache.spatial_sample(keys, 0.05)
    assert abs(kept.mean() - 0.05) < 0.005
    assert np.array_equal(kept, _splitmix_mask(keys, 0.05, 0))
    again = ob.cache.spatial_sample(np.concatenate([keys, keys]), 0.05)
    assert np.array_equal(again[:200_000], kept) and np.array_equal(again[200_000:], kept)
    with_seed = ob.cache.spatial_sample(keys, 0.05, seed=1)
    assert not np.array_equal(with_seed, kept) and np.array_equal(with_seed, _splitmix_mask(keys, 0.05, 1))
    # A key is the same key whether given as int64 or as the uint64 with its bit pattern.
    assert np.array_equal(ob.cache.spatial_sample(keys.view(np.uint64), 0.05), kept)
    with pytest.raises(TypeError, match="seed"):
        ob.cache.spatial_sample(keys, 0.05, seed=0.5)  # type: ignore[arg-type]


@settings(max_examples=60, deadline=None)
@given(
    keys=st.lists(st.integers(-(2**63), 2**64 - 1) | st.integers(0, 40), min_size=0, max_size=1500),
    rate=st.sampled_from([0.001, 0.01, 0.3, 1.0]),
    caps=st.lists(st.integers(1, 120), min_size=1, max_size=6),
)
def test_sampled_lru_is_exact_where_the_sample_would_be_small(keys: list[int], rate: float, caps: list[int]) -> None:
    """Capacities under 100 / rate come from the bounded exact stack: equal to the exact curve."""
    t = ob.traces.Trace(np.array([k if k < 2**63 else k - 2**64 for k in keys], dtype=np.int64))
    small = [c for c in caps if c * rate < ob.cache.SHARDS_MIN_OBJECTS]
    if small:
        assert ob.cache.curve(t, "lru", small, sample=rate).tolist() == ob.cache.curve(t, "lru", small).tolist()


def test_sampled_curves_are_exact_at_and_below_100_objects() -> None:
    t = ob.traces.zipf(3000, 1.0, 40_000, seed=8)
    caps = [10, 37, 100]
    for policy in ("sieve", "s3fifo", "fifo"):
        assert ob.cache.curve(t, policy, caps, sample=0.01).tolist() == ob.cache.curve(t, policy, caps).tolist(), policy


def test_sampled_lru_curve_is_close_on_a_mild_trace() -> None:
    t = ob.traces.zipf(50_000, 0.6, 600_000, seed=9)
    caps = np.unique(np.geomspace(100, 50_000, 30).astype(np.int64))
    exact = ob.cache.curve(t, "lru", caps)
    est = ob.cache.curve(t, "lru", caps, sample=0.1)
    assert np.mean(np.abs(est - exact)) < 0.01  # under one point
    s3 = ob.cache.curve(t, "s3fifo", [5000, 20_000], sample=0.1)
    assert np.all(np.abs(s3 - ob.cache.curve(t, "s3fifo", [5000, 20_000])) < 0.02)


def test_sampled_lru_curve_is_close_on_a_skewed_trace_at_every_capacity() -> None:
    """Zipf 1.0 with its hottest keys swinging a 1% sample: small capacities are counted
    exactly, the rest come from the sample."""
    t = ob.traces.zipf(200_000, 1.0, 2_000_000, seed=43)
    caps = np.unique(np.geomspace(10, 200_000, 40).astype(np.int64))
    exact = ob.cache.curve(t, "lru", caps)
    est = ob.cache.curve(t, "lru", caps, sample=0.01)
    small = caps * 0.01 < ob.cache.SHARDS_MIN_OBJECTS
    assert est[small].tolist() == exact[small].tolist()
    assert np.mean(np.abs(est - exact)) < 0.01 and np.max(np.abs(est - exact)) < 0.03


def test_bad_sample_arguments() -> None:
    for bad in (0, 0.0, 1.5, -0.1, "0.1", True):
        with pytest.raises(ValueError, match="sample"):
            ob.cache.curve([1, 2, 1], "lru", [1], sample=bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="offline"):
        ob.cache.curve([1, 2, 1], "opt", [1], sample=0.5)
    with pytest.raises(ValueError, match="sizes"):
        ob.cache.curve([1, 2, 1], "lru", [10], sample=0.5, sizes=[1, 1, 1])
    with pytest.raises(ValueError, match="reference"):
        ob.cache.curve([1, 2, 1], "lru", [10], sample=0.5, engine="reference")
