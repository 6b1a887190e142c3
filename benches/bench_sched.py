"""Scheduling: every policy native vs reference; M/M/1 FCFS against ciw and simpy; 10M SRPT.

Sizes come from the benchmark switch: small under ``--benchmark-disable`` (the correctness pass
of ``make test``), full under ``--benchmark-only``. Rows of one group run the same jobs and their
mean response times are asserted equal (peers: to 1e-9 relative, the same float sums in
another order).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import osbench as ob
from osbench.sched import PARAMETERS, POLICIES, simulate

#: A quantum of 0.1 for the policies that take one.
PARAMS: dict[str, dict[str, Any]] = {p: {"quantum": 0.1} for p in POLICIES if "quantum" in PARAMETERS[p]}


def _full(request: pytest.FixtureRequest) -> bool:
    return not request.config.getoption("benchmark_disable", default=False)


def sizes(full: bool) -> dict[str, int]:
    if full:
        return {"native": 1_000_000, "reference": 100_000, "peer": 100_000, "big": 10_000_000}
    return {"native": 2_000, "reference": 500, "peer": 300, "big": 5_000}


@pytest.fixture(scope="module")
def full(request: pytest.FixtureRequest) -> bool:
    if _full(request) and ob.BUILD_PROFILE != "release":
        pytest.exit(f"refusing to benchmark a {ob.BUILD_PROFILE} build of osbench._native", returncode=2)
    return _full(request)


@pytest.fixture(scope="module")
def lognormal(full: bool) -> ob.sched.Workload:
    w = ob.sched.workload(sizes(full)["native"], load=0.8, sizes="lognormal", seed=7, prediction_sigma=1.0)
    prio = (np.arange(len(w)) % 3 == 0).astype(np.int64)  # a third of the jobs in class 1
    return ob.sched.Workload(w.arrival, w.size, prio, w.predicted)


def _prefix(w: ob.sched.Workload, n: int) -> ob.sched.Workload:
    return ob.sched.Workload(
        w.arrival[:n],
        w.size[:n],
        None if w.priority is None else w.priority[:n],
        None if w.predicted is None else w.predicted[:n],
    )


def once(benchmark: Any, fn: Any, rounds: int) -> Any:
    return benchmark.pedantic(fn, rounds=rounds, iterations=1, warmup_rounds=0)


@pytest.fixture(scope="module")
def reference_100k() -> dict[str, ob.sched.Schedule]:
    """The reference engine's run of each policy on the 100k prefix, made once (by whichever
    row needs it first) and compared with by the others."""
    return {}


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("row", ["native-1M", "native-100k", "reference-100k"])
def test_policy(
    benchmark: Any,
    policy: str,
    row: str,
    lognormal: ob.sched.Workload,
    full: bool,
    reference_100k: dict[str, ob.sched.Schedule],
) -> None:
    """Each policy on lognormal sizes at load 0.8. The reference runs a 100k prefix; compare
    it with native-100k (same jobs), and native-1M shows the full size."""
    benchmark.group = f"sched {policy}: lognormal, load 0.8"
    n = sizes(full)["native"] if row == "native-1M" else sizes(full)["reference"]
    w = lognormal if row == "native-1M" else _prefix(lognormal, n)
    engine = "reference" if row.startswith("reference") else "native"
    benchmark.extra_info["jobs"] = n
    s = once(
        benchmark,
        lambda: simulate(w, policy, engine=engine, **PARAMS.get(policy, {})),
        rounds=1 if engine == "reference" else 7,
    )
    if row == "native-1M":
        # No other engine runs the full size: every job finishes after its arrival plus its
        # size, and the last one no earlier than all the work after the first arrival.
        slack = 1e-9 * (1 + w.arrival)  # PS divides its time: rounding at the scale of the clock
        assert np.all(np.isfinite(s.completion)) and np.all(s.completion >= w.arrival + w.size - slack)
        assert s.completion.max() >= w.arrival.min() + w.size.sum() * (1 - 1e-12)
        return
    if policy not in reference_100k:
        reference_100k[policy] = (
            s if engine == "reference" else simulate(w, policy, engine="reference", **PARAMS.get(policy, {}))
        )
    other = reference_100k[policy] if engine == "native" else simulate(w, policy, **PARAMS.get(policy, {}))
    np.testing.assert_array_equal(s.completion, other.completion)


@pytest.fixture(scope="module")
def mm1(full: bool) -> tuple[np.ndarray, np.ndarray, ob.sched.Workload]:
    n = sizes(full)["peer"]
    rng = np.random.default_rng(3)
    inter = rng.exponential(1 / 0.8, n)
    size = rng.exponential(1.0, n)
    return inter, size, ob.sched.Workload(np.cumsum(inter), size)


@pytest.mark.parametrize("row", ["native", "reference", "ciw", "simpy"])
def test_mm1_fcfs(benchmark: Any, row: str, mm1: tuple[np.ndarray, np.ndarray, ob.sched.Workload]) -> None:
    """M/M/1 FCFS at load 0.8, the same arrivals and sizes in every row."""
    inter, size, w = mm1
    benchmark.group = f"M/M/1 FCFS, load 0.8, {len(w):,} jobs"
    expected = float(simulate(w, "fcfs").response.mean())
    if row in ("native", "reference"):
        s = once(benchmark, lambda: simulate(w, "fcfs", engine=row), rounds=5 if row == "native" else 1)
        mean = float(s.response.mean())
    elif row == "ciw":
        ciw = pytest.importorskip("ciw")

        def run_ciw() -> float:
            net = ciw.create_network(
                arrival_distributions=[ciw.dists.Sequential(inter.tolist())],
                service_distributions=[ciw.dists.Sequential(size.tolist())],
                number_of_servers=[1],
            )
            sim = ciw.Simulation(net)
            sim.simulate_until_max_customers(len(size), method="Finish")
            recs = sim.get_all_records()
            return float(np.mean([r.exit_date - r.arrival_date for r in recs]))

        mean = once(benchmark, run_ciw, rounds=1)
    else:
        simpy = pytest.importorskip("simpy")

        def run_simpy() -> float:
            env = simpy.Environment()
            server = simpy.Resource(env, capacity=1)
            responses: list[float] = []

            def job(s: float) -> Any:
                arrived = env.now
                with server.request() as req:
                    yield req
                    yield env.timeout(s)
                responses.append(env.now - arrived)

            def source() -> Any:
                for gap, s in zip(inter.tolist(), size.tolist()):
                    yield env.timeout(gap)
                    env.process(job(s))

            env.process(source())
            env.run()
            return float(np.mean(responses))

        mean = once(benchmark, run_simpy, rounds=1)
    assert mean == pytest.approx(expected, rel=1e-9)


def test_srpt_10m(benchmark: Any, full: bool) -> None:
    """10M jobs of SRPT (lognormal, load 0.8): seconds, not minutes."""
    n = sizes(full)["big"]
    benchmark.group = f"SRPT, {n:,} jobs"
    w = ob.sched.workload(n, load=0.8, sizes="lognormal", seed=8)
    s = once(benchmark, lambda: simulate(w, "srpt"), rounds=1)
    assert np.isfinite(s.completion).all()
