"""The validation harness: the silicon rows it replays, the closed-loop clients, the MAPE table."""

from __future__ import annotations

import csv
import math
from dataclasses import replace
from typing import Any, Callable, Optional

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from osbench.errors import ArgumentError, ArgumentTypeError
from osbench.serve import StepTime, validate
from osbench.serve.config import EngineConfig
from osbench.serve.validate import Point, Prediction

LINEAR = StepTime.linear(0.01, 1e-5, 1e-3, 0.0)
"""A step of 10 ms, 10 us per prompt token and 1 ms per decoding request."""


def test_aiperf_one_client_waits_for_nothing() -> None:
    # One client: each request is prefilled in one step, then decodes alone; every one measured.
    cfg = EngineConfig(num_blocks=1000, enable_prefix_caching=False)
    ttft, tpot = validate.aiperf_loop(cfg, LINEAR, 100, 10, 1, clients=validate.AIPerfClients(rounds=5))
    assert len(ttft) == len(tpot) == 5
    assert np.allclose(ttft, 0.01 + 100 * 1e-5) and np.allclose(tpot, 0.01 + 1e-3)


def test_aiperf_clients_start_together_and_stay_in_step() -> None:
    # Four clients sending at once: their four prompts share the first step, they decode and
    # finish together, and their next four requests are prefilled together again.
    cfg = EngineConfig(num_blocks=1000, enable_prefix_caching=False)
    two = validate.AIPerfClients(rounds=2)
    ttft, tpot = validate.aiperf_loop(cfg, LINEAR, 64, 8, 4, clients=two)
    assert len(ttft) == 8 and np.allclose(ttft, 0.01 + 4 * 64 * 1e-5) and np.allclose(tpot, 0.01 + 4 * 1e-3)
    # A step of 128 tokens holds two prompts. The next step's budget goes to the first pair's two
    # decodes first, then to the third prompt and 62 tokens of the fourth, whose last 2 tokens
    # share the third step with three decodes.
    small = replace(cfg, max_num_batched_tokens=128, max_num_seqs=4)
    ttft, _ = validate.aiperf_loop(small, LINEAR, 64, 8, 4, clients=two)
    first, second, third = 0.01 + 128 * 1e-5, 0.01 + 126 * 1e-5 + 2 * 1e-3, 0.01 + 2 * 1e-5 + 3 * 1e-3
    assert np.allclose(ttft[:2], first) and np.allclose(ttft[2:4], [first + second, first + second + third])


def test_a_prompt_pool_hits_the_prefix_cache() -> None:
    # One prompt of 100 tokens sent again and again: the drained warm-up sent it first, so with
    # the prefix cache every measured request computes only its last partial block (100 = 6
    # blocks of 16 + 4).
    cached = EngineConfig(num_blocks=1000, enable_prefix_caching=True)
    five = validate.AIPerfClients(rounds=5)
    ttft, tpot = validate.aiperf_loop(cached, LINEAR, 100, 10, 1, clients=five, prompts=1)
    assert len(ttft) == 5 and np.allclose(ttft, 0.01 + 4 * 1e-5) and np.allclose(tpot, 0.01 + 1e-3)
    # Without the cache, or with every prompt distinct, every prompt is computed in full.
    plain = EngineConfig(num_blocks=1000, enable_prefix_caching=False)
    for cfg, prompts in ((plain, 1), (cached, None)):
        ttft, _ = validate.aiperf_loop(cfg, LINEAR, 100, 10, 1, clients=five, prompts=prompts)
        assert np.allclose(ttft, 0.01 + 100 * 1e-5)
    # Without a warm-up, the first measured request meets the prompt for the first time.
    cold = validate.AIPerfClients(rounds=5, warmup=0)
    ttft, _ = validate.aiperf_loop(cached, LINEAR, 100, 10, 1, clients=cold, prompts=1)
    assert np.isclose(ttft[0], 0.01 + 100 * 1e-5) and np.allclose(ttft[1:], 0.01 + 4 * 1e-5)
    # A pool of three and two warm-up requests: the first measured request sends the third
    # prompt, every later one repeats one.
    ttft, _ = validate.aiperf_loop(cached, LINEAR, 100, 10, 1, clients=validate.AIPerfClients(rounds=6), prompts=3)
    assert np.isclose(ttft[0], 0.01 + 100 * 1e-5) and np.allclose(ttft[1:], 0.01 + 4 * 1e-5)


def test_the_profiling_phase_starts_after_the_warm_up_is_drained(monkeypatch: pytest.MonkeyPatch) -> None:
    # Two clients, a step of one prompt: the warm-up's four requests finish at four times, yet
    # both measured requests are sent together, a turnaround after the last of them finished
    # (a client whose warm-up is over waits for the other's).
    served: list[Any] = []
    serve = validate._serve

    def record(requests: Any, *args: Any) -> Any:
        run = serve(requests, *args)
        served.append(run)
        return run

    monkeypatch.setattr(validate, "_serve", record)
    one_prompt = EngineConfig(num_blocks=1000, max_num_batched_tokens=100, max_num_seqs=2, enable_prefix_caching=True)
    sent = validate.AIPerfClients(rounds=1)
    ttft, _ = validate.aiperf_loop(one_prompt, LINEAR, 100, 10, 2, clients=sent, prompts=1)
    (whole,) = served  # the warm-up and the profiling phase in one run
    warmup = whole.finish[:4]
    assert len(set(warmup)) == 4
    assert np.all(whole.arrival[4:] == warmup.max() + sent.turnaround)
    # Both measured requests hit the cache and share their first step on the idle server.
    assert len(ttft) == 2 and np.allclose(ttft, 0.01 + 2 * 4 * 1e-5)


@pytest.mark.parametrize("prompts", [0, -1, 2.5, "100"])
def test_a_prompt_pool_must_be_a_positive_count(prompts: object) -> None:
    cfg = EngineConfig(num_blocks=1000, enable_prefix_caching=True)
    with pytest.raises((ArgumentError, ArgumentTypeError), match="prompts"):
        validate.aiperf_loop(cfg, LINEAR, 100, 10, 1, prompts=prompts)  # type: ignore[arg-type]


@pytest.mark.parametrize("kw", [{"rounds": 0}, {"rounds": 1.5}, {"warmup": -1}, {"turnaround": -1.0}])
def test_aiperf_clients_refuse_bad_settings(kw: dict[str, Any]) -> None:
    with pytest.raises((ArgumentError, ArgumentTypeError), match=next(iter(kw))):
        validate.AIPerfClients(**kw)


def test_the_aiperf_loop_refuses_bad_arguments() -> None:
    cfg = EngineConfig(num_blocks=1000, enable_prefix_caching=False)
    with pytest.raises(ArgumentError, match="concurrency=0"):
        validate.aiperf_loop(cfg, LINEAR, 100, 10, 0)
    with pytest.raises(ArgumentTypeError, match="clients=BurstClients is not accepted"):
        validate.aiperf_loop(cfg, LINEAR, 100, 10, 2, clients=validate.BurstClients())  # type: ignore[arg-type]


def test_the_burst_loop_sends_random_lengths_from_a_cold_start() -> None:
    # One client, a linear step time: each request is prefilled in one step, then decodes alone,
    # its lengths drawn from 80..100 input and 8..10 output tokens; every request is measured.
    t = StepTime.linear(0.01, 1e-5, 1e-3, 0.0)
    cfg = EngineConfig(num_blocks=1000, enable_prefix_caching=False)
    ttft, tpot = validate.burst_loop(cfg, t, 100, 10, 1, clients=validate.BurstClients(40))
    prompt = np.round((ttft - 0.01) / 1e-5)
    assert len(ttft) == 40 and prompt.min() >= 80 and prompt.max() <= 100 and len(set(prompt)) > 5
    assert np.allclose(ttft, 0.01 + prompt * 1e-5) and np.allclose(tpot, 0.01 + 1e-3)
    # The same seed draws the same lengths; range_ratio 1 is the fixed lengths.
    assert np.array_equal(ttft, validate.burst_loop(cfg, t, 100, 10, 1, clients=validate.BurstClients(40))[0])
    fixed, _ = validate.burst_loop(cfg, t, 100, 10, 1, clients=validate.BurstClients(3, range_ratio=1.0))
    assert np.allclose(fixed, 0.01 + 100 * 1e-5)
    # Four clients start together: the first four prompts share the first step.
    ttft, _ = validate.burst_loop(cfg, t, 64, 8, 4, clients=validate.BurstClients(2, range_ratio=1.0))
    assert len(ttft) == 8 and np.allclose(ttft[:4], 0.01 + 4 * 64 * 1e-5)


@pytest.mark.parametrize(
    "kw",
    [{"range_ratio": 1.5}, {"range_ratio": -0.1}, {"prompts_per_client": 0}, {"seed": -1}, {"turnaround": -1.0}],
)
def test_burst_clients_refuse_bad_settings(kw: dict[str, Any]) -> None:
    with pytest.raises((ArgumentError, ArgumentTypeError), match=next(iter(kw))):
        validate.BurstClients(**kw)


def test_the_burst_loop_refuses_bad_arguments() -> None:
    cfg, t = EngineConfig(num_blocks=1000, enable_prefix_caching=False), StepTime.linear(0.01, 1e-5, 1e-3, 0.0)
    with pytest.raises(ArgumentError, match="concurrency=0"):
        validate.burst_loop(cfg, t, 100, 10, 0)
    with pytest.raises(ArgumentTypeError, match="clients=dict is not accepted"):
        validate.burst_loop(cfg, t, 100, 10, 2, clients={"range_ratio": 0.5})  # type: ignore[arg-type]


CLIENT_LOOPS = {
    "isl": st.integers(1, 300),
    "osl": st.integers(1, 40),
    "clients": st.integers(1, 12),
    "budget": st.sampled_from([16, 64, 512]),
    "blocks": st.integers(0, 60),
}
"""What both client loops' engine-equality tests draw: lengths, clients, the step's token budget
and blocks beyond the least a request needs (a small pool: preemptions)."""


@settings(max_examples=40, deadline=None)
@given(
    **CLIENT_LOOPS,
    per_client=st.integers(1, 3),
    ratio=st.sampled_from([0.0, 0.5, 0.8, 1.0]),
    seed=st.integers(0, 2**32),
)
def test_the_burst_loop_on_both_engines(
    isl: int, osl: int, clients: int, per_client: int, ratio: float, budget: int, blocks: int, seed: int
) -> None:
    """InferenceMAX's clients on the native engine and on the reference one: equal to the last
    bit, preemptions included (a small pool)."""
    cfg = EngineConfig(
        num_blocks=-(-(isl + osl) // 16) + 1 + blocks,
        max_num_batched_tokens=budget,
        max_num_seqs=clients,
        max_model_len=isl + osl,
        enable_prefix_caching=False,
    )
    t = StepTime.linear(0.0031, 1.3e-5, 7.1e-4, 3.3e-7)
    sent = validate.BurstClients(per_client, range_ratio=ratio, seed=seed)
    ours = validate.burst_loop(cfg, t, isl, osl, clients, engine="reference", clients=sent)
    theirs = validate.burst_loop(cfg, t, isl, osl, clients, clients=sent)
    assert np.array_equal(ours[0], theirs[0]) and np.array_equal(ours[1], theirs[1])


def test_an_inferencemax_point_runs_its_servers_flags(measured_tables: None) -> None:
    # The same measured run, as InferenceMAX measured it and as AIConfigurator's benchmark would:
    # both servers have as many sequences as clients; InferenceMAX's has no prefix cache, a step
    # of 8,192 tokens and on H200 an FP8 KV cache, twice the tokens of the BF16 one in the memory
    # the weights leave (BF16 on H100); the generator's fits a prompt, a token per client and
    # 1,500 more.
    imax = Point("x", "llama-3.1-70b-fp8", "h200", 1, "unknown", 1024, 8192, 32, 0.474, 0.0378, validate.INFERENCEMAX)
    aiperf = Point("x", "llama-3.1-70b-fp8", "h200", 1, "unknown", 1024, 8192, 32, 0.474, 0.0378)
    assert validate.model_for(imax).kv_dtype == "fp8" and validate.model_for(aiperf).kv_dtype == "bf16"
    a, b = validate.config_for(imax, prefix_caching=True), validate.config_for(aiperf, prefix_caching=True)
    assert (a.max_num_seqs, a.max_num_batched_tokens, a.enable_prefix_caching) == (32, 8192, False)
    assert (b.max_num_seqs, b.max_num_batched_tokens, b.enable_prefix_caching) == (32, 32 + 1024 + 1500, True)
    assert validate.GENERATOR_EXTRA_TOKENS == 1500 and 1.99 < (a.num_blocks - 1) / (b.num_blocks - 1) < 2.01
    assert set(validate.BENCHMARKS) == {validate.AIPERF, validate.AIPERF_POOL, validate.INFERENCEMAX}
    on_h100 = replace(imax, gpu="h100-sxm", tp=2)
    assert (
        validate.model_for(on_h100).kv_dtype == "bf16" == validate.INFERENCEMAX_SERVERS[imax.model].kv_cache["h100-sxm"]
    )
    # MiniMax-M2.5's server gives vLLM 95% of the GPU's memory, not the default 90%, and keeps bf16 KV
    mm = replace(imax, model="minimax-m2.5", tp=4, version="0.16.0")
    assert validate.model_for(mm).kv_dtype == "bf16" and validate.server_of(mm).gpu_memory_utilization == 0.95
    server, at_default = validate.config_for(mm), validate.config_for(replace(mm, benchmark=validate.AIPERF))
    assert server.max_num_batched_tokens == 8192 and server.num_blocks > at_default.num_blocks > 0
    # gpt-oss's servers keep vLLM's auto KV cache (bf16) and capture steps up to 2,048 tokens
    oss = replace(imax, model="gpt-oss-120b", tp=2)
    assert validate.model_for(oss).kv_dtype == "bf16"
    assert validate.step_time_for(oss, "measured").params["cuda_graph_tokens"] == 2048
    # the vLLM 0.18.0 scripts run Marlin's MXFP4 MoE; the earlier ones keep the tables' Triton kernel
    assert validate.step_time_for(replace(oss, version="0.18.0"), "measured").params["mxfp4_moe"] == "marlin"
    assert validate.step_time_for(oss, "measured").params["mxfp4_moe"] == "triton"
    assert (
        validate.step_time_for(replace(oss, benchmark=validate.AIPERF), "measured").params["cuda_graph_tokens"] == 512
    )
    with pytest.raises(
        ArgumentError, match=r"gpu='rtx-pro-6000' is not accepted for an InferenceMAX point of llama.*known for"
    ):
        validate.model_for(replace(imax, gpu="rtx-pro-6000"))
    assert set(validate.SOURCE_BENCHMARKS.values()) <= set(validate.BENCHMARKS)


def test_summary_groups_and_mape() -> None:
    p = Point("x", "llama-3.1-8b-fp8", "h200", 1, "0.12.0", 1000, 100, 8, 0.1, 0.01)
    preds = [Prediction(p, "measured", 0.11, 0.009), Prediction(p, "measured", 0.09, 0.011)]
    imax = replace(p, id="y", model="llama-3.1-70b-fp8", benchmark=validate.INFERENCEMAX)
    preds.append(Prediction(imax, "measured", 0.1, 0.013))
    rows = validate.summary(preds)
    overall = next(r for r in rows if r["gpu"] == r["benchmark"] == "all")
    assert (
        overall["points"] == 3
        and math.isclose(overall["ttft_mape"], 20 / 3)
        and math.isclose(overall["tpot_mape"], 50 / 3)
    )
    assert overall["kind"] == "dense" and validate.mape([]) != validate.mape([])  # NaN when empty
    # Each benchmark over every GPU and model, and each point in its own group.
    by = {r["benchmark"]: r for r in rows if r["gpu"] == "all" and r["benchmark"] != "all"}
    assert set(by) == {validate.AIPERF, validate.INFERENCEMAX}
    assert by[validate.AIPERF]["points"] == 2 and math.isclose(by[validate.AIPERF]["tpot_mape"], 10.0)
    assert by[validate.INFERENCEMAX]["points"] == 1 and math.isclose(by[validate.INFERENCEMAX]["tpot_mape"], 30.0)
    assert len(rows) == 2 + 2 + 1


def test_rows_of_the_silicon_sample(dataset: Callable[[str], object], measured_tables: None) -> None:
    points = validate.rows(str(dataset(validate.SILICON)))
    dense = [p for p in points if not p.moe]
    # the issue's ~220 dense vLLM points on H100 and H200, and the MoE ones reported beside
    assert len(dense) == 216 and {p.gpu for p in dense} == {"h100-sxm", "h200"}
    assert {p.model for p in dense} == {"qwen3-32b", "llama-3.1-70b-fp8", "llama-3.1-8b-fp8"}
    assert any(p.moe for p in points)
    # Only rows that record their clients: the id names the concurrency ("_c8_"); the three
    # Dynamo rows of Qwen3-32B FP8, whose ids say "_c_", are left out.
    assert all(f"_c{p.concurrency}_" in p.id for p in points)
    with open(str(dataset(validate.SILICON)), newline="") as f:
        unrecorded = [r["id"] for r in csv.DictReader(f) if "_vllm_agg_" in r["id"] and "x1000_c_tp" in r["id"]]
    assert len(unrecorded) == 3 and not {p.id for p in points} & set(unrecorded)
    first = next(
        p for p in points if p.id.startswith("qwen_qwen3_32b_qwen_qwen3_32b_h100_sxm_vllm_agg_1024x128_c8_tp2")
    )
    assert (first.isl, first.osl, first.concurrency, first.tp) == (1024, 128, 8, 2)
    assert math.isclose(first.ttft, 0.154248, rel_tol=1e-3) and first.version == "0.12.0"
    # Each source's benchmark: InferenceMAX's Llama-3.1-70B sweep, the 8B points that repeat
    # prompts, the rest AIConfigurator's AIPerf runs.
    by = {b: {p.model for p in dense if p.benchmark == b} for b in validate.BENCHMARKS}
    assert by == {
        validate.INFERENCEMAX: {"llama-3.1-70b-fp8"},
        validate.AIPERF_POOL: {"llama-3.1-8b-fp8"},
        validate.AIPERF: {"qwen3-32b"},
    }
    assert sum(p.benchmark == validate.INFERENCEMAX for p in dense) == 105
    # MiniMax-M2.5 from InferenceMAX's database (db-dump rows, the same measurements as its source
    # files, counted once): the 15 on 4 H200s; the 30 on 8 are left out, the MoE table does not
    # time its block-FP8 experts at moe_tp 8
    minimax = [p for p in points if p.model == "minimax-m2.5"]
    assert len(minimax) == 15 and {(p.gpu, p.tp, p.version, p.benchmark) for p in minimax} == {
        ("h200", 4, "0.16.0", validate.INFERENCEMAX)
    }
    assert {(p.isl, p.osl) for p in minimax} == {(1024, 1024), (1024, 8192), (8192, 1024)}
    # every row is replayed or counted once under the reason it is not
    read = validate.survey(str(dataset(validate.SILICON)))
    with open(str(dataset(validate.SILICON)), newline="") as f:
        total = sum(1 for _ in csv.DictReader(f))
    assert read.points == points and set(read.left_out) == set(validate.LEFT_OUT)
    assert len(points) + sum(read.left_out.values()) == total == 5221
    assert read.left_out["no clients"] == 3 and read.left_out["beyond the sweep"] == 9  # gpt-oss at 512 clients
    assert read.left_out["published twice"] == 25 + 15 and read.left_out["experts not timed"] == 54


@settings(max_examples=60, deadline=None)
@given(
    **CLIENT_LOOPS,
    rounds=st.integers(1, 3),
    warmup=st.integers(0, 2),
    turnaround=st.sampled_from([0.0, validate.CLIENT_TURNAROUND]),
    seqs=st.integers(1, 16),
    prompts=st.none() | st.integers(1, 8),
    step_time=st.sampled_from([LINEAR, StepTime.roofline("qwen3-32b", "h100", tp=2)]),
)
def test_the_aiperf_loop_on_both_engines(
    isl: int,
    osl: int,
    clients: int,
    rounds: int,
    warmup: int,
    turnaround: float,
    budget: int,
    seqs: int,
    blocks: int,
    prompts: Optional[int],
    step_time: StepTime,
) -> None:
    """AIPerf's clients on the native engine and on the reference one: equal to the last bit,
    the drained warm-up and send times included, preemptions included (a small pool), and
    prefix-cache hits where the clients draw from a pool of prompts."""
    need = -(-(isl + osl) // 16) + 1
    cfg = EngineConfig(
        num_blocks=need + blocks,
        block_size=16,
        max_num_batched_tokens=max(budget, isl) if blocks % 2 else budget,
        max_num_seqs=seqs,
        max_model_len=isl + osl,
        enable_chunked_prefill=True,
        enable_prefix_caching=prompts is not None,
    )
    sent = validate.AIPerfClients(rounds, warmup, turnaround)
    ours = validate.aiperf_loop(cfg, step_time, isl, osl, clients, "reference", sent, prompts)
    theirs = validate.aiperf_loop(cfg, step_time, isl, osl, clients, "native", sent, prompts)
    assert np.array_equal(ours[0], theirs[0]) and np.array_equal(ours[1], theirs[1])


def test_the_benchmarks_with_the_measured_model(measured_tables: None, dataset: Callable[[str], object]) -> None:
    dataset(validate.SILICON)
    p = next(p for p in validate.rows() if p.model == "qwen3-32b" and p.tp == 2 and p.concurrency == 32)
    a = validate.predict(p, "measured", engine="reference")
    b = validate.predict(p, "measured")
    assert (a.ttft, a.tpot) == (b.ttft, b.tpot)
    # An InferenceMAX point, its random lengths and FP8 KV cache, the same on both engines.
    q = next(p for p in validate.rows() if p.benchmark == validate.INFERENCEMAX and p.concurrency == 4)
    a = validate.predict(q, "measured", engine="reference")
    b = validate.predict(q, "measured")
    assert (a.ttft, a.tpot) == (b.ttft, b.tpot) and a.tpot > 0


def test_the_gemm_bound_finds_the_points_no_kernel_model_can_match(
    measured_tables: None, dataset: Callable[[str], object]
) -> None:
    points = [p for p in validate.rows(str(dataset(validate.SILICON))) if not p.moe]
    over = {p.id for p in points if validate.gemm_bound(p) > 1}
    # 11 of the 21 Llama-3.1-8B-FP8 points on H200 process more tokens per second than the
    # linear layers can at their best batch; every other dense point is within it
    assert len(over) == 11 and all(p.model == "llama-3.1-8b-fp8" for p in points if p.id in over)
    first = next(p for p in points if p.model == "llama-3.1-8b-fp8" and p.isl == 1000 and p.concurrency == 112)
    assert first.id in over


ONE_ROUND = validate.AIPerfClients(rounds=1)
"""AIPerf's clients with one request each: the fit's tests replay quickly."""


def test_fit_host_recovers_the_host_work_the_points_were_made_with(measured_tables: None) -> None:
    # Points whose "measured" TPOT is the measured model's own with known host terms: the fit
    # must find those terms again from the tables alone (the TPOT is linear in both at light load).
    step, request = 1.5e-3, 30e-6
    shapes = [(1024, 128, 4, 2), (1024, 512, 16, 4), (4096, 256, 8, 4), (2048, 256, 32, 8)]
    points = []
    for isl, osl, clients, tp in shapes:
        p = Point(f"p{len(points)}", "qwen3-32b", "h100-sxm", tp, "0.12.0", isl, osl, clients, 1.0, 1.0)
        model = StepTime.measured("qwen3-32b", "h100-sxm", tp, host_step=step, host_request=request)
        made = validate.predict(p, "measured", ONE_ROUND, step_time=model)
        points.append(replace(p, ttft=made.ttft, tpot=made.tpot))
    fitted = validate.fit_host(points, ONE_ROUND)
    assert math.isclose(fitted.step, step, rel_tol=0.02) and math.isclose(fitted.request, request, rel_tol=0.1)
    # The fitted model is the measured one with those terms.
    again = validate.predict(
        points[0], "fitted", ONE_ROUND, step_time=validate.step_time_for(points[0], "fitted", fitted)
    )
    assert math.isclose(again.tpot, points[0].tpot, rel_tol=0.01)
    with pytest.raises(ArgumentError, match="points"):
        validate.fit_host([])
    with pytest.raises(ArgumentError, match="host=None"):
        validate.step_time_for(points[0], "fitted")
