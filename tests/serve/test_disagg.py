"""Disaggregated prefill and decode (osbench.serve.disagg): the facts of issue 26 on random
small workloads, the link's charge, the decode pool's admission, and bad input."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest
from cluster_workloads import LINEAR, raw, routers, run_or_livelock, workloads
from hypothesis import given, settings
from hypothesis import strategies as st
from interrupts import assert_stops
from runs import assert_same_runs

import osbench as ob
from osbench.errors import ArgumentError, ArgumentTypeError
from osbench.report.findings import _Data, serve_disaggregation
from osbench.serve import native
from osbench.serve.config import EngineConfig
from osbench.serve.disagg import kv_bytes_per_gpu, simulate_disaggregated
from osbench.serve.disagg_study import TRACES, aggregated_vs_disaggregated, deployments
from osbench.serve.links import LINKS, Link
from osbench.serve.pools import Pool, drive_disaggregated, one_token
from osbench.serve.requests import Requests
from osbench.serve.routers import Router
from osbench.serve.run import Clients, batch_of
from osbench.serve.steptime import StepTime
from osbench.serve.vllm.engines import decode_stepper, stepper

MODEL = "llama-3-8b"


def disagg(reqs: Requests, cfg: dict[str, Any], **kwargs: Any) -> Any:
    kwargs.setdefault("step_time", LINEAR)
    return simulate_disaggregated(reqs, model=MODEL, **kwargs, **cfg)


# --------------------------------------------------------------------------- the fact


@settings(max_examples=60, deadline=None)
@given(workloads(max_requests=12), routers(), st.integers(1, 3), st.sampled_from(["reference", "native"]))
def test_with_an_instant_link_and_room_ttft_is_queueing_and_prefill_then_the_first_decode_step(  # type: ignore[no-untyped-def]
    workload, router, p, engine
) -> None:
    """With ``kv_link="ideal"`` and a decode instance per request (each idle when its KV comes),
    the prefill side is the cluster serving one token per request, and each request's TTFT is
    that cluster's TTFT (its queueing and prefill) plus one decode step of its last prompt token
    over the rest of its prompt, priced by the step time on its own."""
    reqs, cfg = workload
    if engine == "native" and callable(router) and not isinstance(router, Router):
        engine = "reference"
    n = len(reqs)
    result = run_or_livelock(
        lambda: disagg(reqs, cfg, prefill=p, decode=n, kv_link="ideal", router=router, engine=engine, record=True)
    )
    alone = run_or_livelock(
        lambda: ob.serve.simulate_cluster(
            one_token(reqs), replicas=p, router=router, engine="reference", step_time=LINEAR, record=True, **cfg
        )
    )
    if isinstance(alone, Exception) or isinstance(result, Exception):
        assert isinstance(alone, Exception) and isinstance(result, Exception)
        return
    np.testing.assert_array_equal(result.run.prefill_replica, alone.replica)
    for own, expected in zip(result.prefill, alone.replicas):
        assert_same_runs(raw(expected), raw(own))
    np.testing.assert_array_equal(result.transfer, 0.0)
    np.testing.assert_array_equal(result.run.kv_arrival, alone.merged.first_token)
    np.testing.assert_array_equal(np.sort(result.run.decode_replica), np.arange(n))  # one each: all idle
    step = np.array([LINEAR(batch_of([(1, int(q) - 1, 1)])) for q in reqs.prompt_len])
    np.testing.assert_allclose(result.merged.ttft, alone.merged.ttft + step, rtol=0, atol=1e-9)
    # The parts add up to TTFT, from the run's own records.
    np.testing.assert_allclose(
        result.queueing + result.prefill_time + result.transfer + result.first_decode_step,
        result.merged.ttft,
        rtol=0,
        atol=1e-9,
    )
    np.testing.assert_allclose(result.queueing, alone.merged.queueing, rtol=0, atol=1e-9)


links = st.one_of(
    st.sampled_from(list(LINKS)),
    st.builds(Link, st.just("drawn"), st.sampled_from([1e6, 3e7, 1e9, math.inf]), st.sampled_from([0.0, 1e-3, 0.02])),
)


@settings(max_examples=150, deadline=None)
@given(
    workloads(max_requests=20),
    routers(),
    routers(),
    st.integers(1, 3),
    st.integers(1, 3),
    links,
    st.one_of(st.none(), st.integers(1, 5), st.builds(Clients, st.integers(1, 5), st.just(1e-3), st.integers(0, 8))),
    st.sampled_from([LINEAR, StepTime.roofline(MODEL, "h100-sxm")]),
    st.booleans(),
    st.sampled_from([0, 1, 3, 32]),
)
def test_native_equals_the_reference_request_for_request_and_step_for_step(  # type: ignore[no-untyped-def]
    workload, router, decode_router, p, d, link, concurrency, step_time, jump, layers
) -> None:
    reqs, cfg = workload
    rules = []
    for rule in (router, decode_router):
        if callable(rule) and not isinstance(rule, Router):
            rule = "least-tokens"  # the native loop runs the table's routers
        rules.append(ob.serve.routers.router_of(rule))
    config = EngineConfig(**cfg)
    kv = kv_bytes_per_gpu(reqs, ob.serve.Model.preset(MODEL), None, config.block_size)
    the_link = ob.serve.links.link_of(link)
    prefill_requests = one_token(reqs)

    def ours():  # type: ignore[no-untyped-def]
        return drive_disaggregated(
            reqs,
            prefill_requests,
            Pool(
                [stepper(prefill_requests, config) for _ in range(p)],
                rules[0],
                step_time,
                config.usable_blocks,
                config.block_size,
            ),
            Pool(
                [decode_stepper(reqs, config, reqs.prompt_len - 1) for _ in range(d)],
                rules[1],
                step_time,
                config.usable_blocks,
                config.block_size,
            ),
            the_link,
            kv,
            record=True,
            concurrency=concurrency,
            layers=layers,
        )

    expected = run_or_livelock(ours)
    got = run_or_livelock(
        lambda: native.disagg_run(
            native.disaggregated_call(
                reqs,
                (config, config),
                (step_time, step_time),
                (p, d),
                tuple(rules),
                the_link,
                kv,
                record=True,
                jump=jump,
                concurrency=concurrency,
                layers=layers,
            )
        )
    )
    if isinstance(expected, Exception):
        assert isinstance(got, Exception)  # each names the requests by its own numbering
        return
    for name in ("prefill_replica", "decode_replica", "transfer_start", "kv_arrival"):
        np.testing.assert_array_equal(getattr(got, name), getattr(expected, name), err_msg=name)
    for a, b in zip(expected.decode_order, got.decode_order):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(expected.prefill_runs + expected.decode_runs, got.prefill_runs + got.decode_runs):
        assert_same_runs(a, b)


def test_the_native_loop_takes_the_decode_jump() -> None:
    rng = np.random.default_rng(5)
    n = 200
    reqs = Requests(np.cumsum(rng.exponential(0.5, n)), rng.integers(50, 500, n), rng.integers(200, 2000, n))
    config = EngineConfig(num_blocks=20_000, enable_prefix_caching=False)
    kv = kv_bytes_per_gpu(reqs, ob.serve.Model.preset(MODEL), None, config.block_size)
    for concurrency in (None, 3):
        args = (reqs, (config, config), (LINEAR, LINEAR), (2, 3))
        rules = (ob.serve.routers.RoundRobin(), ob.serve.routers.LeastRequests())
        out = native.disaggregated_call(*args, rules, LINKS["roce-200g"], kv, concurrency=concurrency)
        decode_runs = out[5]
        steps = sum(len(c["start"]) for c, _, _ in decode_runs)
        # Open loop, a stretch runs to the next send; closed loop, to the other decode
        # instances' next steps (a send waits for a finish), which leaves few.
        assert sum(jumped for _, _, jumped in decode_runs) > (steps // 4 if concurrency is None else 0)
        expected = drive_disaggregated(
            reqs,
            one_token(reqs),
            Pool([stepper(one_token(reqs), config) for _ in range(2)], rules[0], LINEAR, 19_999, 16),
            Pool([decode_stepper(reqs, config, reqs.prompt_len - 1) for _ in range(3)], rules[1], LINEAR, 19_999, 16),
            LINKS["roce-200g"],
            kv,
            concurrency=concurrency,
        )
        got = native.disagg_run(out)
        for a, b in zip(expected.decode_runs, got.decode_runs):
            assert_same_runs(a, b)


def test_ctrl_c_stops_a_long_native_disaggregated_run() -> None:
    assert_stops(
        """
        import numpy as np
        from osbench.serve import simulate_disaggregated
        from osbench.serve.requests import Requests
        from osbench.serve.steptime import StepTime
        rng = np.random.default_rng(0)
        reqs = Requests(np.zeros(3000), rng.integers(100, 2000, 3000), rng.integers(500, 2000, 3000))
        step = StepTime.linear(0.01, 1e-5, 1e-4, 1e-7)
        for _ in range(1000):  # minutes of work if nothing stops it
            simulate_disaggregated(
                reqs, prefill=2, decode=2, model="llama-3-8b", router="least-tokens", step_time=step,
                num_blocks=5000, max_model_len=4096,
            )
        """
    )


# --------------------------------------------------------------------------- the link


def test_the_link_charges_bytes_over_bandwidth_and_latency_after_the_prefill() -> None:
    reqs = Requests([0.0], [1000], [5])
    link = Link("test", 1e9, 2e-3)
    r = simulate_disaggregated(
        reqs, prefill=1, decode=1, kv_link=link, model=MODEL, gpu="h100", engine="reference", num_blocks=200
    )
    per_token = ob.serve.Model.preset(MODEL).kv_bytes_per_token()
    wire = 63 * 16 * per_token  # the whole blocks of the prompt
    assert int(r.kv_bytes[0]) == wire and r.summary().bytes_moved == wire
    assert r.transfer[0] == pytest.approx(wire / 1e9 + 2e-3, rel=1e-12)
    assert r.run.transfer_start[0] == r.prefill_end[0]


def test_transfers_from_one_prefill_instance_take_the_link_in_turn() -> None:
    reqs = Requests([0.0, 0.0, 0.0], [512, 512, 512], [3, 3, 3])
    link = Link("slow", 1e8, 0.0)
    r = simulate_disaggregated(
        reqs, prefill=1, decode=3, kv_link=link, model=MODEL, gpu="h100", engine="reference", num_blocks=400
    )
    wire = float(r.kv_bytes[0]) / 1e8
    start, arrive = r.run.transfer_start, r.run.kv_arrival
    assert (r.prefill_end == r.prefill_end[0]).all()  # one step prefilled all three
    np.testing.assert_allclose(start, r.prefill_end[0] + wire * np.arange(3), rtol=1e-12)
    np.testing.assert_allclose(arrive - start, wire, rtol=1e-12)


def test_layer_by_layer_the_kv_streams_during_the_last_prefill_step() -> None:
    """Alone on its instance, a prompt's KV streamed over the model's layers arrives when the
    slowest of the pipeline's two paths ends: the last layer computed and then sent, or the
    first layer computed and then every share sent back to back."""
    reqs = Requests([0.0], [3000], [5])
    model = ob.serve.Model.preset(MODEL)
    for bandwidth in (1e9, 50e9, 2e12):
        link = Link("test", bandwidth, 1e-4)
        args = {"prefill": 1, "decode": 1, "kv_link": link, "model": MODEL, "gpu": "h100", "num_blocks": 400}
        after = simulate_disaggregated(reqs, **args)
        streamed = simulate_disaggregated(reqs, **args, overlap="layerwise")
        assert streamed.summary().overlap == "layerwise" and after.summary().overlap == "after-prefill"
        steps = streamed.prefill[0].steps
        start, end = float(steps.start[-1]), float(steps.end[-1])
        wire, share = float(streamed.kv_bytes[0]) / bandwidth, float(streamed.kv_bytes[0]) / bandwidth / model.layers
        expected = max(end + share, start + (end - start) / model.layers + wire) + 1e-4
        assert streamed.run.kv_arrival[0] == pytest.approx(expected, rel=1e-12)
        assert streamed.run.kv_arrival[0] <= after.run.kv_arrival[0]
        assert after.run.kv_arrival[0] == pytest.approx(end + wire + 1e-4, rel=1e-12)
    with pytest.raises(ArgumentError, match="overlap='streamed' is not accepted"):
        simulate_disaggregated(reqs, overlap="streamed", **args)


def test_every_link_preset_is_a_link_and_the_alias_names_infiniband() -> None:
    assert set(LINKS) == {"nvlink-4", "nvlink-5", "ib-ndr-400g", "roce-200g", "roce-400g", "pcie-5-x16", "ideal"}
    assert ob.serve.links.link_of("ib-400g") is LINKS["ib-ndr-400g"]
    assert LINKS["ib-ndr-400g"].bandwidth == 50e9 and LINKS["nvlink-4"].bandwidth == 450e9
    assert math.isinf(LINKS["ideal"].bandwidth) and LINKS["ideal"].latency == 0.0


# --------------------------------------------------------------------------- the decode pool


def test_the_decode_pool_admits_only_what_its_kv_holds() -> None:
    rng = np.random.default_rng(4)
    n = 40
    reqs = Requests(np.zeros(n), rng.integers(100, 300, n), rng.integers(20, 80, n))
    cfg = {"num_blocks": 80, "block_size": 16, "max_num_batched_tokens": 4096, "max_num_seqs": 64}
    r = disagg(reqs, cfg, prefill=2, decode=1, kv_link="ideal", engine="reference", record=True)
    dec = r.decode[0]
    assert (dec.steps.blocks_used <= 79).all()
    assert dec.steps.num_waiting.max() > 0  # requests waited for room
    decode_admitted = np.zeros(n)
    decode_admitted[r.run.decode_order[0]] = dec.admitted
    assert (decode_admitted >= r.run.kv_arrival).all() and (decode_admitted > r.run.kv_arrival).any()


def test_the_decode_instance_takes_the_prompt_as_computed_and_recomputes_its_last_token() -> None:
    reqs = Requests([0.0], [100], [4])
    cfg = {"num_blocks": 50, "block_size": 16}
    r = disagg(reqs, cfg, prefill=1, decode=1, kv_link="ideal", engine="reference", record=True)
    steps = r.decode[0].steps
    assert len(steps) == 4  # one step per output token: no prefill of the prompt there
    assert steps.decode_seqs[0] == 1 and steps.prefill_tokens[0] == 0 and steps.context_tokens[0] == 99
    assert r.decode[0].record.step(0)["scheduled"] == [(0, 1)]


def test_prefix_caching_serves_shared_prompts_on_the_prefill_side() -> None:
    n = 30
    reqs = Requests(
        np.arange(n) * 0.05,
        [64] * n,
        [4] * n,
        blocks=[[1, 2, 3, 4, 5, 6, 7, 100 + k] for k in range(n)],
        source_block=8,
    )
    cfg = {"num_blocks": 200, "block_size": 8}
    r = disagg(reqs, cfg, prefill=1, decode=2, engine="reference")
    assert r.summary().prefix_hit_rate == pytest.approx(r.merged.cached_tokens.sum() / reqs.prompt_len.sum())
    assert (r.merged.cached_tokens[1:] == 56).all()


# --------------------------------------------------------------------------- heterogeneous pools


def test_each_pool_takes_its_own_gpu() -> None:
    reqs = Requests.poisson(20, rate=10.0, seed=2)
    r = simulate_disaggregated(
        reqs, prefill=1, decode=1, model=MODEL, prefill_gpu="h100", decode_gpu="a100-80gb", engine="reference"
    )
    assert r.prefill_config.num_blocks == ob.serve.num_blocks(MODEL, "h100")
    assert r.decode_config.num_blocks == ob.serve.num_blocks(MODEL, "a100-80gb")
    # Each pool steps at its own GPU's roofline, natively too.
    native_run = simulate_disaggregated(
        reqs, prefill=1, decode=1, model=MODEL, prefill_gpu="h100", decode_gpu="a100-80gb"
    )
    np.testing.assert_array_equal(native_run.merged.finish, r.merged.finish)
    same = simulate_disaggregated(reqs, prefill=1, decode=1, model=MODEL, gpu="h100")
    # The prefill pool is the same H100 either way, the A100 decodes slower.
    np.testing.assert_array_equal(same.prefill_end, r.prefill_end)
    assert same.first_decode_step.mean() < r.first_decode_step.mean() and same.merged.tpot.mean() < r.merged.tpot.mean()


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("kwargs", "named"),
    [
        ({"prefill": 0}, "prefill=0"),
        ({"decode": 0}, "decode=0"),
        ({"prefill": 1.5}, "prefill=1.5"),
        ({"kv_link": "warp"}, "kv_link='warp'"),
        ({"kv_link": 3}, "kv_link=3"),
        ({"model": None}, "model=None"),
        ({"router": "fastest"}, "router='fastest'"),
        ({"flux": 1}, "flux=1"),
        ({"decode_gpu": "a99"}, "decode_gpu='a99'"),
    ],
)
def test_bad_input_is_refused_naming_the_argument(kwargs: dict[str, Any], named: str) -> None:
    args: dict[str, Any] = {"prefill": 1, "decode": 1, "model": MODEL, "gpu": "h100", "engine": "reference", **kwargs}
    with pytest.raises((ArgumentError, ArgumentTypeError), match=named.replace("(", r"\(").replace(".", r"\.")):
        simulate_disaggregated(Requests([0.0], [10], [2]), **args)


def test_a_negative_or_zero_bandwidth_and_a_shared_router_are_refused() -> None:
    for bad in (-1.0, 0.0, math.nan):
        with pytest.raises(ArgumentError, match="bandwidth="):
            Link("bad", bad, 0.0)
    with pytest.raises(ArgumentError, match="latency="):
        Link("bad", 1e9, -1.0)
    rule = ob.serve.routers.RoundRobin()
    with pytest.raises(ArgumentError, match="decode_router="):
        simulate_disaggregated(
            Requests([0.0], [10], [2]), prefill=1, decode=1, model=MODEL, gpu="h100", router=rule, decode_router=rule
        )


# --------------------------------------------------------------------------- the command line


def test_the_command_line_serves_on_two_pools_as_the_api_does() -> None:
    args = ["--poisson", "40,5", "--prefill", "2", "--decode", "1", "--kv-link", "roce-400g", "--seed", "3"]
    out = subprocess.run(
        [sys.executable, "-m", "osbench", "serve", "simulate", *args, "--json"], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    reqs = ob.serve.Requests.poisson(40, 5.0, seed=3)
    api = simulate_disaggregated(
        reqs, prefill=2, decode=1, kv_link="roce-400g", model=ob.serve.models.DEFAULT_MODEL, gpu="h100"
    )
    s = api.summary()
    assert data["summary"] == json.loads(json.dumps(s.merged.to_dict()))
    assert data["disaggregated"]["bytes_moved"] == s.bytes_moved
    assert data["disaggregated"]["transfer"] == json.loads(json.dumps(s.transfer.to_dict()))
    text = subprocess.run(
        [sys.executable, "-m", "osbench", "serve", "simulate", *args], capture_output=True, text=True
    ).stdout
    assert "TTFT parts" in text and "roce-400g" in text
    for bad, words in (
        (["--prefill", "1"], "--decode is needed with --prefill"),
        (["--prefill", "1", "--decode", "1", "--replicas", "2"], "--replicas is not accepted with --prefill"),
        (["--kv-link", "ideal"], "--kv-link is not accepted without --prefill and --decode"),
        (["--prefill", "0", "--decode", "1"], "prefill=0 is not accepted"),
    ):
        refused = subprocess.run(
            [sys.executable, "-m", "osbench", "serve", "simulate", "--poisson", "5,1", *bad],
            capture_output=True,
            text=True,
        )
        assert refused.returncode == 2 and words in refused.stderr, refused.stderr


# --------------------------------------------------------------------------- the study


def test_the_study_compares_every_deployment_on_both_traces_and_states_its_finding(
    dataset: Callable[[str], Path],
) -> None:
    for name in TRACES:
        dataset(name)
    table = aggregated_vs_disaggregated(quick=True)
    assert {r[0] for r in table.rows} == set(TRACES.values())
    assert len(table.rows) == len(TRACES) * len(deployments())
    for row in table.records():
        split = row["deployment"].startswith("disaggregated")
        assert (row["KV moved"] != "-") == split and row["goodput"] <= row["throughput"] + 1e-9
        if split:  # a decode pool never waits for a prefill: its TPOT is all decode
            agg = next(r for r in table.records() if r["trace"] == row["trace"] and r["deployment"] == "aggregated")
            assert row["TPOT p50"] < agg["TPOT p50"] or row["trace"] != "Azure code"
    assert table.note.startswith("On Azure code ") and "goodput" in table.note.split(". ")[0]
    # The report's finding reads the same table from the results alone.
    results = {"sections": {"06-serve": {"tables": [json.loads(json.dumps(table.to_dict()))], "figures": {}}}}
    f = serve_disaggregation(_Data(results))
    assert f.key == "serve.disaggregation" and "Azure's code trace" in f.text and f.text.endswith(").")


@pytest.mark.parametrize("engine", ["native", "reference"])
@pytest.mark.parametrize(
    ("link", "part"), [(Link("slow", 1e-300, 0.0), "on the wire"), (Link("late", 1e9, 1.7e308), "inf s")]
)
def test_a_link_whose_transfers_would_stop_the_clock_is_refused_by_name(engine: str, link: Link, part: str) -> None:
    # A link so slow (or late) that its transfers would carry the clock where a decode step no
    # longer moves it: every decode would take 0 s. Refused before the run, as far arrivals are.
    reqs = Requests([0.0, 0.0], [64, 64], [3, 3])
    kw: dict[str, Any] = {"prefill": 1, "decode": 1, "model": "llama-3-8b", "gpu": "h100", "engine": engine}
    with pytest.raises(ArgumentError, match=f"kv_link='{link.name}' is not accepted.*{part}"):
        simulate_disaggregated(reqs, kv_link=link, **kw)
    fast = simulate_disaggregated(reqs, kv_link=Link("fast", 1e9, 1e-5), **kw)
    assert (fast.merged.e2e > fast.merged.ttft).all()  # the decode steps take time


def test_the_link_check_counts_the_clients_turnarounds_too() -> None:
    # Each alone keeps the clock moving; together the turnarounds and the link's latencies would
    # carry it where a decode step of about 7 ms vanishes (from 2**46 s, where half the spacing of
    # float64 clocks passes 7 ms): the link tips it.
    reqs = Requests([0.0, 0.0], [64, 64], [3, 3])
    kw: dict[str, Any] = {"prefill": 1, "decode": 1, "model": "llama-3-8b", "gpu": "h100"}
    late, clients = Link("late", 1e9, 1e13), Clients(1, 2e13)
    simulate_disaggregated(reqs, kv_link=late, **kw)
    simulate_disaggregated(reqs, kv_link=Link("fast", 1e9, 1e-5), concurrency=clients, **kw)
    with pytest.raises(ArgumentError, match="kv_link='late' is not accepted"):
        simulate_disaggregated(reqs, kv_link=late, concurrency=clients, **kw)
