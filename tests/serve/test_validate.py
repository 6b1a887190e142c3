"""The validation harness: the silicon rows it replays, the closed-loop clients, the MAPE table."""

from __future__ import annotations

import math
from typing import Any, Callable, Optional

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from osbench.errors import ArgumentError, ArgumentTypeError
from osbench.serve import StepTime, validate
from osbench.serve.config import EngineConfig
from osbench.serve.validate import Point, Prediction


def test_closed_loop_one_client_waits_for_nothing() -> None:
    # One client, a linear step time: each request is prefilled in one step, then decodes alone.
    t = StepTime.linear(0.01, 1e-5, 1e-3, 0.0)
    ttft, tpot = validate.closed_loop(EngineConfig(num_blocks=1000, enable_prefix_caching=False), t, 100, 10, 1, 5)
    assert len(ttft) == 5  # the warm-up request is not among them
    assert np.allclose(ttft, 0.01 + 100 * 1e-5) and np.allclose(tpot, 0.01 + 1e-3)


def test_closed_loop_keeps_the_clients_busy() -> None:
    # Four clients, eight requests: the first four start together, each next one when one finishes.
    t = StepTime.linear(0.01, 1e-5, 1e-3, 0.0)
    cfg = EngineConfig(num_blocks=1000, enable_prefix_caching=False)
    ttft, tpot = validate.closed_loop(cfg, t, 64, 8, 4, 8, warmup=False)
    assert len(ttft) == 8 and np.all(ttft > 0) and np.all(tpot > 0)
    assert math.isclose(ttft[0], 0.01 + 4 * 64 * 1e-5)  # all four prompts in the first step: lockstep
    # With the warm-up, the four clients' measured requests arrive one by one, spread over a lifetime.
    ttft, _ = validate.closed_loop(cfg, t, 64, 8, 4, 8)
    assert len(ttft) == 8 and max(ttft) < 0.01 + 2 * 64 * 1e-5 + 3 * 1e-3


def test_a_prompt_pool_hits_the_prefix_cache() -> None:
    # One prompt of 100 tokens sent again and again: with the prefix cache each repeat computes only
    # its last partial block (100 = 6 blocks of 16 + 4), the first send is not measured.
    t = StepTime.linear(0.01, 1e-5, 1e-3, 0.0)
    cached = EngineConfig(num_blocks=1000, enable_prefix_caching=True)
    ttft, tpot = validate.closed_loop(cached, t, 100, 10, 1, 5, prompts=1)
    assert len(ttft) == 5 and np.allclose(ttft, 0.01 + 4 * 1e-5) and np.allclose(tpot, 0.01 + 1e-3)
    # Without the cache, or with every prompt distinct, every prompt is computed in full.
    plain = EngineConfig(num_blocks=1000, enable_prefix_caching=False)
    for cfg, prompts in ((plain, 1), (cached, None)):
        ttft, _ = validate.closed_loop(cfg, t, 100, 10, 1, 5, prompts=prompts)
        assert np.allclose(ttft, 0.01 + 100 * 1e-5)
    # A pool of three: the first three requests meet their prompt for the first time and are not
    # measured, every later one repeats one.
    ttft, _ = validate.closed_loop(cached, t, 100, 10, 1, 6, prompts=3)
    assert len(ttft) == 6 and np.allclose(ttft, 0.01 + 4 * 1e-5)


@pytest.mark.parametrize("prompts", [0, -1, 2.5, "100"])
def test_a_prompt_pool_must_be_a_positive_count(prompts: object) -> None:
    cfg = EngineConfig(num_blocks=1000, enable_prefix_caching=True)
    with pytest.raises((ArgumentError, ArgumentTypeError), match="prompts"):
        validate.closed_loop(cfg, StepTime.linear(0.01, 1e-5, 1e-3, 0.0), 100, 10, 1, 5, prompts=prompts)  # type: ignore[arg-type]


def test_summary_groups_and_mape() -> None:
    p = Point("x", "llama-3.1-8b-fp8", "h200", 1, "0.12.0", 1000, 100, 8, 0.1, 0.01)
    preds = [Prediction(p, "measured", 0.11, 0.009), Prediction(p, "measured", 0.09, 0.011)]
    rows = validate.summary(preds)
    overall = next(r for r in rows if r["gpu"] == "all")
    assert (
        overall["points"] == 2 and math.isclose(overall["ttft_mape"], 10.0) and math.isclose(overall["tpot_mape"], 10.0)
    )
    assert overall["kind"] == "dense" and validate.mape([]) != validate.mape([])  # NaN when empty


def test_rows_of_the_silicon_sample(dataset: Callable[[str], object]) -> None:
    points = validate.rows(str(dataset(validate.SILICON)))
    dense = [p for p in points if not p.moe]
    # the issue's ~220 dense vLLM points on H100 and H200, and the MoE ones reported beside
    assert len(dense) == 219 and {p.gpu for p in dense} == {"h100-sxm", "h200"}
    assert {p.model for p in dense} == {"qwen3-32b", "qwen3-32b-fp8", "llama-3.1-70b-fp8", "llama-3.1-8b-fp8"}
    assert any(p.moe for p in points)
    first = next(
        p for p in points if p.id.startswith("qwen_qwen3_32b_qwen_qwen3_32b_h100_sxm_vllm_agg_1024x128_c8_tp2")
    )
    assert (first.isl, first.osl, first.concurrency, first.tp) == (1024, 128, 8, 2)
    assert math.isclose(first.ttft, 0.154248, rel_tol=1e-3) and first.version == "0.12.0"


@settings(max_examples=60, deadline=None)
@given(
    isl=st.integers(1, 300),
    osl=st.integers(1, 40),
    clients=st.integers(1, 12),
    waves=st.integers(1, 3),
    warmup=st.booleans(),
    budget=st.sampled_from([16, 64, 512]),
    seqs=st.integers(1, 16),
    blocks=st.integers(0, 60),
    prompts=st.none() | st.integers(1, 8),
    step_time=st.sampled_from(
        [StepTime.linear(0.0031, 1.3e-5, 7.1e-4, 3.3e-7), StepTime.roofline("qwen3-32b", "h100", tp=2)]
    ),
)
def test_the_closed_loop_on_both_engines(
    isl: int,
    osl: int,
    clients: int,
    waves: int,
    warmup: bool,
    budget: int,
    seqs: int,
    blocks: int,
    prompts: Optional[int],
    step_time: StepTime,
) -> None:
    """The clients on the native engine and on the reference one: equal to the last bit, send
    times and all, preemptions included (a small pool), and prefix-cache hits where the clients
    draw from a pool of prompts."""
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
    requests = waves * clients
    kw: dict[str, Any] = {"warmup": warmup, "prompts": prompts}
    ours = validate.closed_loop(cfg, step_time, isl, osl, clients, requests, engine="reference", **kw)
    theirs = validate.closed_loop(cfg, step_time, isl, osl, clients, requests, **kw)
    assert np.array_equal(ours[0], theirs[0]) and np.array_equal(ours[1], theirs[1])


def test_the_closed_loop_with_the_measured_model(measured_tables: None, dataset: Callable[[str], object]) -> None:
    dataset(validate.SILICON)
    p = next(p for p in validate.rows() if p.model == "qwen3-32b" and p.tp == 2 and p.concurrency == 32)
    a = validate.predict(p, "measured", engine="reference")
    b = validate.predict(p, "measured")
    assert (a.ttft, a.tpot) == (b.ttft, b.tpot)


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
