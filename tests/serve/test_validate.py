"""The validation harness: the silicon rows it replays, the closed-loop clients, the MAPE table."""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

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
