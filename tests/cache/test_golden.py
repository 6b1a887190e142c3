"""Golden facts: the lecture's numbers, Belady's anomaly, the policies' tie-breaks on small traces, result fields and key ranges."""

from __future__ import annotations

import numpy as np
import pytest

import osbench as ob
from osbench.cache import POLICIES, reference


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


def test_an_object_larger_than_the_cache_is_never_admitted() -> None:
    for policy in ob.cache.POLICIES:
        for engine in ("native", "reference"):
            if policy == "twoq":  # as libCacheSim's TwoQ: only what fits in Ain (25%) is admitted
                r = ob.cache.replay([1, 1, 2, 2, 1], policy, 10, sizes=[3, 3, 2, 2, 1], mask=True, engine=engine)
            elif policy == "slru":  # as libCacheSim's SLRU: only what fits in one segment (capacity / 4)
                r = ob.cache.replay([1, 1, 2, 2, 1], policy, 40, sizes=[11, 11, 10, 10, 4], mask=True, engine=engine)
            elif policy in ("s3fifo", "clock2qplus"):  # as libCacheSim's: only what is smaller than small (10%)
                r = ob.cache.replay([1, 1, 2, 2, 1], policy, 100, sizes=[10, 10, 9, 9, 4], mask=True, engine=engine)
            elif policy in ("clockpro", "cacheus", "flashprob"):  # as libCacheSim's: only what fits ClockPro's
                # cold target or Cacheus's SR list (half); FlashProb's RAM share holds one object from 20 on
                r = ob.cache.replay([1, 1, 2, 2, 1], policy, 20, sizes=[21, 21, 10, 10, 4], mask=True, engine=engine)
            elif policy == "wtinylfu":  # as libCacheSim's WTinyLFU: only what fits its window (1%)
                r = ob.cache.replay(
                    [1, 1, 2, 2, 1], policy, 1000, sizes=[1001, 1001, 10, 10, 4], mask=True, engine=engine
                )
            elif policy == "lirs":  # as libCacheSim's LIRS: only what fits its HIR set (1%)
                r = ob.cache.replay([1, 1, 2, 2, 1], policy, 1000, sizes=[11, 11, 10, 10, 4], mask=True, engine=engine)
            else:
                r = ob.cache.replay([1, 1, 2, 2, 1], policy, 10, sizes=[11, 11, 10, 10, 4], mask=True, engine=engine)
            assert r.mask is not None and r.mask.tolist() == [False, False, False, True, False], (policy, engine)
