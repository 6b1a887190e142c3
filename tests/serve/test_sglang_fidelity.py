"""osbench's SGLang semantics against SGLang 0.5.23's own scheduling code, step by step.

SGLang is an optional peer (``make sglang-peer`` fetches its sources); without it these tests
skip with the reason. Every array of the runs is compared (which requests prefill or decode,
their tokens, retractions, admissions and prefix hits, free tokens, times); each regime also
checks that what it is about did happen, so that agreement is never vacuous.
"""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from runs import assert_same_runs

from osbench.errors import ArgumentError
from osbench.serve.requests import Requests
from osbench.serve.run import EngineRun
from osbench.serve.sglang import POLICIES, EngineConfig, run
from osbench.serve.sglang import peer as sglang_peer
from osbench.serve.steptime import StepTime

MISSING = sglang_peer.missing_reason()
needs_sglang = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")

STEP = StepTime.linear(0.004, 5e-5, 1e-4, 1e-7)


def same_as_sglang(reqs: Requests, cfg: EngineConfig, concurrency: int | None = None) -> EngineRun:
    """Run both; every array equal, times included. Returns the reference's run."""
    ours = run(reqs, cfg, STEP, record=True, concurrency=concurrency)
    theirs = sglang_peer.run(reqs, cfg, STEP, concurrency=concurrency)
    assert_same_runs(ours, theirs)
    return ours


def workload(n: int, seed: int, rate: float, prompt: float, output: float, prefixes: int = 0) -> Requests:
    """Poisson arrivals, lognormal lengths; with ``prefixes``, each prompt opens with one of that
    many shared 64-token prefixes, then content of its own."""
    rng = np.random.default_rng(seed)
    prompt_len = np.clip(rng.lognormal(np.log(prompt), 0.6, n), 1, 4 * prompt).astype(np.int64)
    output_len = np.clip(rng.lognormal(np.log(output), 0.6, n), 1, 4 * output).astype(np.int64)
    blocks = None
    if prefixes:
        blocks = [
            [int(rng.integers(0, prefixes)), *rng.integers(100, 1 << 40, -(-int(p) // 64) - 1).tolist()]
            for p in prompt_len
        ]
    return Requests(np.cumsum(rng.exponential(1 / rate, n)), prompt_len, output_len, blocks=blocks, source_block=64)


@needs_sglang
def test_no_pressure() -> None:
    run_ = same_as_sglang(workload(80, 1, rate=50, prompt=100, output=30), EngineConfig(max_total_tokens=200000))
    assert run_.preemptions.sum() == 0 and run_.steps.num_seqs.max() > 10


@needs_sglang
def test_decode_memory_pressure_with_retractions() -> None:
    reqs = workload(120, 2, rate=400, prompt=120, output=200, prefixes=3)
    run_ = same_as_sglang(reqs, EngineConfig(max_total_tokens=3000, schedule_conservativeness=0.2))
    assert run_.preemptions.sum() > 3


@needs_sglang
@pytest.mark.parametrize("mixed", [False, True])
def test_chunked_prefill_of_long_prompts(mixed: bool) -> None:
    reqs = workload(60, 3, rate=100, prompt=600, output=20)
    cfg = EngineConfig(
        max_total_tokens=100000, chunked_prefill_size=256, max_prefill_tokens=512, enable_mixed_chunk=mixed
    )
    run_ = same_as_sglang(reqs, cfg)
    assert run_.steps.prefill_seqs.sum() > 2 * len(reqs)  # prompts split across steps
    if mixed:
        assert ((run_.steps.prefill_seqs > 0) & (run_.steps.decode_seqs > 0)).any()


@needs_sglang
@pytest.mark.parametrize("policy", POLICIES)
def test_shared_prefixes_under_each_policy(policy: str) -> None:
    reqs = workload(150, 5, rate=400, prompt=300, output=20, prefixes=8)
    run_ = same_as_sglang(reqs, EngineConfig(max_total_tokens=5000, schedule_policy=policy, random_seed=3))
    assert run_.cached_tokens.sum() > 64 * len(reqs) // 3  # prompts find their prefix
    assert (np.diff(run_.steps.blocks_cached) < 0).any()  # the tree evicted


@needs_sglang
def test_lpm_above_128_waiting() -> None:
    reqs = workload(200, 4, rate=1e9, prompt=100, output=5, prefixes=4)
    run_ = same_as_sglang(reqs, EngineConfig(max_total_tokens=50000, max_running_requests=16, schedule_policy="lpm"))
    assert run_.steps.num_waiting.max() > 128


@needs_sglang
def test_closed_loop_clients() -> None:
    reqs = workload(60, 7, rate=400, prompt=120, output=40, prefixes=3)
    run_ = same_as_sglang(reqs, EngineConfig(max_total_tokens=2000), concurrency=5)
    assert int(run_.steps.num_seqs.max()) == 5


@st.composite
def small_runs(draw):  # type: ignore[no-untyped-def]
    n = draw(st.integers(1, 30))
    prompt = draw(st.lists(st.integers(1, 120), min_size=n, max_size=n))
    output = draw(st.lists(st.integers(1, 40), min_size=n, max_size=n))
    gaps = draw(st.lists(st.sampled_from([0.0, 0.001, 0.01, 0.1]), min_size=n, max_size=n))
    source = draw(st.sampled_from([1, 4, 16]))
    kinds = draw(st.integers(1, 3))
    content = [[draw(st.integers(0, kinds - 1)) for _ in range(-(-p // source))] for p in prompt]
    need = max(p + o for p, o in zip(prompt, output)) + 2
    cfg = EngineConfig(
        max_total_tokens=need + draw(st.integers(0, 4 * need)),
        schedule_policy=draw(st.sampled_from(POLICIES)),
        max_running_requests=draw(st.integers(1, 12)),
        max_prefill_tokens=draw(st.integers(1, 300)),
        chunked_prefill_size=draw(st.sampled_from([-1, 8, 33, 128])),
        schedule_conservativeness=draw(st.sampled_from([0.1, 0.5, 1.0, 3.0])),
        enable_mixed_chunk=draw(st.booleans()),
        random_seed=draw(st.integers(0, 3)),
    )
    blocks = content if draw(st.booleans()) else None
    return Requests(np.cumsum(gaps), prompt, output, blocks=blocks, source_block=source), cfg


@needs_sglang
@settings(max_examples=60, deadline=None)
@given(small_runs())
def test_random_small_workloads_and_configurations(case) -> None:  # type: ignore[no-untyped-def]
    same_as_sglang(*case)


# --------------------------------------------------------------------------- the peer itself


def test_without_the_sources_the_peer_says_how_to_get_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OSBENCH_PEERS_DIR", str(tmp_path))
    reason = f"SGLang 0.5.23 sources not found in {tmp_path / 'sglang-0.5.23'}: run make sglang-peer"
    assert sglang_peer.missing_reason() == reason
    with pytest.raises(FileNotFoundError, match=re.escape(reason)):
        sglang_peer.run(Requests([0], [4], [1]), EngineConfig(max_total_tokens=100), STEP)


def test_fetch_unpacks_only_the_sources_from_a_wheel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OSBENCH_PEERS_DIR", str(tmp_path / "peers"))
    wheel = tmp_path / "sglang-0.5.23-cp311-cp311-manylinux_2_34_x86_64.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for name in (*sglang_peer.SOURCES, "sglang/srt/model_executor/huge.py"):
            archive.writestr(name, f"# {name}\n")
    folder = sglang_peer.fetch(str(wheel))
    assert folder == tmp_path / "peers" / "sglang-0.5.23"
    unpacked = sorted(str(p.relative_to(folder)) for p in folder.rglob("*.py"))
    assert unpacked == sorted(sglang_peer.SOURCES)


def test_the_peer_refuses_pages_larger_than_a_token() -> None:
    with pytest.raises(ArgumentError, match="page_size=16 is not accepted by the SGLang peer"):
        sglang_peer.run(Requests([0], [4], [1]), EngineConfig(max_total_tokens=128, page_size=16), STEP)
