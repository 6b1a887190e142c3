"""osbench.sched: native == reference job for job, lecture goldens, invariants, timelines."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from strategies import workloads

import osbench as ob
from osbench.sched import Workload, simulate
from osbench.sched.schedule import _largest

POLICY_PARAMS = [
    ("fcfs", {}),
    ("fcfs", {"switch_cost": 0.25}),
    ("sjf", {}),
    ("sjf", {"use_predictions": True}),
    ("srpt", {}),
    ("srpt", {"use_predictions": True, "switch_cost": 0.1}),
    ("rr", {"quantum": 0.5}),
    ("rr", {"quantum": 1.0, "switch_cost": 0.05}),
    ("ps", {}),
    ("mlfq", {"quantum": 0.5}),
    ("mlfq", {"quantum": 0.25, "levels": 3}),
    ("mlfq", {"quantum": 0.5, "boost": 3.0, "switch_cost": 0.01}),
    ("mlfq", {"quantum": 1.0, "levels": 1}),
    ("priority", {}),
    ("priority", {"aging": 0.5, "switch_cost": 0.1}),
]


@pytest.mark.parametrize("policy,params", POLICY_PARAMS, ids=[f"{p}-{i}" for i, (p, _) in enumerate(POLICY_PARAMS)])
@settings(max_examples=80, deadline=None)
@given(w=workloads())
def test_native_equals_reference(policy: str, params: dict, w: Workload) -> None:
    a = simulate(w, policy, **params)
    b = simulate(w, policy, engine="reference", **params)
    event("a job was interrupted" if a.switches >= len(w) else "no job was interrupted")
    # Same operations in the same order: bit-equal, not merely close.
    np.testing.assert_array_equal(a.completion, b.completion)
    np.testing.assert_array_equal(a.first_start, b.first_start)
    assert a.switches == b.switches
    assert a.switch_time == b.switch_time
    # Invariants: every job completes, after its arrival plus its size; starts after arriving.
    assert np.all(a.completion >= w.arrival + w.size - 1e-9 * (1 + w.arrival))
    assert np.all(a.first_start >= w.arrival)
    assert np.all(a.first_start <= a.completion)
    # Work conservation: the last completion is at least the total work after the first arrival.
    assert a.completion.max() >= w.arrival.min() + w.size.sum() * (1 - 1e-12)


@pytest.mark.parametrize("engine", ["native", "reference"])
def test_exercise_1(engine: str) -> None:
    w = Workload.batch([8, 4, 2, 1])
    fcfs = simulate(w, "fcfs", engine=engine)
    sjf = simulate(w, "sjf", engine=engine)
    rr = simulate(w, "rr", quantum=1.0, engine=engine)
    assert fcfs.completion.tolist() == [8, 12, 14, 15]
    assert sorted(sjf.completion.tolist()) == [1, 3, 7, 15]
    assert rr.completion.tolist() == [15, 11, 7, 4]
    assert fcfs.summary().mean_response == 12.25
    assert sjf.summary().mean_response == 6.5
    assert rr.summary().mean_response == 9.25
    assert rr.switches == 11  # A B C D A B C A B A B A, then A alone


@pytest.mark.parametrize("engine", ["native", "reference"])
def test_convoy(engine: str) -> None:
    w = Workload.batch([10, 1, 1])
    assert simulate(w, "fcfs", engine=engine).completion.mean() == 11
    sjf = simulate(w, "sjf", engine=engine)
    assert sjf.completion.mean() == 5
    assert sjf.completion[0] == 12  # A waits only 2 units more


def test_rr_tiny_quantum_approaches_ps() -> None:
    w = ob.sched.workload(300, load=0.7, sizes="exp", seed=5)
    ps = simulate(w, "ps").completion
    prev = math.inf
    for q in (0.1, 0.01, 0.001):
        err = np.abs(simulate(w, "rr", quantum=q).completion - ps).max()
        assert err < prev
        prev = err
    assert prev < 0.05


@settings(max_examples=80, deadline=None)
@given(w=workloads())
def test_srpt_is_optimal(w: Workload) -> None:
    best = simulate(w, "srpt").completion.mean()
    for policy, params in POLICY_PARAMS:
        if params.get("use_predictions") or params.get("switch_cost"):
            continue
        assert best <= simulate(w, policy, **params).completion.mean() * (1 + 1e-12) + 1e-12


def test_ps_first_start_is_arrival_and_no_switches() -> None:
    w = ob.sched.workload(500, load=0.9, sizes="bimodal", seed=1)
    s = simulate(w, "ps")
    np.testing.assert_array_equal(s.first_start, w.arrival)
    assert s.switches == 0 and s.summary().switching_fraction == 0.0


def test_fcfs_is_lindley() -> None:
    w = ob.sched.workload(2000, load=0.9, sizes="lognormal", seed=4)
    done = 0.0
    expected = []
    for a, s in zip(w.arrival, w.size):
        done = max(done, a) + s
        expected.append(done)
    np.testing.assert_array_equal(simulate(w, "fcfs").completion, expected)


def test_priority_and_aging() -> None:
    w = ob.sched.workload(20_000, load=(0.6, 0.3), sizes="exp", seed=2)
    strict = simulate(w, "priority").summary()
    aged = simulate(w, "priority", aging=1.0).summary()
    fcfs = simulate(w, "fcfs").summary()
    # Aging moves waiting from the batch class to the interactive one.
    assert strict.per_class[0].mean_response < aged.per_class[0].mean_response
    assert strict.per_class[1].mean_response > aged.per_class[1].mean_response
    assert strict.per_class[1].max_first_wait > aged.per_class[1].max_first_wait
    # Huge aging is FCFS.
    np.testing.assert_array_equal(simulate(w, "priority", aging=1e9).completion, simulate(w, "fcfs").completion)
    assert set(fcfs.per_class) == {0, 1}


def test_mlfq_boost_and_levels() -> None:
    w = ob.sched.workload(3000, load=0.9, sizes="lognormal", seed=3)
    plain = simulate(w, "mlfq", quantum=0.5)
    boosted = simulate(w, "mlfq", quantum=0.5, boost=5.0)
    assert not np.array_equal(plain.completion, boosted.completion)
    # One level with an infinite-ish allotment is FCFS (up to rounding: MLFQ's run is split at
    # every arrival); one level with a quantum is RR.
    np.testing.assert_allclose(
        simulate(w, "mlfq", quantum=1e12, levels=1).completion, simulate(w, "fcfs").completion, rtol=1e-12
    )
    np.testing.assert_array_equal(
        simulate(w, "mlfq", quantum=0.5, levels=1).completion, simulate(w, "rr", quantum=0.5).completion
    )


def test_switch_cost_accounting() -> None:
    w = ob.sched.workload(2000, load=0.5, sizes="exp", seed=9)
    s = simulate(w, "rr", quantum=0.1, switch_cost=0.01)
    assert s.switch_time == pytest.approx(0.01 * s.switches)
    frac = s.summary().switching_fraction
    assert 0 < frac < 1
    assert frac == pytest.approx(s.switch_time / s.makespan)


def test_summary_fields() -> None:
    w = Workload([0.0, 0.0, 1.0], [2.0, 1.0, 4.0])
    s = simulate(w, "sjf")
    np.testing.assert_array_equal(s.completion, [3.0, 1.0, 7.0])
    np.testing.assert_array_equal(s.response, [3.0, 1.0, 6.0])
    np.testing.assert_array_equal(s.slowdown, [1.5, 1.0, 1.5])
    np.testing.assert_array_equal(s.first_wait, [1.0, 0.0, 2.0])
    m = s.summary()
    assert m.mean_response == pytest.approx(10 / 3)
    assert m.slowdown_largest_1pct == 1.5  # the single largest job
    assert m.max_first_wait == 2.0
    assert m.switches == 2
    d = s.to_dict()
    assert d["summary"]["jobs"] == 3 and d["completion"] == [3.0, 1.0, 7.0]


@settings(max_examples=300, deadline=None)
@given(
    sizes=st.lists(st.sampled_from([0.5, 1.0, 2.0, 3.0, 1e-300]) | st.floats(0.1, 9.0), min_size=1, max_size=400),
    k=st.integers(1, 400),
)
def test_the_largest_jobs_are_a_stable_sorts_last_in_its_order(sizes: list[float], k: int) -> None:
    # Ties at the cut (many equal sizes) are the later ids, as the sort's tail; the same order
    # too, so the mean of their slowdowns adds the same numbers in the same order.
    size = np.array(sizes)
    k = min(k, len(size))
    np.testing.assert_array_equal(_largest(size, k), np.argsort(size, kind="stable")[-k:])


def test_empty_workload() -> None:
    w = Workload(np.zeros(0), np.zeros(0))
    for policy in ob.sched.POLICIES:
        s = simulate(w, policy)
        assert len(s.completion) == 0
        assert math.isnan(s.summary().mean_response)


def test_timeline_exercise_1() -> None:
    tl = ob.sched.timeline(Workload.batch([8, 4, 2, 1]), "rr", quantum=1.0)
    assert [j for j, _, _ in tl] == [0, 1, 2, 3, 0, 1, 2, 0, 1, 0, 1, 0]
    assert tl[-1] == (0, 11.0, 15.0)


@settings(max_examples=60, deadline=None)
@given(w=workloads())
def test_timeline_accounts_for_all_work(w: Workload) -> None:
    for policy, params in POLICY_PARAMS:
        if policy == "ps":
            continue
        tl = ob.sched.timeline(w, policy, **params)
        served = np.zeros(len(w))
        for j, start, end in tl:
            assert end >= start
            if j >= 0:
                served[j] += end - start
        np.testing.assert_allclose(served, w.size, rtol=1e-9, atol=1e-9)
        # Stretches never overlap.
        assert all(a[2] <= b[1] for a, b in zip(tl, tl[1:]))
    with pytest.raises(ValueError, match="ps"):
        ob.sched.timeline(w, "ps")


def test_boost_below_clock_resolution() -> None:
    # At t ~ 1e17 a boost period of 1 is below the spacing of floats (16): boosts stop, the run
    # ends, and time never runs backwards.
    w = Workload([1e17, 1e17, 1e17 + 64], [100.0, 50.0, 640.0])
    s = simulate(w, "mlfq", quantum=10.0, boost=1.0)
    r = simulate(w, "mlfq", quantum=10.0, boost=1.0, engine="reference")
    np.testing.assert_array_equal(s.completion, r.completion)
    assert np.all(s.completion >= w.arrival) and np.all(np.isfinite(s.completion))


def test_arrivals_out_of_order_over_many_sort_runs_are_taken_as_the_reference_takes_them() -> None:
    # More than two runs of the native arrival sort (65,536 jobs each), merged: ties across
    # runs keep id order, as the reference's sort by (arrival, id).
    n = 2 * 65_536 + 7
    rng = np.random.default_rng(3)
    arrival = rng.choice(np.array([0.0, 0.5, 1.0, 7.25, 30.0]), n) + rng.integers(0, 2, n) * rng.random(n)
    w = Workload(arrival, np.full(n, 1e-3))
    a, b = simulate(w, "fcfs"), simulate(w, "fcfs", engine="reference")
    np.testing.assert_array_equal(a.completion, b.completion)
    np.testing.assert_array_equal(np.argsort(a.first_start, kind="stable"), np.lexsort((np.arange(n), arrival)))
