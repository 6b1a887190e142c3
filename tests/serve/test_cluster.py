"""Replicas behind a router (osbench.serve.cluster): the facts of issue 26 on random small
workloads, each router's rule, and bad input."""

from __future__ import annotations

import dataclasses
import json
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
from osbench import _native
from osbench.errors import ArgumentError, ArgumentTypeError
from osbench.serve import native, reference
from osbench.serve.cluster import simulate_cluster
from osbench.serve.cluster_study import STRETCHES, imbalance_figure, routers_on_mooncake
from osbench.serve.config import EngineConfig
from osbench.serve.lecture import MOONCAKE
from osbench.serve.replicas import drive_replicas
from osbench.serve.requests import Requests
from osbench.serve.routers import ROUTERS, PrefixAware, Random, Router
from osbench.serve.run import Clients
from osbench.serve.steptime import StepTime
from osbench.serve.vllm.engines import stepper

# --------------------------------------------------------------------------- the facts


@settings(max_examples=120, deadline=None)
@given(workloads(), routers(), st.one_of(st.none(), st.integers(1, 4)), st.sampled_from(["reference", "native"]))
def test_one_replica_with_any_router_is_the_single_engine_step_for_step(workload, router, concurrency, engine) -> None:  # type: ignore[no-untyped-def]
    reqs, cfg = workload
    config = EngineConfig(**cfg)
    if engine == "native" and callable(router) and not isinstance(router, Router):
        engine = "reference"  # a user's rule runs on the reference loop
    alone = run_or_livelock(lambda: reference.run(reqs, config, LINEAR, record=True, concurrency=concurrency))
    cluster = run_or_livelock(
        lambda: simulate_cluster(
            reqs,
            replicas=1,
            router=router,
            engine=engine,
            step_time=LINEAR,
            record=True,
            concurrency=concurrency,
            **cfg,
        )
    )
    if isinstance(alone, Exception):
        assert str(cluster) == str(alone)
        return
    assert (cluster.replica == 0).all()
    assert_same_runs(alone, raw(cluster.replicas[0]))
    assert_same_runs(alone, raw(cluster.merged, record=alone.record))


@settings(max_examples=100, deadline=None)
@given(workloads(max_requests=20), st.integers(2, 4), st.sampled_from(["reference", "native"]))
def test_round_robin_over_n_replicas_is_n_independent_engines(workload, n: int, engine: str) -> None:  # type: ignore[no-untyped-def]
    reqs, cfg = workload
    config = EngineConfig(**cfg)
    cluster = run_or_livelock(
        lambda: simulate_cluster(
            reqs, replicas=n, router="round-robin", engine=engine, step_time=LINEAR, record=True, **cfg
        )
    )
    alone = [run_or_livelock(lambda k=k: reference.run(reqs[k::n], config, LINEAR, record=True)) for k in range(n)]
    if isinstance(cluster, Exception):
        assert any(str(a) == str(cluster) for a in alone if isinstance(a, Exception))
        return
    np.testing.assert_array_equal(cluster.replica, np.arange(len(reqs)) % n)
    for k in range(n):
        assert_same_runs(alone[k], raw(cluster.replicas[k]))


@settings(max_examples=200, deadline=None)
@given(
    workloads(max_requests=24),
    routers(),
    st.integers(1, 4),
    st.one_of(
        st.none(),
        st.integers(1, 5),
        st.builds(Clients, st.integers(1, 5), st.sampled_from([1e-4, 0.02]), st.integers(0, 8)),
    ),
    st.sampled_from([LINEAR, StepTime.roofline("llama-3-8b", "h100-sxm")]),
    st.booleans(),
)
def test_native_equals_the_reference_request_for_request_and_step_for_step(  # type: ignore[no-untyped-def]
    workload, router, n, concurrency, step_time, jump
) -> None:
    reqs, cfg = workload
    if callable(router) and not isinstance(router, Router):
        router = "least-tokens"  # the native loop runs the table's routers
    rule = ob.serve.routers.router_of(router)
    config = EngineConfig(**cfg)

    def ours():  # type: ignore[no-untyped-def]
        engines = [stepper(reqs, config) for _ in range(n)]
        return drive_replicas(
            reqs,
            engines,
            rule,
            step_time,
            usable_blocks=config.usable_blocks,
            block_size=config.block_size,
            record=True,
            concurrency=concurrency,
        )

    expected = run_or_livelock(ours)
    got = run_or_livelock(
        lambda: native.run_cluster(reqs, config, step_time, n, rule, record=True, jump=jump, concurrency=concurrency)
    )
    if isinstance(expected, Exception):
        assert isinstance(got, Exception)  # each names the requests by its own numbering
        return
    np.testing.assert_array_equal(got.replica, expected.replica)
    np.testing.assert_array_equal(got.load, expected.load)
    for a, b in zip(expected.runs, got.runs):
        assert_same_runs(a, b)


def test_the_random_cluster_workloads_do_exercise_routing_on_state() -> None:
    """What the property test relies on happens: replicas differ in load and in KV, requests
    are preempted and find prefixes, and the jump is taken, on one seeded workload."""
    rng = np.random.default_rng(2)
    n = 300
    prompt = rng.integers(1, 120, n)
    reqs = Requests(
        np.cumsum(rng.exponential(0.02, n)),
        prompt,
        rng.integers(1, 60, n),
        blocks=[rng.integers(0, 3, -(-int(p) // 8)) for p in prompt],
        source_block=8,
    )
    cfg = {**CFG, "num_blocks": 80}
    for router in ROUTERS:
        a = simulate_cluster(reqs, replicas=3, router=router, engine="reference", step_time=LINEAR, **cfg)
        b = simulate_cluster(reqs, replicas=3, router=router, engine="native", step_time=LINEAR, **cfg)
        np.testing.assert_array_equal(a.replica, b.replica)
        np.testing.assert_array_equal(a.merged.finish, b.merged.finish)
        s = a.summary()
        assert s.merged.preemptions > 0 and s.prefix_hit_rate > 0 and s.imbalance_max > 1, router
    # The decode jump is taken behind a router too, open and closed loop.
    long = Requests(np.cumsum(rng.exponential(5.0, 100)), rng.integers(50, 500, 100), rng.integers(200, 2000, 100))
    config = EngineConfig(num_blocks=20_000, enable_prefix_caching=False)
    kind, coefficients = LINEAR.spec()
    for concurrency in (None, 3):
        _, _, runs = _native.serve_simulate_cluster(
            {"arrival": long.arrival, "prompt_len": long.prompt_len, "output_len": long.output_len},
            {
                "settings": {name: getattr(config, name) for name in native._SETTINGS},
                "step_kind": kind,
                "step_coefficients": list(coefficients),
            },
            3,
            {"name": "least-requests", **native.ROUTER_DEFAULTS},
            {"record": False, "jump": True, "concurrency": concurrency},
        )
        assert sum(jumped for _, _, jumped in runs) > sum(len(c["start"]) for c, _, _ in runs) // 3


@settings(max_examples=60, deadline=None)
@given(workloads(), routers(), st.integers(1, 4), st.one_of(st.none(), st.integers(1, 5)))
def test_every_request_is_served_once_and_the_merged_run_is_the_replicas(workload, router, n, concurrency) -> None:  # type: ignore[no-untyped-def]
    reqs, cfg = workload
    result = run_or_livelock(
        lambda: simulate_cluster(
            reqs, replicas=n, router=router, engine="reference", step_time=LINEAR, concurrency=concurrency, **cfg
        )
    )
    if isinstance(result, Exception):
        return
    assert sorted(len(r.requests) for r in result.replicas) == sorted(np.bincount(result.replica, minlength=n))
    for k, own in enumerate(result.replicas):
        rows = np.flatnonzero(result.replica == k)
        np.testing.assert_array_equal(own.finish, result.merged.finish[rows])
        np.testing.assert_array_equal(own.cached_tokens, result.merged.cached_tokens[rows])
    assert len(result.merged.steps) == sum(len(r.steps) for r in result.replicas)
    assert (np.diff(result.merged.steps.start) >= 0).all()
    # The router saw, at each arrival, the requests routed before it and not finished by then.
    for i in range(len(reqs)):
        t = result.merged.arrival[i]
        seen = [(result.replica[:i] == k) & (result.merged.finish[:i] > t) for k in range(n)]
        np.testing.assert_array_equal(result.load[i], [int(s.sum()) for s in seen], err_msg=f"request {i}")
    if concurrency is not None:
        in_flight = [
            int(((result.merged.arrival <= t) & (t < result.merged.finish)).sum()) for t in result.merged.arrival
        ]
        assert max(in_flight) <= concurrency
    s = result.summary()
    prompt = reqs.prompt_len.sum()
    assert s.prefix_hit_rate == pytest.approx(result.merged.cached_tokens.sum() / prompt)
    assert len(s.prefix_hit_rates) == n and s.imbalance_mean >= 1.0


# --------------------------------------------------------------------------- each router's rule

CFG: dict[str, Any] = {
    "num_blocks": 400,
    "block_size": 4,
    "max_num_batched_tokens": 256,
    "max_num_seqs": 8,
    "max_model_len": 512,
}


def conversations(n: int = 60) -> Requests:
    """Requests of 6 conversations, each prompt the whole conversation so far (shared prefixes)."""
    rng = np.random.default_rng(3)
    convo = rng.integers(0, 6, n)
    turns = np.zeros(6, dtype=int)
    blocks, prompt = [], []
    for c in convo:
        turns[c] += 1
        ids = [1000 * c + t for t in range(int(turns[c]) * 2)]
        blocks.append(ids)
        prompt.append(len(ids) * 8)
    return Requests(np.arange(n) * 0.05, prompt, [8] * n, blocks=blocks, source_block=8)


def test_prefix_aware_keeps_a_conversation_on_one_replica_and_raises_the_hit_rate() -> None:
    reqs = conversations()
    aware = simulate_cluster(reqs, replicas=3, router="prefix-aware", step_time=LINEAR, **CFG)
    rr = simulate_cluster(reqs, replicas=3, router="round-robin", step_time=LINEAR, **CFG)
    convo = np.asarray([int(b[0]) // 1000 for b in reqs.blocks or []])
    # Once a conversation's prompt is recorded, its later turns match it above the threshold.
    for c in range(6):
        assert len(set(aware.replica[convo == c][1:].tolist())) == 1
    assert aware.summary().prefix_hit_rate > rr.summary().prefix_hit_rate


def test_prefix_aware_falls_back_to_the_least_loaded_past_both_thresholds() -> None:
    router = PrefixAware(balance_abs_threshold=2, balance_rel_threshold=1.5)
    router.start(3, Requests([0.0], [16], [1]), 4)
    view = [ob.serve.routers.Replica(k, load, 0, 0, 0, 0, 0, 100, 4) for k, load in enumerate([5, 1, 2])]
    assert router.imbalanced([5, 1, 2]) and router.route(ob.serve.routers.Request(0, 0.0, 16, 1), view) == 1
    assert not router.imbalanced([3, 1, 2])  # 3 - 1 is not above 2
    assert not PrefixAware(balance_abs_threshold=0, balance_rel_threshold=6.0).imbalanced([5, 1, 2])


def test_the_load_routers_pick_the_least_loaded_and_kv_aware_the_freest() -> None:
    Replica, Request = ob.serve.routers.Replica, ob.serve.routers.Request
    view = [
        Replica(
            0,
            outstanding=3,
            tokens=10,
            blocks_used=90,
            num_waiting=0,
            num_running=3,
            unreported_blocks=0,
            usable_blocks=100,
            block_size=4,
        ),
        Replica(
            1,
            outstanding=1,
            tokens=50,
            blocks_used=10,
            num_waiting=0,
            num_running=1,
            unreported_blocks=80,
            usable_blocks=100,
            block_size=4,
        ),
        Replica(
            2,
            outstanding=2,
            tokens=20,
            blocks_used=40,
            num_waiting=0,
            num_running=2,
            unreported_blocks=0,
            usable_blocks=100,
            block_size=4,
        ),
    ]
    request = Request(0, 0.0, 16, 4)
    assert ROUTERS["least-requests"]().route(request, view) == 1
    assert ROUTERS["least-tokens"]().route(request, view) == 0
    assert ROUTERS["kv-aware"]().route(request, view) == 2  # 60 free vs 10 and 10 - 80
    # a request its report shows waiting holds no block yet, but will take the mean prompt's (4 blocks
    # here: one 16-token prompt routed so far): 60 free - 12 x 4 - 4 still beats 10 - 4 and 90 - 80 - 4
    waiting = [view[0], view[1], dataclasses.replace(view[2], num_waiting=12)]
    assert ROUTERS["kv-aware"]().route(request, waiting) == 2
    waiting[2] = dataclasses.replace(view[2], num_waiting=13)  # 60 - 13 x 4 - 4: the fewer outstanding of 0 and 1
    assert ROUTERS["kv-aware"]().route(request, waiting) == 1


def test_random_is_seeded_and_spreads_evenly() -> None:
    reqs = Requests(np.arange(4000) * 1.0, [4] * 4000, [1] * 4000)
    cfg = {**CFG, "enable_prefix_caching": False}
    a = simulate_cluster(reqs, replicas=4, router=Random(seed=7), step_time=LINEAR, **cfg)
    b = simulate_cluster(reqs, replicas=4, router=Random(seed=7), step_time=LINEAR, **cfg)
    c = simulate_cluster(reqs, replicas=4, router=Random(seed=8), step_time=LINEAR, **cfg)
    np.testing.assert_array_equal(a.replica, b.replica)
    assert (a.replica != c.replica).any()
    counts = np.bincount(a.replica, minlength=4)
    assert (abs(counts - 1000) < 120).all()  # about 4 standard deviations


def test_a_user_rule_sees_each_replicas_state_at_the_arrival() -> None:
    seen = []

    def rule(request, replicas):  # type: ignore[no-untyped-def]
        seen.append((request.index, [r.outstanding for r in replicas], [r.unreported_blocks for r in replicas]))
        return request.index % 2

    reqs = Requests([0.0, 0.0, 0.0, 100.0], [8, 8, 8, 8], [2, 2, 2, 2])
    simulate_cluster(reqs, replicas=2, router=rule, engine="reference", step_time=LINEAR, **CFG)
    # Requests 0..2 arrive together (nothing finished, none reported); request 3 long after.
    assert seen == [(0, [0, 0], [0, 0]), (1, [1, 0], [2, 0]), (2, [1, 1], [2, 2]), (3, [0, 0], [0, 0])]


def test_a_router_object_is_started_afresh_for_every_run() -> None:
    reqs = Requests([0.0, 1.0, 2.0], [8, 8, 8], [2, 2, 2])
    router = ROUTERS["round-robin"]()
    first = simulate_cluster(reqs, replicas=2, router=router, step_time=LINEAR, **CFG)
    again = simulate_cluster(reqs, replicas=2, router=router, step_time=LINEAR, **CFG)
    np.testing.assert_array_equal(first.replica, again.replica)


def test_the_loop_drives_any_router_subclass() -> None:
    class Last(Router):
        name = "last"

        def route(self, request, replicas):  # type: ignore[no-untyped-def]
            return len(replicas) - 1

    reqs = Requests([0.0, 0.5], [8, 8], [2, 2])
    cfg = EngineConfig(**CFG)
    run = drive_replicas(reqs, [stepper(reqs, cfg) for _ in range(3)], Last(), LINEAR, usable_blocks=399, block_size=4)
    assert run.replica.tolist() == [2, 2] and [len(r.arrival) for r in run.runs] == [0, 0, 2]


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("replicas", [0, -1, 5000])
def test_replicas_out_of_range_are_refused(replicas: int) -> None:
    with pytest.raises(ArgumentError, match=f"replicas={replicas} is not accepted"):
        simulate_cluster(Requests([0.0], [4], [1]), replicas=replicas, step_time=LINEAR, **CFG)


@pytest.mark.parametrize("replicas", [1.5, True, "2", None])
def test_replicas_of_the_wrong_type_are_refused(replicas: object) -> None:
    with pytest.raises(ArgumentTypeError, match=r"replicas=.* is not accepted: it must be a positive integer"):
        simulate_cluster(Requests([0.0], [4], [1]), replicas=replicas, step_time=LINEAR, **CFG)  # type: ignore[arg-type]


def test_an_unknown_router_name_is_refused_with_the_known_ones() -> None:
    with pytest.raises(ArgumentError, match="router='fastest' is not accepted: use one of round-robin, random, "):
        simulate_cluster(Requests([0.0], [4], [1]), replicas=2, router="fastest", step_time=LINEAR, **CFG)
    with pytest.raises(ArgumentTypeError, match="router=3 is not accepted"):
        simulate_cluster(Requests([0.0], [4], [1]), replicas=2, router=3, step_time=LINEAR, **CFG)


@pytest.mark.parametrize("answer", [2, -1, 1.0, True, None])
def test_a_rule_returning_no_replica_is_refused(answer: object) -> None:
    with pytest.raises(
        ArgumentError,
        match=f"router=.* returned {answer!r} for request 0: it must return a replica index, an integer from 0 to 1",
    ):
        simulate_cluster(
            Requests([0.0], [4], [1]),
            replicas=2,
            router=lambda r, v: answer,
            engine="reference",
            step_time=LINEAR,
            **CFG,
        )


def test_what_the_native_loop_cannot_run_and_unknown_arguments_are_named() -> None:
    with pytest.raises(ArgumentTypeError, match=r"router=UserRouter.* is not accepted by engine='native'"):
        simulate_cluster(Requests([0.0], [4], [1]), replicas=2, router=lambda r, v: 0, step_time=LINEAR, **CFG)
    with pytest.raises(ArgumentTypeError, match=r"step_time=.* is not accepted by the native engine"):
        simulate_cluster(Requests([0.0], [4], [1]), replicas=2, step_time=lambda batch: 0.01, **CFG)
    with pytest.raises(ArgumentTypeError, match="routers=2 is not accepted: simulate_cluster takes replicas, router"):
        simulate_cluster(Requests([0.0], [4], [1]), replicas=2, routers=2, step_time=LINEAR, **CFG)
    with pytest.raises(ArgumentError, match=r"cache_threshold=2\.0 is not accepted"):
        PrefixAware(cache_threshold=2)
    with pytest.raises(ArgumentError, match="seed=-1 is not accepted"):
        Random(seed=-1)


# --------------------------------------------------------------------------- the command line


def test_the_command_line_serves_on_replicas_as_the_api_does() -> None:
    args = ["--conversations", "30,2", "--replicas", "3", "--router", "prefix-aware", "--seed", "4"]
    out = subprocess.run(
        [sys.executable, "-m", "osbench", "serve", "simulate", *args, "--json"], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    reqs = ob.serve.Requests.conversations(30, 2.0, seed=4)
    api = simulate_cluster(reqs, replicas=3, router="prefix-aware", model=ob.serve.models.DEFAULT_MODEL, gpu="h100")
    s = api.summary()
    assert data["summary"] == json.loads(json.dumps(s.merged.to_dict()))
    assert data["cluster"]["requests_per_replica"] == list(s.requests_per_replica)
    assert data["cluster"]["prefix_hit_rates"] == list(s.prefix_hit_rates)
    refused = subprocess.run(
        [sys.executable, "-m", "osbench", "serve", "simulate", "--poisson", "5,1", "--router", "kv-aware"],
        capture_output=True,
        text=True,
    )
    assert refused.returncode == 2 and "--router kv-aware is not accepted without --replicas" in refused.stderr


# --------------------------------------------------------------------------- the study


def test_routers_compared_on_mooncake(dataset: Callable[[str], Path]) -> None:
    dataset(MOONCAKE)
    table = routers_on_mooncake(replicas=4, quick=True)
    assert [row[0] for row in table.rows] == list(ROUTERS)
    by = {row[0]: dict(zip(table.columns, row)) for row in table.rows}
    # Conversations share their history: routing by prefix finds it cached far more often.
    aware = by.pop("prefix-aware")
    assert all(aware["prompt tokens from the cache"] > 1.5 * row["prompt tokens from the cache"] for row in by.values())
    assert all(row[6] <= row[7] for row in table.rows)  # fewest and most requests on a replica
    assert by["round-robin"]["most requests"] - by["round-robin"]["fewest requests"] <= 1
    assert table.note.startswith("Prefix-aware routing serves") and "4 x its own rate" in table.setup
    for row in [aware, *by.values()]:  # the worst stretch's mean is at least the mean over all
        assert row["imbalance, worst stretch"] >= row["imbalance mean"] - 1e-12
    series = table.extra["imbalance_over_time"]
    assert len(series["seconds"]) == STRETCHES and all(len(series[name]) == STRETCHES for name in ROUTERS)
    pytest.importorskip("matplotlib")
    assert imbalance_figure(table)[:4] == b"\x89PNG"


def test_the_imbalance_over_time_averages_each_stretch() -> None:
    reqs = ob.serve.Requests.poisson(400, rate=40.0, seed=3)
    r = ob.serve.simulate_cluster(reqs, replicas=3, router="random", model="llama-3-8b", gpu="h100")
    seconds, means = r.imbalance_over_time(7)
    width = reqs.duration / 7
    np.testing.assert_allclose(seconds, (np.arange(7) + 0.5) * width)
    which = np.minimum(((reqs.arrival - reqs.arrival[0]) // width).astype(int), 6)
    for k in range(7):
        assert means[k] == pytest.approx(r.imbalance[which == k].mean())
    counts = np.bincount(which, minlength=7)
    assert np.sum(counts * means) / counts.sum() == pytest.approx(r.imbalance.mean())
    with pytest.raises(ArgumentError, match="spans=0 is not accepted"):
        r.imbalance_over_time(0)


def test_ctrl_c_stops_a_long_native_cluster_run() -> None:
    assert_stops(
        """
        import numpy as np
        from osbench.serve import simulate_cluster
        from osbench.serve.requests import Requests
        from osbench.serve.steptime import StepTime
        rng = np.random.default_rng(0)
        reqs = Requests(np.zeros(3000), rng.integers(100, 2000, 3000), rng.integers(500, 2000, 3000))
        step = StepTime.linear(0.01, 1e-5, 1e-4, 1e-7)
        for _ in range(1000):  # minutes of work if nothing stops it
            simulate_cluster(reqs, replicas=4, router="least-tokens", step_time=step, num_blocks=5000, max_model_len=4096)
        """
    )


def test_sglang_replicas_run_on_the_reference_loop() -> None:
    """SGLang's semantics behind a router: one replica serves as the single engine does, three
    replicas share the requests, and the native cluster refuses it by name."""
    reqs = ob.serve.Requests.poisson(120, 5.0, seed=3)
    opts: dict[str, Any] = {"semantics": "sglang", "model": "llama-3-8b", "gpu": "h100"}
    alone = ob.serve.simulate(reqs, **opts)
    one = simulate_cluster(reqs, replicas=1, engine="reference", **opts)
    for name in ("arrival", "first_token", "finish", "cached_tokens"):
        np.testing.assert_array_equal(getattr(one.merged, name), getattr(alone, name))
    assert one.merged.num_blocks == alone.num_blocks
    three = simulate_cluster(reqs, replicas=3, router="least-tokens", engine="reference", **opts)
    assert sorted(set(three.replica.tolist())) == [0, 1, 2] and len(three.merged.finish) == len(reqs)
    with pytest.raises(ArgumentError, match="semantics='sglang' is not accepted by simulate_cluster"):
        simulate_cluster(reqs, replicas=2, engine="native", **opts)
