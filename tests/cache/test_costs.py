"""GDSF with per-access costs (lecture section 4.5: evict by value per byte, where the value
can be the recompute cost): ``costs=`` in replay and curve, ``new(..., costs=True)`` online."""

from __future__ import annotations

from typing import Any, Optional

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import osbench as ob
from osbench import _native
from osbench.cache import COSTED_POLICIES, OFFLINE, POLICIES, reference

ENGINES = ("native", "reference")
SCALE = reference.GDSF_SCALE

# A few values that tie often (ties are where engines could part), and any positive float.
COSTS = st.sampled_from([0.5, 1.0, 3.0, SCALE, 2.5e6]) | st.floats(1e-3, 1e9, allow_nan=False, allow_infinity=False)


@st.composite
def costed_traces(draw: st.DrawFn) -> tuple[np.ndarray, Optional[np.ndarray], np.ndarray]:
    """Keys, sizes (or None for unit sizes) and costs, one per access; more keys than the
    capacities drawn with it (1 to 40) hold, so GDSF evicts."""
    pool = draw(st.lists(st.integers(-(2**63), 2**63 - 1), min_size=1, max_size=80, unique=True))
    keys = draw(st.lists(st.sampled_from(pool), max_size=300))
    n = len(keys)
    sizes = draw(st.none() | st.lists(st.integers(1, 60), min_size=n, max_size=n))
    costs = draw(st.lists(COSTS, min_size=n, max_size=n))
    return (
        np.array(keys, dtype=np.int64),
        None if sizes is None else np.array(sizes, dtype=np.uint64),
        np.array(costs, dtype=np.float64),
    )


@settings(max_examples=150, deadline=None)
@given(trace=costed_traces(), capacity=st.integers(1, 40))
def test_native_equals_reference_with_costs(
    trace: tuple[np.ndarray, Optional[np.ndarray], np.ndarray], capacity: int
) -> None:
    keys, sizes, costs = trace
    native = ob.cache.replay(keys, "gdsf", capacity, sizes=sizes, costs=costs, mask=True)
    ref = ob.cache.replay(keys, "gdsf", capacity, sizes=sizes, costs=costs, mask=True, engine="reference")
    assert native.mask is not None and ref.mask is not None
    assert native.mask.tolist() == ref.mask.tolist()
    # Online, access by access, in both engines.
    online = [ob.cache.new("gdsf", capacity, sizes=sizes is not None, costs=True, engine=e) for e in ENGINES]
    for i, k in enumerate(keys.tolist()):
        size = None if sizes is None else int(sizes[i])
        got = [c.access(k, size, float(costs[i])) for c in online]
        assert got == [native.mask[i]] * 2, i
        assert len(online[0]) == len(online[1]) and online[0].used == online[1].used
        assert (k in online[0]) == (k in online[1])
    # Curves (one replay per capacity) equal the reference engine's.
    caps = [capacity, capacity * 2 + 3, 1]
    got = ob.cache.curve(keys, "gdsf", caps, sizes=sizes, costs=costs)
    assert got.tolist() == ob.cache.curve(keys, "gdsf", caps, sizes=sizes, costs=costs, engine="reference").tolist()


@settings(max_examples=60, deadline=None)
@given(trace=costed_traces(), capacity=st.integers(1, 40))
def test_costs_at_the_scale_change_nothing(
    trace: tuple[np.ndarray, Optional[np.ndarray], np.ndarray], capacity: int
) -> None:
    keys, sizes, _ = trace
    scale = np.full(len(keys), SCALE)
    for engine in ENGINES:
        plain = ob.cache.replay(keys, "gdsf", capacity, sizes=sizes, mask=True, engine=engine)
        costed = ob.cache.replay(keys, "gdsf", capacity, sizes=sizes, costs=scale, mask=True, engine=engine)
        assert plain.mask is not None and costed.mask is not None
        assert plain.mask.tolist() == costed.mask.tolist(), engine
    caps = [capacity, capacity + 7]
    assert (
        ob.cache.curve(keys, "gdsf", caps, sizes=sizes, costs=scale).tolist()
        == ob.cache.curve(keys, "gdsf", caps, sizes=sizes).tolist()
    )
    plain_online = ob.cache.new("gdsf", capacity, sizes=sizes is not None)
    costed_online = ob.cache.new("gdsf", capacity, sizes=sizes is not None, costs=True)
    for i, k in enumerate(keys.tolist()):
        size = None if sizes is None else int(sizes[i])
        assert plain_online.access(k, size) == costed_online.access(k, size, SCALE)


def test_default_gdsf_still_matches_a_long_trace() -> None:
    t = ob.traces.zipf(3000, 0.9, 40_000, seed=12)
    sizes = t.keys % 17 + 1
    for kw in ({}, {"sizes": sizes}):
        cap = 300 if not kw else 3000
        plain = ob.cache.replay(t, "gdsf", cap, **kw)
        costed = ob.cache.replay(t, "gdsf", cap, costs=np.full(len(t), SCALE), **kw)
        assert plain.hits == costed.hits and 0 < plain.hits < len(t)


# Two slots; A costs 10, B 1, C 5 (same size, same frequency). C's arrival evicts the cheap
# B (L becomes 1); A then hits; B comes back at L + 1 = 2, the lowest, and leaves at once;
# C hits. Without costs every newcomer ties at 1e6 and the least recent goes: no hit at all.
GOLDEN_KEYS = [0, 1, 2, 0, 1, 2]
GOLDEN_COSTS = [10.0, 1.0, 5.0, 10.0, 1.0, 5.0]
GOLDEN_MASK = [False, False, False, True, False, True]


@pytest.mark.parametrize("engine", ENGINES)
def test_the_expensive_object_survives(engine: str) -> None:
    r = ob.cache.replay(GOLDEN_KEYS, "gdsf", 2, costs=GOLDEN_COSTS, mask=True, engine=engine)
    assert r.mask is not None and r.mask.tolist() == GOLDEN_MASK
    plain = ob.cache.replay(GOLDEN_KEYS, "gdsf", 2, mask=True, engine=engine)
    assert plain.mask is not None and not plain.mask.any()
    # The same in bytes: three 100-byte objects, a 200-byte cache.
    sized = ob.cache.replay(GOLDEN_KEYS, "gdsf", 200, sizes=[100] * 6, costs=GOLDEN_COSTS, mask=True, engine=engine)
    assert sized.mask is not None and sized.mask.tolist() == GOLDEN_MASK
    c = ob.cache.new("gdsf", 2, costs=True, engine=engine)
    assert [c.access(k, cost=v) for k, v in zip(GOLDEN_KEYS, GOLDEN_COSTS)] == GOLDEN_MASK
    assert 0 in c and 2 in c and 1 not in c and c.used == len(c) == 2
    # Integer costs are costs too.
    assert ob.cache.replay(GOLDEN_KEYS, "gdsf", 2, costs=[10, 1, 5, 10, 1, 5], mask=True, engine=engine).hits == 2


@pytest.mark.parametrize("engine", ENGINES)
def test_an_object_keeps_the_cost_it_entered_with(engine: str) -> None:
    # B enters at cost 1; its hit (count 2, priority 2) names cost 1e9, which is not looked
    # at: C (5) evicts B (2). Were the newest cost used, B would stay and C would go.
    c = ob.cache.new("gdsf", 2, costs=True, engine=engine)
    got = [c.access(k, cost=v) for k, v in [(0, 10.0), (1, 1.0), (1, 1e9), (2, 5.0)]]
    assert got == [False, False, True, False] and 1 not in c and 2 in c


def test_cost_per_byte_decides_with_sizes() -> None:
    # 300 bytes. A: 200 bytes, cost 1000 (5 per byte); B: 100 bytes, cost 100 (1 per byte).
    # C: 100 bytes, cost 300 (3 per byte) needs room: B, the lowest value per byte, goes.
    keys, sizes, costs = [0, 1, 2, 0, 1], [200, 100, 100, 200, 100], [1000.0, 100.0, 300.0, 1000.0, 100.0]
    for engine in ENGINES:
        r = ob.cache.replay(keys, "gdsf", 300, sizes=sizes, costs=costs, mask=True, engine=engine)
        assert r.mask is not None and r.mask.tolist() == [False, False, False, True, False]


@pytest.mark.parametrize("policy", [p for p in POLICIES if p not in COSTED_POLICIES])
def test_costs_are_for_gdsf_only(policy: str) -> None:
    cap = ob.cache.MIN_CAPACITY.get(policy, 1) * 3
    for call in (
        lambda: ob.cache.replay([1, 2], policy, cap, costs=[1.0, 2.0]),
        lambda: ob.cache.replay([1, 2], policy, cap, costs=[1.0, 2.0], engine="reference"),
        lambda: ob.cache.curve([1, 2], policy, [cap], costs=[1.0, 2.0]),
    ):
        with pytest.raises(ValueError, match=r"costs.*gdsf"):
            call()
    with pytest.raises(ValueError, match=r"no online form" if policy in OFFLINE else r"costs.*gdsf"):
        ob.cache.new(policy, cap, costs=True)
    ids = np.zeros(2, dtype=np.uint32)
    next_use = np.full(2, 2**64 - 1, dtype=np.uint64)
    for call in (
        lambda: _native.cache_replay(policy, ids, 1, cap, next_use, False, None, None, np.ones(2)),
        lambda: _native.cache_curve(
            policy, ids, 1, np.array([cap], dtype=np.uint64), next_use, None, None, None, np.ones(2)
        ),
    ):
        with pytest.raises(ValueError, match=r"costs.*gdsf"):
            call()
    if policy not in OFFLINE:
        with pytest.raises(ValueError, match=r"costs.*gdsf"):
            _native.OnlineCache(policy, cap, None, False, True)


@pytest.mark.parametrize(
    "costs, error, match",
    [
        ([1.0], ValueError, "one cost per access"),
        ([[1.0, 2.0]], ValueError, "one cost per access"),
        ([0.0, 1.0], ValueError, "finite positive"),
        ([-1.0, 1.0], ValueError, "finite positive"),
        ([float("nan"), 1.0], ValueError, "finite positive"),
        ([float("inf"), 1.0], ValueError, "finite positive"),
        (["a", "b"], TypeError, "numbers"),
        ([True, False], TypeError, "numbers"),
    ],
)
def test_bad_costs(costs: Any, error: type, match: str) -> None:
    for engine in ENGINES:
        with pytest.raises(error, match=f"costs.*{match}"):
            ob.cache.replay([1, 2], "gdsf", 3, costs=costs, engine=engine)
        with pytest.raises(error, match=f"costs.*{match}"):
            ob.cache.curve([1, 2], "gdsf", [3], costs=costs, engine=engine)


def test_bad_costs_reach_the_native_core_as_errors() -> None:
    ids = np.array([0, 1, 0], dtype=np.uint32)
    for bad in (np.array([1.0, 0.0, 1.0]), np.array([1.0, np.nan, 1.0]), np.array([1.0, -np.inf, 1.0])):
        with pytest.raises(ValueError, match="costs"):
            _native.cache_replay("gdsf", ids, 2, 3, None, False, None, None, bad)
        with pytest.raises(ValueError, match="costs"):
            _native.cache_curve("gdsf", ids, 2, np.array([3], dtype=np.uint64), None, None, None, None, bad)
    with pytest.raises(ValueError, match="costs=2 entries is not accepted"):
        _native.cache_replay("gdsf", ids, 2, 3, None, False, None, None, np.ones(2))


def test_costs_with_files_and_samples_are_refused(tmp_path) -> None:  # type: ignore[no-untyped-def]
    t = ob.traces.zipf(50, 0.9, 500, seed=1)
    path = tmp_path / "t.npy"
    ob.traces.write(t, path)
    with pytest.raises(ValueError, match="costs is not accepted when replaying a file"):
        ob.cache.replay(path, "gdsf", 10, costs=np.ones(len(t)))
    with pytest.raises(ValueError, match="sample is not accepted with sizes, costs"):
        ob.cache.curve(t, "gdsf", [10], costs=np.ones(len(t)), sample=0.5)


@pytest.mark.parametrize(
    "bad, error",
    [
        (0, ValueError),
        (-1.0, ValueError),
        (float("nan"), ValueError),
        (float("inf"), ValueError),
        (10**400, ValueError),
        ("1", TypeError),
        (True, TypeError),
        (None, TypeError),
        (1 + 2j, TypeError),
    ],
)
def test_bad_online_costs_are_refused_alike(bad: object, error: type) -> None:
    got = []
    for engine in ENGINES:
        c = ob.cache.new("gdsf", 10, costs=True, engine=engine)
        with pytest.raises(error) as info:
            c.access(1, cost=bad)  # type: ignore[arg-type]
        assert str(info.value).startswith("cost")
        assert len(c) == 0
        got.append((info.type, str(info.value)))
    assert got[0] == got[1]


def test_online_cost_unexpected_or_mixed_with_sizes() -> None:
    for engine in ENGINES:
        plain = ob.cache.new("gdsf", 10, engine=engine)
        with pytest.raises(TypeError, match=r"cost=2.0 is not accepted: this cache takes no costs"):
            plain.access(1, cost=2.0)
        both = ob.cache.new("gdsf", 100, sizes=True, costs=True, engine=engine)
        with pytest.raises(TypeError, match="size is required"):
            both.access(1, cost=2.0)
        with pytest.raises(TypeError, match="cost is required"):
            both.access(1, 5)
        assert both.access(1, 5, np.float32(2.5)) is False and both.access(1, 5, 1) is True and both.used == 5
        assert (both.sizes, both.costs) == (True, True)
    with pytest.raises(TypeError, match="costs='yes'"):
        ob.cache.new("gdsf", 10, costs="yes")  # type: ignore[arg-type]
