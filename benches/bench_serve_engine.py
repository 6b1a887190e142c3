"""Serving engine benchmarks: one group per workload, one row per engine or peer.

- 3,000 requests: Poisson arrivals at 20/s, lognormal prompts (median ~400 tokens) opening with
  one of 20 shared 512-token prefixes, lognormal outputs (median ~150 tokens), vLLM 0.33.0's
  default online-server configuration with 3,000 blocks of 16 tokens (KV pressure: ~1,600
  preemptions, ~60% of prompt tokens from the prefix cache), a linear step-time model. Rows: the
  reference engine and the real vLLM scheduler under the fidelity harness (``make vllm-peer``).
  Steps/s are in ``extra_info``; the native engine is to run at least 20 times vLLM's steps/s.

Under ``--benchmark-disable`` (``make test``) everything runs once on 150 requests.
"""

from __future__ import annotations

import numpy as np
import pytest

from osbench import _native
from osbench.serve import reference, vllm_peer
from osbench.serve.config import EngineConfig
from osbench.serve.requests import Requests
from osbench.serve.steptime import StepTime

GROUP = "serve engine (3k requests, shared prefixes, KV pressure)"
STEP = StepTime.linear(0.005, 6e-5, 1e-4, 2e-7)
CONFIG = EngineConfig(num_blocks=3000)


def _full(request: pytest.FixtureRequest) -> bool:
    full = not request.config.getoption("benchmark_disable", default=False)
    if full and _native.BUILD_PROFILE != "release":
        pytest.exit("refusing to benchmark a debug build of osbench._native", returncode=2)
    return full


@pytest.fixture(scope="module")
def workload(request: pytest.FixtureRequest) -> Requests:
    n = 3000 if _full(request) else 150
    rng = np.random.default_rng(7)
    prompt = np.clip(rng.lognormal(6.0, 0.8, n).astype(np.int64), 16, 4000)
    output = np.clip(rng.lognormal(5.0, 0.8, n).astype(np.int64), 1, 1000)
    blocks = [[int(rng.integers(0, 20)), *rng.integers(1000, 1 << 40, -(-int(p) // 512) - 1).tolist()] for p in prompt]
    return Requests(np.cumsum(rng.exponential(1 / 20, n)), prompt, output, blocks=blocks, source_block=512)


def _steps_per_s(benchmark, steps: int) -> None:  # type: ignore[no-untyped-def]
    benchmark.extra_info["steps"] = steps
    if benchmark.stats:
        benchmark.extra_info["steps_per_s"] = steps / benchmark.stats.stats.mean


def test_reference(benchmark, workload):  # type: ignore[no-untyped-def]
    benchmark.group = GROUP
    run = benchmark.pedantic(reference.run, args=(workload, CONFIG, STEP), rounds=1, iterations=1)
    assert np.isfinite(run.finish).all()
    _steps_per_s(benchmark, run.num_steps)


def test_vllm(benchmark, workload):  # type: ignore[no-untyped-def]
    reason = vllm_peer.missing_reason()
    if reason is not None:
        pytest.skip(reason)
    benchmark.group = GROUP
    run = benchmark.pedantic(vllm_peer.run, args=(workload, CONFIG, STEP), rounds=1, iterations=1)
    assert np.isfinite(run.finish).all()
    _steps_per_s(benchmark, run.num_steps)
