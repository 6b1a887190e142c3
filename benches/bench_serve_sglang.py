"""SGLang semantics benchmarks: one group, one row per engine or peer, every row serving the
same requests with results asserted equal to the reference's.

- **KV pressure**: the workload of ``bench_serve.py``'s KV pressure group (3,000 requests,
  Poisson at 20/s, lognormal prompts opening with one of 20 shared 512-token prefixes, lognormal
  outputs, a linear step time) on SGLang 0.5.23's scheduler with a 48,000-token pool (the
  3,000 blocks of 16 tokens of that group), ``lpm``. Rows: the reference, and SGLang's own
  scheduling code under the fidelity harness (``make sglang-peer``).

There is no native row yet: the semantics has only its reference engine. Steps per second are
in ``extra_info``. Under ``--benchmark-disable`` (``make test``) everything runs once on small
inputs.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from osbench import datasets
from osbench.serve import simulate
from osbench.serve.requests import Requests
from osbench.serve.result import ServeResult
from osbench.serve.run import EngineRun
from osbench.serve.sglang import EngineConfig, native, run
from osbench.serve.sglang import peer as sglang_peer
from osbench.serve.steptime import StepTime

STEP = StepTime.linear(0.005, 6e-5, 1e-4, 2e-7)


@pytest.fixture(scope="module")
def pressure(full_size: bool) -> tuple[Requests, EngineConfig, EngineRun]:
    n = 3000 if full_size else 150
    cfg = EngineConfig(max_total_tokens=48000 if full_size else 4000, schedule_policy="lpm")
    rng = np.random.default_rng(7)
    prompt = np.clip(rng.lognormal(6.0, 0.8, n).astype(np.int64), 16, 3000)
    output = np.clip(rng.lognormal(5.0, 0.8, n).astype(np.int64), 1, 900)
    blocks = [[int(rng.integers(0, 20)), *rng.integers(1000, 1 << 40, -(-int(p) // 512) - 1).tolist()] for p in prompt]
    reqs = Requests(np.cumsum(rng.exponential(1 / 20, n)), prompt, output, blocks=blocks, source_block=512)
    return reqs, cfg, run(reqs, cfg, STEP)


@pytest.mark.parametrize("row", ["native", "reference", "sglang"])
def test_kv_pressure(benchmark: Any, row: str, pressure: tuple[Requests, EngineConfig, EngineRun]) -> None:
    benchmark.group = "serve, SGLang semantics: 3k requests, shared prefixes, KV pressure"
    reqs, cfg, expected = pressure
    if row == "sglang":
        reason = sglang_peer.missing_reason()
        if reason is not None:
            pytest.skip(reason)
        result = benchmark.pedantic(lambda: sglang_peer.run(reqs, cfg, STEP), rounds=1, iterations=1)
    elif row == "native":
        result = benchmark.pedantic(lambda: native.run(reqs, cfg, STEP), rounds=5, iterations=1)
    else:
        result = benchmark.pedantic(lambda: run(reqs, cfg, STEP), rounds=1, iterations=1)
    assert result.num_steps == expected.num_steps
    for name in ("finish", "first_token", "preemptions", "cached_tokens"):
        np.testing.assert_array_equal(getattr(result, name), getattr(expected, name), err_msg=name)
    assert expected.cached_tokens.sum() > 0
    benchmark.extra_info["steps"] = result.num_steps
    if benchmark.stats:
        benchmark.extra_info["steps_per_s"] = result.num_steps / benchmark.stats.stats.median


AZURE = {"semantics": "sglang", "model": "llama-3-8b", "gpu": "h100"}


@pytest.fixture(scope="module")
def azure(full_size: bool) -> tuple[Requests, ServeResult]:
    path, reason = datasets.try_fetch("azure-conv-2023")
    if path is None:
        pytest.skip(reason)
    reqs = Requests.read("azure-conv-2023")
    reqs = reqs[(reqs.prompt_len + reqs.output_len) <= 8192]  # Llama-3-8B's context
    if not full_size:
        reqs = reqs[:300]
    return reqs, simulate(reqs, engine="reference", **AZURE)


@pytest.mark.parametrize("row", ["native", "reference"])
def test_azure_conversation(benchmark: Any, row: str, azure: tuple[Requests, ServeResult]) -> None:
    """End to end: ``simulate()`` from the requests to the summary, on each engine."""
    benchmark.group = "serve, SGLang semantics: Azure 2023 conversation trace, real rate, Llama-3-8B on H100"
    reqs, expected = azure

    def serve() -> ServeResult:
        result = simulate(reqs, engine=row, **AZURE)
        result.summary(slo_ttft=0.5, slo_tpot=0.05)
        return result

    result = benchmark.pedantic(serve, rounds=1 if row == "reference" else 5, iterations=1, warmup_rounds=0)
    assert result.summary() == expected.summary()
    np.testing.assert_array_equal(result.finish, expected.finish)
    benchmark.extra_info["steps"] = len(result.steps)
    if benchmark.stats:
        benchmark.extra_info["steps_per_s"] = len(result.steps) / benchmark.stats.stats.median
