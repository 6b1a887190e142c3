"""Capacity planning (osbench.serve.plan): the answer meets the SLO when simulated and the next
smaller deployment does not; the knee is where the candidate stops meeting it; the plan is the
same on every executor and when resumed; the search finds a monotone boundary; bad input gets a
clear error or a clear "no deployment" verdict, never a hang."""

from __future__ import annotations

import concurrent.futures as cf
import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable, Optional

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from interrupts import SETUP, assert_stops

import osbench as ob
from osbench.errors import ArgumentError, ArgumentTypeError
from osbench.serve.plan import KNEE_STEPS, Candidate, Plan, Replicas, Split, boundary, violations
from osbench.serve.slo import within_slo

PRESET = {"model": "llama-3-8b", "gpu": "h100"}
SLO = {"slo_ttft": 0.5, "slo_tpot": 0.05}


@pytest.fixture(scope="module")
def reqs() -> ob.serve.Requests:
    return ob.serve.Requests.poisson(400, rate=60.0, seed=1)


@pytest.fixture(scope="module")
def planned(reqs: ob.serve.Requests) -> Plan:
    return ob.serve.plan(reqs, **SLO, **PRESET, max_gpus=16, tp=[1, 2], executor="threads", workers=2)


def meets(reqs: ob.serve.Requests, replicas: int, tp: int, router: str = "least-tokens", p: float = 99) -> bool:
    """Whether the deployment meets SLO at the percentile, simulated here and judged from the raw
    latencies."""
    merged = ob.serve.simulate_cluster(reqs, replicas=replicas, tp=tp, router=router, **PRESET).merged
    tpot = merged.tpot[~np.isnan(merged.tpot)]
    record = {"TTFT p99": float(np.percentile(merged.ttft, p)), "TPOT p99": float(np.percentile(tpot, p))}
    return within_slo(record, SLO["slo_ttft"], SLO["slo_tpot"], p)


def test_the_answer_meets_the_slo_and_the_next_smaller_deployment_does_not(
    reqs: ob.serve.Requests, planned: Plan
) -> None:
    best = planned.best
    assert best is not None and best.deployment.replicas > 1
    n, tp = best.deployment.replicas, best.deployment.tp
    assert meets(reqs, n, tp) and not meets(reqs, n - 1, tp)
    tried = {c.deployment: c for c in planned.candidates}
    assert not tried[Replicas(n - 1, tp)].meets  # the search tried it
    # no candidate with fewer GPUs meets it, whatever its degree
    assert all(not c.meets for c in planned.candidates if c.gpus < best.gpus)
    assert {c.deployment.tp for c in planned.candidates} == {1, 2}
    assert planned.violations == ()
    assert f"{best.deployment.label} ({best.gpus} GPUs) is the smallest deployment" in planned.verdict()


def test_every_candidate_is_what_its_simulation_says(reqs: ob.serve.Requests, planned: Plan) -> None:
    for c in planned.candidates[:3]:
        r = ob.serve.simulate_cluster(
            reqs, replicas=c.deployment.replicas, tp=c.deployment.tp, router="least-tokens", **PRESET
        )
        s = r.summary(**SLO)
        assert c.goodput == s.merged.goodput and c.within_slo == s.merged.slo_attainment
        assert c.ttft == float(np.percentile(r.merged.ttft, 99))
        assert c.goodput_per_gpu == s.merged.goodput / c.gpus


def test_the_knee_meets_the_slo_and_the_next_rate_tried_does_not(reqs: ob.serve.Requests, planned: Plan) -> None:
    best = planned.best
    assert best is not None and best.knee is not None and best.knee_above is not None
    assert best.knee >= planned.rate  # it meets at the requests' own rate
    assert best.knee_above / best.knee == pytest.approx(2 ** (1 / KNEE_STEPS))
    n, tp = best.deployment.replicas, best.deployment.tp
    assert meets(reqs.at_rate(best.knee), n, tp) and not meets(reqs.at_rate(best.knee_above), n, tp)
    for c in planned.candidates:  # every candidate's knee is searched, and between its rates tried
        ok = [r for r, good in c.rates if good]
        assert c.knee == (max(ok) if ok else None)
        assert (c.knee is not None and c.knee >= planned.rate) == c.meets


class Inline(cf.Executor):
    """Runs each cell as it is submitted, in this thread."""

    def __init__(self) -> None:
        self.submitted = 0

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> cf.Future:  # type: ignore[override]
        self.submitted += 1
        future: cf.Future = cf.Future()
        future.set_result(fn(*args, **kwargs))
        return future


def as_json(p: Plan) -> str:
    return json.dumps(p.to_dict(), sort_keys=True, default=str)


def test_the_plan_is_the_same_on_every_executor_and_resumed(
    reqs: ob.serve.Requests, planned: Plan, tmp_path: Path
) -> None:
    args: dict[str, Any] = {**SLO, **PRESET, "max_gpus": 16, "tp": [1, 2]}
    assert as_json(ob.serve.plan(reqs, **args, executor="process", workers=2)) == as_json(planned)
    inline = Inline()
    seen: list[tuple[int, int]] = []
    out = tmp_path / "cells.jsonl"
    first = ob.serve.plan(reqs, **args, executor=inline, out=out, progress=lambda d, a: seen.append((d, a)))
    assert as_json(first) == as_json(planned)
    assert inline.submitted == planned.simulations == len(out.read_text().splitlines())
    assert seen[-1] == (planned.simulations, planned.simulations)
    again = Inline()
    assert as_json(ob.serve.plan(reqs, **args, executor=again, out=out)) == as_json(planned)
    assert again.submitted == 0  # every cell read back from the results file


def test_the_plan_on_dask(reqs: ob.serve.Requests, planned: Plan, missing: Callable[[str], None]) -> None:
    try:
        import distributed  # noqa: F401
    except ImportError:
        missing("distributed is not installed (the 'dask' extra)")
    args: dict[str, Any] = {**SLO, **PRESET, "max_gpus": 16, "tp": [1, 2]}
    assert as_json(ob.serve.plan(reqs, **args, executor="dask", workers=2)) == as_json(planned)


@settings(max_examples=300, deadline=None)
@given(
    st.integers(-5, 70),
    st.integers(1, 64),
    st.integers(1, 8),
    st.lists(st.one_of(st.none(), st.integers(-10, 80)), min_size=80, max_size=80),
)
def test_the_search_finds_the_boundary_of_a_monotone_predicate(
    threshold: int, first: int, step: int, hints: list[Optional[int]]
) -> None:
    low, high = 1, 64
    probe = boundary(low, lambda: high, first, step)
    x, probes = next(probe), []
    try:
        while True:
            assert low <= x <= high and x not in probes
            probes.append(x)
            x = probe.send((x >= threshold, hints[len(probes)]))
    except StopIteration as stop:
        found = stop.value
    expected = max(threshold, low) if threshold <= high else None
    assert found == expected
    if found is not None and found > low:
        assert found - 1 in probes  # the one below was tried, and failed
    assert len(probes) <= 2 * math.ceil(math.log2(high - low + 2)) + 2


def candidate(replicas: int, tp: int, meets: bool, rates: tuple[tuple[float, bool], ...] = ()) -> Candidate:
    return Candidate(Replicas(replicas, tp), meets, 0.1, 0.01, 1.0, 1.0, 1.0, 0.0, 1.0, None, None, rates)


def test_the_monotonicity_check_names_what_contradicts_it() -> None:
    ok = [candidate(1, 1, False, ((1.0, True), (2.0, False))), candidate(2, 1, True)]
    assert violations(ok) == []
    bad = [candidate(2, 1, True), candidate(3, 1, False, ((1.0, False), (2.0, True)))]
    found = violations(bad)
    assert found == [
        "2 x TP1 meets the SLO but 3 x TP1 misses it",
        "3 x TP1 meets the SLO at 2/s but misses it at 1/s",
    ]


def test_the_table_and_the_figure(planned: Plan, tmp_path: Path) -> None:
    table = planned.table()
    assert len(table.rows) == len(planned.candidates)
    marked = [r for r in table.records() if r["deployment"].endswith("(the answer)")]
    assert len(marked) == 1 and marked[0]["GPUs"] == planned.best.gpus  # type: ignore[union-attr]
    assert table.units["goodput per GPU"] == "/s" and planned.verdict() in table.note
    text = table.to_text()
    assert "TTFT p99" in text and "(the answer)" in text
    pytest.importorskip("matplotlib")
    png = planned.figure(tmp_path / "plan.png")
    assert png[:4] == b"\x89PNG" and (tmp_path / "plan.png").read_bytes() == png


def test_an_slo_nothing_meets_is_a_clear_verdict(reqs: ob.serve.Requests) -> None:
    p = ob.serve.plan(reqs, slo_ttft=1e-6, **PRESET, max_gpus=4, executor="threads")
    assert p.best is None and not p.meets
    assert p.verdict().startswith("No deployment up to max_gpus=4 meets TTFT p99 at most 1 us")
    assert max(c.gpus for c in p.candidates) == 4 and all(c.knee is None for c in p.candidates)
    assert "< " in p.table().records()[0]["knee"]


@pytest.mark.parametrize(
    "change, error, message",
    [
        ({"max_gpus": 0}, ArgumentError, "max_gpus=0 is not accepted"),
        ({"max_gpus": -3}, ArgumentError, "max_gpus=-3 is not accepted"),
        ({"max_gpus": 2.5}, ArgumentTypeError, "max_gpus=2.5 is not accepted"),
        ({"router": "nearest"}, ArgumentError, "router='nearest' is not accepted"),
        ({"slo_ttft": None, "slo_tpot": None}, ArgumentError, "give one or both"),
        ({"slo_ttft": -1.0}, ArgumentError, "slo_ttft=-1.0 is not accepted"),
        ({"percentile": 0}, ArgumentError, "percentile=0 is not accepted"),
        ({"percentile": 101}, ArgumentError, "percentile=101.0 is not accepted"),
        ({"tp": 8, "max_gpus": 4}, ArgumentError, "tp=8 is not accepted with max_gpus=4"),
        ({"tp": 3}, ArgumentError, "tp=3 is not accepted for"),
        ({"tp": "2"}, ArgumentTypeError, "tp='2' is not accepted"),
        ({"model": None}, ArgumentError, "model=None is not accepted"),
        ({"block_sz": 8}, ArgumentTypeError, "block_sz=8 is not accepted: plan takes"),
        ({"executor": 3}, ArgumentTypeError, "executor=3 is not accepted"),
        ({"engine": "fast"}, ArgumentError, "engine='fast' is not accepted"),
        ({"workers": 0}, ArgumentError, "workers=0 is not accepted"),
        ({"disaggregated": True, "kv_link": "warp"}, ArgumentError, "kv_link='warp' is not accepted: use one of"),
        ({"disaggregated": True, "kv_link": 3}, ArgumentTypeError, "kv_link=3 is not accepted"),
        (
            {"disaggregated": True, "tp": 2, "max_gpus": 3},
            ArgumentError,
            "tp=2 is not accepted with disaggregated=True and max_gpus=3: the smallest split",
        ),
        ({"disaggregated": "yes"}, ArgumentTypeError, "disaggregated='yes' is not accepted"),
        ({"step_time": "fast"}, ArgumentError, "step_time='fast' is not accepted: use one of roofline, measured"),
    ],
)
def test_bad_input_is_refused_naming_it(
    reqs: ob.serve.Requests, change: dict[str, Any], error: type, message: str
) -> None:
    args: dict[str, Any] = {**SLO, **PRESET, "max_gpus": 8, "executor": "threads", **change}
    with pytest.raises(error, match=message.replace("(", r"\(")):
        ob.serve.plan(reqs, **args)


def test_the_measured_clock_plans_on_the_kernel_tables(reqs: ob.serve.Requests, measured_tables: None) -> None:
    # every cell's clock by name, built for its tp: the candidates are the measured model's
    p = ob.serve.plan(
        reqs, **SLO, **PRESET, max_gpus=4, tp=[1, 2], step_time="measured", executor="threads", knee=False
    )
    for c in p.candidates[:2]:
        step_time = ob.serve.StepTime.measured("llama-3-8b", "h100", tp=c.deployment.tp)
        r = ob.serve.simulate_cluster(
            reqs,
            replicas=c.deployment.replicas,
            tp=c.deployment.tp,
            router="least-tokens",
            step_time=step_time,
            **PRESET,
        )
        assert c.ttft == float(np.percentile(r.merged.ttft, 99))
    assert p.step_time == "measured" and "measured step time" in p.table().setup
    with pytest.raises(ArgumentError, match="gpu='l40s' is not accepted for the measured step time"):
        ob.serve.plan(reqs, **SLO, model="llama-3-8b", gpu="l40s", step_time="measured", executor="threads")


def test_a_rule_that_cannot_go_to_another_process_is_refused(reqs: ob.serve.Requests) -> None:
    def rule(request: Any, replicas: Any) -> int:
        return int(request.index % len(replicas))

    with pytest.raises(ArgumentError, match="is not accepted with executor=None: the cells run in other processes"):
        ob.serve.plan(reqs, **SLO, **PRESET, max_gpus=2, router=rule, engine="reference")
    p = ob.serve.plan(
        reqs, **SLO, **PRESET, max_gpus=2, router=rule, engine="reference", executor="threads", knee=False
    )
    assert "UserRouter" in p.router and p.candidates


def test_requests_without_a_rate_are_refused() -> None:
    one = ob.serve.Requests.poisson(1, rate=1.0, seed=1)
    with pytest.raises(ArgumentError, match="at least two requests"):
        ob.serve.plan(one, **SLO, **PRESET)
    with pytest.raises(ArgumentTypeError, match="requests="):
        ob.serve.plan([1, 2], **SLO, **PRESET)  # type: ignore[arg-type]


def osbench(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "osbench", *args], capture_output=True, text=True, timeout=600)


def test_the_plan_command(reqs: ob.serve.Requests, planned: Plan, tmp_path: Path) -> None:
    common = ["--poisson", "400,60", "--model", "llama-3-8b", "--gpu", "h100", "--max-gpus", "16", "--tp", "1,2"]
    slo = ["--slo-ttft", "0.5", "--slo-tpot", "0.05"]
    out = tmp_path / "cells.jsonl"
    done = osbench("serve", "plan", *common, *slo, "--workers", "2", "--out", str(out), "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["best"]["deployment"] == planned.best.deployment.to_dict()  # type: ignore[union-attr]
    assert data["verdict"] == planned.verdict() and len(out.read_text().splitlines()) == planned.simulations
    text = osbench("serve", "plan", *common, *slo, "--out", str(out), "--figure", str(tmp_path / "p.png"))
    assert text.returncode == 0 and "(the answer)" in text.stdout and planned.verdict() in text.stdout
    none = osbench("serve", "plan", *common, "--slo-ttft", "0.000001", "--no-knee")
    assert none.returncode == 1 and "No deployment up to max_gpus=16 meets" in none.stdout
    for bad, message in ((["--max-gpus", "0"], "max_gpus=0 is not accepted"), (["--router", "x"], "invalid choice")):
        refused = osbench("serve", "plan", "--poisson", "400,60", "--slo-ttft", "1", *bad)
        assert refused.returncode == 2 and message in refused.stderr


def test_the_plan_command_with_a_split(reqs: ob.serve.Requests) -> None:
    planned = ob.serve.plan(
        reqs, **SLO, **PRESET, max_gpus=8, disaggregated=True, kv_link="ib-400g", knee=False, executor="threads"
    )
    common = ["--poisson", "400,60", "--model", "llama-3-8b", "--gpu", "h100", "--max-gpus", "8", "--no-knee"]
    done = osbench("serve", "plan", *common, "--slo-ttft", "0.5", "--slo-tpot", "0.05", "--split", "ib-400g", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["best"]["deployment"] == planned.best.deployment.to_dict()  # type: ignore[union-attr]
    assert data["best"]["deployment"]["kind"] == "split" and data["verdict"] == planned.verdict()
    refused = osbench("serve", "plan", *common, "--slo-ttft", "1", "--split", "warp")
    assert refused.returncode == 2 and "kv_link='warp' is not accepted" in refused.stderr


@pytest.mark.parametrize("executor", ["threads", "process"])
def test_ctrl_c_stops_a_long_plan(executor: str) -> None:
    setup = SETUP + "\nimport osbench as ob\nreqs = ob.serve.Requests.poisson(60_000, rate=3_000.0, seed=1)"
    assert_stops(
        f"""
        ob.serve.plan(reqs, slo_ttft=0.2, slo_tpot=0.02, model="llama-3-8b", gpu="h100", max_gpus=64, tp=[1, 2],
                      executor={executor!r}, workers=2)
        """,
        setup=setup,
        settle=3.0,
    )


def split_meets(reqs: ob.serve.Requests, prefill: int, decode: int, p: float = 99) -> bool:
    """Whether the split meets SLO at the percentile, simulated here and judged from the raw
    latencies."""
    merged = ob.serve.simulate_disaggregated(
        reqs,
        prefill=prefill,
        decode=decode,
        kv_link="ib-400g",
        router="least-tokens",
        decode_router="least-tokens",
        **PRESET,
    ).merged
    tpot = merged.tpot[~np.isnan(merged.tpot)]
    record = {"TTFT p99": float(np.percentile(merged.ttft, p)), "TPOT p99": float(np.percentile(tpot, p))}
    return within_slo(record, SLO["slo_ttft"], SLO["slo_tpot"], p)


def test_a_split_plan_meets_the_slo_and_no_split_of_fewer_gpus_does(reqs: ob.serve.Requests) -> None:
    planned = ob.serve.plan(
        reqs, **SLO, **PRESET, max_gpus=12, disaggregated=True, kv_link="ib-400g", executor="threads", workers=2
    )
    best = planned.best
    assert best is not None and isinstance(best.deployment, Split)
    d = best.deployment
    assert d.prefill + d.decode > 2 and d.gpus == d.prefill + d.decode
    assert split_meets(reqs, d.prefill, d.decode)
    # every split of one instance fewer misses it, simulated here (not only those the search tried)
    n = d.prefill + d.decode - 1
    assert not any(split_meets(reqs, p, n - p) for p in range(1, n))
    assert all(not c.meets for c in planned.candidates if c.gpus < best.gpus)
    assert all(isinstance(c.deployment, Split) for c in planned.candidates)
    for c in planned.candidates:  # goodput per GPU and a knee searched for every split tried
        assert c.goodput_per_gpu == c.goodput / c.gpus and len(c.rates) > 1
    assert planned.violations == ()
    assert f"{d.label} ({d.gpus} GPUs) is the smallest deployment" in planned.verdict()
    assert "smaller split" in planned.verdict()


def test_the_split_monotonicity_check() -> None:
    def c(p: int, d: int, meets: bool) -> Candidate:
        return Candidate(Split(p, d, 1, "ib-ndr-400g"), meets, 0.1, 0.01, 1.0, 1.0, 1.0, 0.0, 1.0, None, None, ())

    assert violations([c(2, 1, True), c(1, 2, False), c(1, 1, False)]) == []
    assert violations([c(2, 1, True), c(2, 2, False)]) == ["2P:1D x TP1 meets the SLO but 2P:2D x TP1 misses it"]
