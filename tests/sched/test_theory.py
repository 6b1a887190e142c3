"""osbench.sched.theory: closed forms, and the native simulation landing on them."""

from __future__ import annotations

import math

import numpy as np
import pytest

import osbench as ob
from osbench.sched import simulate, theory


def test_closed_forms() -> None:
    # Pollaczek-Khinchine at load 0.8: 1 + 0.8 E[S^2] / 0.4.
    assert theory("fcfs", "exp", 0.8) == pytest.approx(5.0)
    assert theory("fcfs", "bimodal", 0.8) == pytest.approx(7.5)  # E[S^2] = 3.25
    assert theory("fcfs", "lognormal", 0.8) == pytest.approx(31.0)  # E[S^2] = 15
    assert theory("fcfs", "det", 0.5) == pytest.approx(1.5)
    for sizes in ("exp", "lognormal", "bimodal", "pareto"):
        assert theory("ps", sizes, 0.8) == pytest.approx(5.0)
    assert theory("rr", "exp", 0.8) == theory("mlfq", "exp", 0.8) == pytest.approx(5.0)
    assert theory("fcfs", "exp", 1.0) == math.inf


def test_srpt_and_sjf_structure() -> None:
    # With every size equal, SRPT and SJF are FCFS (ties in arrival order).
    assert theory("srpt", "det", 0.8) == pytest.approx(theory("fcfs", "det", 0.8))
    assert theory("sjf", "det", 0.8) == pytest.approx(theory("fcfs", "det", 0.8))
    for sizes in ("exp", "lognormal", "bimodal", "pareto"):
        srpt, sjf, fcfs = (theory(p, sizes, 0.8) for p in ("srpt", "sjf", "fcfs"))
        assert srpt < sjf < fcfs
        assert srpt < theory("ps", sizes, 0.8)
    # A two-point distribution is close to a narrow continuous one: the discrete formula agrees
    # with the integral in the limit (bimodal with equal halves vs the formula at a tiny spread).
    near = theory("srpt", np.array([1.0 - 1e-9, 1.0 + 1e-9]), 0.5)
    assert near == pytest.approx(theory("fcfs", "det", 0.5), rel=1e-6)


def test_srpt_at_low_load_is_the_size() -> None:
    assert theory("srpt", "lognormal", 1e-6) == pytest.approx(1.0, rel=1e-4)
    assert theory("srpt", "exp", 1e-6) == pytest.approx(1.0, rel=1e-4)


def test_priority_closed_form() -> None:
    hi = theory("priority", "exp", (0.6, 0.3), job_class=0)
    lo = theory("priority", "exp", (0.6, 0.3), job_class=1)
    assert hi == pytest.approx(1 + 0.6 * 2 / (2 * 0.4))  # M/M/1 alone at 0.6: 2.5
    assert lo == pytest.approx(1 / 0.4 + 0.9 * 2 / (2 * 0.4 * 0.1))  # 25
    assert theory("priority", "exp", (0.6, 0.3)) == pytest.approx((0.6 * hi + 0.3 * lo) / 0.9)
    assert theory("priority", "exp", (0.6, 0.5), job_class=1) == math.inf


@pytest.mark.parametrize(
    "call, exc, match",
    [
        (lambda: theory("lifo"), ValueError, "policy"),
        (lambda: theory("rr", "lognormal", 0.8), ValueError, "closed form"),
        (lambda: theory("fcfs", "exp", -0.1), ValueError, "load"),
        (lambda: theory("fcfs", "exp", (0.3, 0.3)), ValueError, "load"),
        (lambda: theory("fcfs", "exp", "x"), TypeError, "load"),
        (lambda: theory("priority", "exp", (0.3, 0.3), job_class=2), ValueError, "job_class"),
        (lambda: theory("fcfs", "exp", 0.5, job_class=0), ValueError, "job_class"),
        (lambda: theory("fcfs", "gamma", 0.5), ValueError, "sizes"),
        (lambda: theory("fcfs", [1.0, -1.0], 0.5), ValueError, "sizes"),
    ],
)
def test_bad_input(call, exc, match) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(exc, match=match):
        call()


N = 1_000_000


@pytest.mark.parametrize("sizes", ["exp", "bimodal"])
def test_million_jobs_land_on_theory(sizes: str) -> None:
    """At 1M jobs the simulated mean is within 2.5% of theory, and within a few of its own
    95% confidence half-widths (batch means)."""
    w = ob.sched.workload(N, load=0.8, sizes=sizes, seed=11)
    for policy in ("fcfs", "sjf", "srpt", "ps"):
        s = simulate(w, policy).summary()
        t = theory(policy, sizes, 0.8)
        assert s.mean_response == pytest.approx(t, rel=0.025), policy
        assert abs(s.mean_response - t) < 3 * s.mean_response_ci95, policy


def test_million_jobs_priority_classes() -> None:
    w = ob.sched.workload(N, load=(0.6, 0.3), sizes="exp", seed=12)
    s = simulate(w, "priority").summary()
    for c in (0, 1):
        t = theory("priority", "exp", (0.6, 0.3), job_class=c)
        assert s.per_class[c].mean_response == pytest.approx(t, rel=0.05)


def test_million_jobs_srpt_heavy_tail() -> None:
    # SRPT hardly feels the tail: it converges fast even where FCFS does not.
    w = ob.sched.workload(N, load=0.8, sizes="lognormal", seed=13)
    s = simulate(w, "srpt").summary()
    assert s.mean_response == pytest.approx(theory("srpt", "lognormal", 0.8), rel=0.025)


def test_empirical_distribution_theory() -> None:
    # theory() of an explicit size array uses its empirical distribution.
    sizes = np.array([0.5] * 9 + [5.5])
    assert theory("srpt", sizes, 0.8) == pytest.approx(theory("srpt", "bimodal", 0.8))


def test_heavy_tailed_fcfs_converges_slowly() -> None:
    """Said, not hidden: at 1M lognormal jobs FCFS's confidence interval is still wide (a few
    huge jobs set everyone's wait), while SRPT's is tight."""
    w = ob.sched.workload(N, load=0.8, sizes="lognormal", seed=1)
    fcfs = simulate(w, "fcfs").summary()
    srpt = simulate(w, "srpt").summary()
    assert fcfs.mean_response_ci95 / fcfs.mean_response > 0.08
    assert srpt.mean_response_ci95 / srpt.mean_response < 0.03
    assert abs(fcfs.mean_response - theory("fcfs", "lognormal", 0.8)) < 3 * fcfs.mean_response_ci95


def test_slowdown_of_the_largest() -> None:
    from osbench.sched import slowdown_largest

    # PS gives every size the same mean slowdown 1/(1-rho).
    for sizes in ("exp", "lognormal", "bimodal"):
        assert slowdown_largest("ps", sizes, 0.8) == pytest.approx(5.0)
    assert slowdown_largest("rr", "exp", 0.8) == pytest.approx(5.0)
    # FCFS on bimodal: the largest 1% are all of size 5.5 and wait the P-K wait 6.5.
    assert slowdown_largest("fcfs", "bimodal", 0.8) == pytest.approx(1 + 6.5 / 5.5)
    # SRPT's largest jobs converge to PS's slowdown from below under the heavy tail.
    assert slowdown_largest("srpt", "lognormal", 0.8) < 5.0
    w = ob.sched.workload(N, load=0.8, sizes="lognormal", seed=21)
    s = simulate(w, "srpt").summary()
    assert s.slowdown_largest_1pct == pytest.approx(slowdown_largest("srpt", "lognormal", 0.8), rel=0.1)
    with pytest.raises(ValueError, match="fraction"):
        slowdown_largest("fcfs", "exp", 0.8, fraction=0.0)
    with pytest.raises(ValueError, match="closed form"):
        slowdown_largest("rr", "bimodal", 0.8)
    with pytest.raises(ValueError, match="policy"):
        slowdown_largest("priority", "exp", 0.8)
    assert slowdown_largest("fcfs", "exp", 1.5) == math.inf
