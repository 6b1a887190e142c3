"""SGLang's semantics where users meet it: its row of ``ENGINES`` (native and reference engines),
``simulate(semantics="sglang")``, its configuration from a model and GPU, and the command line."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import osbench as ob
from osbench import _native
from osbench.errors import ArgumentError, ArgumentTypeError
from osbench.serve import sglang
from osbench.serve.result import REQUEST_COUNTS, REQUEST_TIMES
from osbench.serve.run import STEP_FIELDS
from osbench.serve.sglang import POLICIES, EngineConfig
from osbench.serve.sglang.config import default_mem_fraction_static, pool_tokens, prefill_graph_sizes
from osbench.serve.steptime import StepTime

STEP = StepTime.linear(0.004, 5e-5, 1e-4, 1e-7)
MIB = 1 << 20


def shared(n: int, seed: int, rate: float = 20.0) -> ob.serve.Requests:
    """Poisson requests whose prompts open with one of three shared 64-token prefixes."""
    rng = np.random.default_rng(seed)
    prompt = rng.integers(70, 400, n)
    blocks = [[int(rng.integers(0, 3)), *rng.integers(100, 1 << 40, -(-int(p) // 64) - 1).tolist()] for p in prompt]
    return ob.serve.Requests(
        np.cumsum(rng.exponential(1 / rate, n)), prompt, rng.integers(1, 80, n), blocks=blocks, source_block=64
    )


def test_the_row_offers_both_engines_native_first() -> None:
    assert list(ob.serve.ENGINES) == [row[0] for row in _native.SERVE_ENGINES] == ["vllm", "sglang"]
    row = ob.serve.ENGINES["sglang"]
    assert row.follows.startswith("SGLang 0.5.23") and row.policies == POLICIES
    assert row.engines == ("native", "reference") and ob.serve.ENGINES["vllm"].engines == ("native", "reference")
    assert row.module().Config is EngineConfig
    assert row.engine() == "native" and row.engine("reference") == "reference"


def assert_same(result: ob.serve.ServeResult, run: ob.serve.run.EngineRun) -> None:
    for name in (*REQUEST_TIMES, *REQUEST_COUNTS):
        np.testing.assert_array_equal(getattr(result, name), getattr(run, name), err_msg=name)
    assert len(run.steps.start) > 0
    for name in STEP_FIELDS:
        np.testing.assert_array_equal(getattr(result.steps, name), getattr(run.steps, name), err_msg=name)


@settings(max_examples=10, deadline=None)
@given(
    seed=st.integers(0, 2**20),
    policy=st.sampled_from(POLICIES),
    pool=st.integers(900, 6000),
    page=st.sampled_from([1, 4, 16]),
    chunk=st.sampled_from([-1, 64, 256]),
    mixed=st.booleans(),
)
def test_simulate_is_the_reference_run(seed: int, policy: str, pool: int, page: int, chunk: int, mixed: bool) -> None:
    reqs = shared(30, seed)
    fields = {"schedule_policy": policy, "page_size": page, "chunked_prefill_size": chunk, "enable_mixed_chunk": mixed}
    fields["max_total_tokens"] = pool // page * page
    cfg = EngineConfig(**fields)
    try:
        result = ob.serve.simulate(reqs, semantics="sglang", step_time=STEP, **fields)
    except ArgumentError as refused:  # where SGLang itself runs out of KV (test_sglang_fidelity)
        assert "runs out of KV in a prefill" in str(refused)
        with pytest.raises(ArgumentError, match="runs out of KV in a prefill"):
            sglang.run(reqs, cfg, STEP)  # the reference refuses it too
        return
    assert result.config == cfg and result.num_blocks == cfg.num_pages
    assert_same(result, sglang.run(reqs, cfg, STEP))
    assert_same(result, ob.serve.ENGINES["sglang"].module().run(reqs, cfg, STEP, engine="reference"))


def test_closed_loop_and_record_reach_the_reference() -> None:
    reqs = shared(40, 3)
    cfg = EngineConfig(max_total_tokens=2000, schedule_policy="lpm")
    result = ob.serve.simulate(
        reqs, semantics="sglang", engine="reference", step_time=STEP, concurrency=4, record=True,
        max_total_tokens=2000, schedule_policy="lpm",
    )  # fmt: skip
    run = sglang.run(reqs, cfg, STEP, concurrency=4, record=True)
    assert_same(result, run)
    np.testing.assert_array_equal(result.arrival, run.arrival)  # latencies from when each was sent
    assert result.record is not None and len(result.record.free_blocks) == run.num_steps
    assert result.alone is None and np.isnan(result.slowdown).all()  # not given for this semantics


def test_the_pool_from_a_model_and_gpu_is_sglangs_arithmetic() -> None:
    # arg_groups/memory_hook.py on an H100 (81559 MiB), tp 1, chunk 8192: 512 + 1.5 x 8192 +
    # 1/8 x 1024 + 2 x 256 (decode graphs) + 8 x 58 (prefill graph sizes up to 8192) MiB reserved.
    assert len(prefill_graph_sizes(8192)) == 58 and prefill_graph_sizes(16) == [4, 8, 12, 16]
    fraction = default_mem_fraction_static(81559 * MIB, 8192)
    assert fraction == round((81559 - 13904) / 81559, 3) == 0.83
    assert default_mem_fraction_static(24 * 1024 * MIB, 4096) == round(
        (24576 - (512 + 6144 + 128 + 96 + 8 * 50)) / 24576, 3
    )
    assert default_mem_fraction_static(81559 * MIB, 1024, max_running_requests=4) == round((81559 - 10240) / 81559, 3)
    m, g = ob.serve.MODELS["llama-3-8b"], ob.serve.GPUS["h100"]
    result = ob.serve.simulate(shared(20, 1), semantics="sglang", model="llama-3-8b", gpu="h100", page_size=16)
    cfg = result.config
    tokens = pool_tokens(g.memory_bytes, 0.83, m.weight_bytes(), m.kv_bytes_per_token())
    assert cfg.max_total_tokens == tokens // 16 * 16 and cfg.max_total_tokens > 300_000
    assert (cfg.chunked_prefill_size, cfg.context_len) == (8192, m.max_model_len)
    assert result.num_blocks == cfg.max_total_tokens // 16
    small = ob.serve.simulate(shared(20, 1), semantics="sglang", model="qwen2.5-7b", gpu="l40s")
    assert small.config.chunked_prefill_size == 4096  # below 60 GiB
    given = ob.serve.simulate(shared(20, 1), semantics="sglang", model="llama-3-8b", gpu="h100", max_total_tokens=5000)
    assert given.config.max_total_tokens == 5000


def test_bad_input_is_refused_by_name() -> None:
    reqs = shared(5, 0)
    with pytest.raises(ArgumentTypeError, match=r"step_time=.* is not accepted by the native engine"):
        ob.serve.simulate(reqs, semantics="sglang", engine="native", step_time=lambda b: 0.01, max_total_tokens=2000)
    with pytest.raises(ArgumentError, match=r"engine='gpu' is not accepted: use one of native, reference"):
        ob.serve.simulate(reqs, semantics="sglang", engine="gpu", step_time=STEP, max_total_tokens=2000)
    with pytest.raises(
        ArgumentError, match=r"num_blocks=100 is not accepted with semantics='sglang'.*max_total_tokens"
    ):
        ob.serve.simulate(reqs, semantics="sglang", step_time=STEP, num_blocks=100)
    with pytest.raises(ArgumentTypeError, match=r"block_size=16 is not accepted: .*max_total_tokens, page_size"):
        ob.serve.simulate(reqs, semantics="sglang", step_time=STEP, max_total_tokens=2000, block_size=16)
    with pytest.raises(ArgumentError, match=r"model=None is not accepted without max_total_tokens"):
        ob.serve.simulate(reqs, semantics="sglang", step_time=STEP)
    with pytest.raises(ArgumentError, match=r"schedule_policy='sjf' is not accepted"):
        ob.serve.simulate(reqs, semantics="sglang", step_time=STEP, max_total_tokens=2000, schedule_policy="sjf")
    table = (
        r"'vllm' \(vLLM 0\.33\.0.*engines native, reference\); 'sglang' \(SGLang 0\.5\.23.*engines native, reference\)"
    )
    with pytest.raises(ArgumentError, match=r"semantics='tgi' is not accepted: it must be one of " + table):
        ob.serve.simulate(reqs, semantics="tgi", step_time=STEP)


def osbench(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "osbench", *args], capture_output=True, text=True, timeout=600)


def test_the_command_line_runs_sglang() -> None:
    args = ("--poisson", "60,5", "--system-prompts", "2,300,0.8", "--seed", "3")
    out = osbench("serve", "simulate", *args, "--semantics", "sglang", "--schedule-policy", "lpm", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    reqs = ob.serve.Requests.poisson(60, 5.0, system_prompts=ob.serve.SystemPrompts(2, 300, 0.8), seed=3)
    result = ob.serve.simulate(reqs, semantics="sglang", model="llama-3-8b", gpu="h100", schedule_policy="lpm")
    assert data["engine"] == "native" and data["config"]["schedule_policy"] == "lpm"
    assert data["summary"] == json.loads(json.dumps(result.summary().to_dict()))
    text = osbench("serve", "simulate", *args, "--semantics", "sglang", "--max-total-tokens", "60000").stdout
    assert "native engine, roofline step time: SGLang 0.5.23's scheduler, 60,000 KV tokens in pages of 1" in text


def test_the_command_line_documents_and_refuses() -> None:
    text = " ".join(osbench("serve", "simulate", "--help").stdout.split())
    assert "--semantics {vllm,sglang}" in text and "sglang: SGLang 0.5.23" in text
    for f in EngineConfig.__dataclass_fields__:
        assert "--" + f.replace("_", "-") in text, f
    for name in POLICIES:
        assert name in text
    wrong = osbench("serve", "simulate", "--poisson", "5,1", "--semantics", "sglang", "--block-size", "32")
    assert wrong.returncode != 0 and "--block-size is not accepted with --semantics sglang" in wrong.stderr
    runs = [
        osbench("serve", "simulate", "--poisson", "5,1", "--semantics", "sglang", "--engine", engine, "--json")
        for engine in ("native", "reference")
    ]
    assert all(r.returncode == 0 for r in runs), [r.stderr for r in runs]
    native, reference = (json.loads(r.stdout) for r in runs)
    assert native["summary"] == reference["summary"]
