"""osbench's reference engine against the real vLLM 0.33.0 scheduler, step by step.

vLLM is an optional peer (``make vllm-peer`` fetches its sources); without it these tests skip
with the reason. Each regime also checks that what it is about did happen (preemptions, chunks,
evictions...), so that agreement is never vacuous.
"""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from runs import TIED, TIED_CONFIG, assert_same_runs

from osbench.errors import ArgumentError
from osbench.serve import reference
from osbench.serve.config import EngineConfig
from osbench.serve.requests import Requests
from osbench.serve.run import EngineRun, Recorder
from osbench.serve.steptime import StepTime
from osbench.serve.vllm import peer as vllm_peer
from osbench.serve.vllm.peer import VLLM_POLICIES

# sjf, srpt, mlfq, priority's aging and preemption by swap are osbench's, not vLLM 0.33.0's: they
# are held to the reference (tests/serve/test_native.py), and vLLM cannot check them.
POLICIES = VLLM_POLICIES

MISSING = vllm_peer.missing_reason()
needs_vllm = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")

STEP = StepTime.linear(0.004, 5e-5, 1e-4, 1e-7)


@pytest.mark.parametrize(
    "change",
    [{"policy": "srpt"}, {"policy": "priority", "aging": 1.0}, {"preemption": "swap"}, {"kv_tiers": ("1:pcie5:lru",)}],
)
def test_the_peer_refuses_what_vllm_has_not(change: dict) -> None:
    cfg = EngineConfig(num_blocks=10, kv_block_bytes=1024, **change)
    with pytest.raises(ArgumentError, match=r"is not accepted by vLLM .*preemption by recompute only and no KV tiers"):
        vllm_peer.run(Requests([0.0], [4], [2]), cfg, STEP)


def same_as_vllm(reqs: Requests, cfg: EngineConfig) -> EngineRun:
    """Run both engines; every array equal, times included (the same arithmetic in the same
    order). Returns the reference's run."""
    ours = reference.run(reqs, cfg, STEP, record=True)
    theirs = vllm_peer.run(reqs, cfg, STEP)
    assert ours.record is not None and theirs.record is not None
    assert_same_runs(ours, theirs)
    return ours


def workload(
    n: int, seed: int, rate: float, prompt: float, output: float, prefixes: int = 0, priorities: int = 1
) -> Requests:
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
    return Requests(
        np.cumsum(rng.exponential(1 / rate, n)),
        prompt_len,
        output_len,
        blocks=blocks,
        priority=rng.integers(0, priorities, n),
        source_block=64,
    )


@needs_vllm
def test_no_pressure() -> None:
    run = same_as_vllm(workload(80, 1, rate=50, prompt=100, output=30), EngineConfig(num_blocks=2000))
    assert run.preemptions.sum() == 0 and run.steps.num_seqs.max() > 10


@needs_vllm
@pytest.mark.parametrize("policy", POLICIES)
def test_kv_pressure_with_preemptions(policy: str) -> None:
    reqs = workload(120, 2, rate=200, prompt=120, output=60, priorities=3)
    run = same_as_vllm(reqs, EngineConfig(num_blocks=80, block_size=8, max_model_len=1024, policy=policy))
    assert run.preemptions.sum() > 10


@needs_vllm
def test_a_tiny_token_budget_chunks_prompts() -> None:
    reqs = workload(60, 3, rate=100, prompt=200, output=20)
    cfg = EngineConfig(num_blocks=3000, max_num_batched_tokens=48, max_num_seqs=8, long_prefill_token_threshold=32)
    run = same_as_vllm(reqs, cfg)
    assert run.preemptions.sum() == 0 and run.steps.prefill_seqs.sum() > 2 * len(reqs)  # prompts split across steps


@needs_vllm
def test_chunked_prefill_off() -> None:
    reqs = workload(80, 4, rate=100, prompt=300, output=20)
    cfg = EngineConfig(
        num_blocks=400, max_num_batched_tokens=2048, max_num_seqs=16, max_model_len=2048, enable_chunked_prefill=False
    )
    run = same_as_vllm(reqs, cfg)
    assert run.steps.prefill_seqs.sum() == len(reqs) + run.preemptions.sum()  # every prompt whole, once a run


@needs_vllm
def test_shared_prefixes_with_eviction() -> None:
    reqs = workload(150, 5, rate=40, prompt=300, output=30, prefixes=6)
    run = same_as_vllm(reqs, EngineConfig(num_blocks=150, max_model_len=2048))
    assert run.cached_tokens.sum() > 64 * len(reqs) // 2  # most prompts find their prefix
    assert (np.diff(run.steps.blocks_cached) < 0).any()  # cached blocks were evicted


@needs_vllm
def test_watermark_and_first_chunk_admission() -> None:
    reqs = workload(100, 6, rate=150, prompt=150, output=40, prefixes=3)
    cfg = EngineConfig(
        num_blocks=120,
        max_num_batched_tokens=256,
        max_num_seqs=64,
        max_model_len=2048,
        watermark=0.1,
        scheduler_reserve_full_isl=False,
    )
    run = same_as_vllm(reqs, cfg)
    assert run.preemptions.sum() > 0


class _Enough(Exception):
    pass


def _first_steps(module, reqs: Requests, cfg: EngineConfig, n: int, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """The first ``n`` steps of ``module.run`` (the reference or the peer), and its recorder."""
    made: list[Recorder] = []

    class Stopping(Recorder):
        def __init__(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
            super().__init__(*args, **kwargs)
            made.append(self)

        def step(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
            super().step(*args, **kwargs)
            if len(self.steps) == n:
                raise _Enough

    monkeypatch.setattr(module, "Recorder", Stopping)
    with pytest.raises(_Enough):
        module.run(reqs, cfg, STEP, **({"record": True} if module is reference else {}))
    return made[0]


@needs_vllm
def test_requests_that_tie_under_priority_preempt_one_another_forever_in_vllm_too(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """vLLM preempts the first running request of the largest (priority, arrival): two requests
    that tie on both take turns resetting each other's progress, for ever. The reference stops
    such a run with an error (its LivelockGuard); without the guard it makes the same steps as
    vLLM, and neither produces a token past the first steps."""
    reqs, cfg = TIED, TIED_CONFIG
    with pytest.raises(ArgumentError, match="preempt one another forever"):
        reference.run(reqs, cfg, STEP)
    monkeypatch.setattr(reference, "QUIET_STEPS", 10**9)
    ours, theirs = (_first_steps(m, reqs, cfg, 400, monkeypatch) for m in (reference, vllm_peer))
    assert ours.steps == theirs.steps and ours.detail == theirs.detail and ours.offsets == theirs.offsets
    assert np.isnan(theirs.finish).all()  # no request ever finishes
    preempted = np.diff(theirs.offsets["preempted"])
    assert preempted[-100:].sum() > 10  # still preempting, 400 steps on


@st.composite
def small_runs(draw):  # type: ignore[no-untyped-def]
    n = draw(st.integers(1, 30))
    block_size = draw(st.sampled_from([1, 2, 3, 4, 16]))
    prompt = draw(st.lists(st.integers(1, 70), min_size=n, max_size=n))
    output = draw(st.lists(st.integers(1, 30), min_size=n, max_size=n))
    gaps = draw(st.lists(st.sampled_from([0.0, 0.001, 0.01, 0.1]), min_size=n, max_size=n))
    source = draw(st.sampled_from([1, 4, 16]))
    kinds = draw(st.integers(1, 3))
    content = [[draw(st.integers(0, kinds - 1)) for _ in range(-(-p // source))] for p in prompt]
    need = max(-(-(p + o - 1) // block_size) for p, o in zip(prompt, output))
    max_len = max(p + o for p, o in zip(prompt, output))
    chunked = draw(st.booleans())
    seqs = draw(st.integers(1, 12))
    cfg = EngineConfig(
        num_blocks=need + 1 + draw(st.integers(0, 2 * need)),
        block_size=block_size,
        max_num_batched_tokens=max(draw(st.integers(seqs, 100)), 0 if chunked else max_len),
        max_num_seqs=seqs,
        max_model_len=max_len,
        enable_chunked_prefill=chunked,
        long_prefill_token_threshold=min(draw(st.sampled_from([0, 0, 1, 5, 17])), max_len) if chunked else 0,
        enable_prefix_caching=draw(st.booleans()),
        policy=draw(st.sampled_from(POLICIES)),
        watermark=draw(st.sampled_from([0.0, 0.0, 0.05, 0.2])),
        scheduler_reserve_full_isl=draw(st.booleans()),
    )
    priority = draw(st.lists(st.integers(0, 2), min_size=n, max_size=n))
    blocks = content if draw(st.booleans()) else None
    return Requests(np.cumsum(gaps), prompt, output, blocks=blocks, priority=priority, source_block=source), cfg


@needs_vllm
@settings(max_examples=80, deadline=None)
@given(small_runs())
def test_random_small_workloads_and_configurations(run) -> None:  # type: ignore[no-untyped-def]
    try:
        same_as_vllm(*run)  # the reference runs first
    except ArgumentError as livelock:
        # Requests tied on (priority, arrival) that preempt one another forever: vLLM would never
        # end the run (test_requests_that_tie_under_priority_...); the reference stops it.
        assert "preempt one another forever" in str(livelock)
        assume(False)


# --------------------------------------------------------------------------- the peer itself


def test_without_the_sources_the_peer_says_how_to_get_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OSBENCH_PEERS_DIR", str(tmp_path))
    reason = f"vLLM 0.33.0 sources not found in {tmp_path / 'vllm-0.33.0'}: run make vllm-peer"
    assert vllm_peer.missing_reason() == reason
    with pytest.raises(FileNotFoundError, match=re.escape(reason)):
        vllm_peer.run(Requests([0], [4], [1]), EngineConfig(num_blocks=10), STEP)


def test_fetch_unpacks_only_the_sources_from_a_wheel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OSBENCH_PEERS_DIR", str(tmp_path / "peers"))
    wheel = tmp_path / "vllm-0.33.0-cp38-abi3-manylinux_2_28_x86_64.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for name in (*vllm_peer.SOURCES, "vllm/model_executor/huge.py"):
            archive.writestr(name, f"# {name}\n")
    folder = vllm_peer.fetch(str(wheel))
    assert folder == tmp_path / "peers" / "vllm-0.33.0"
    unpacked = sorted(str(p.relative_to(folder)) for p in folder.rglob("*.py"))
    assert unpacked == sorted(vllm_peer.SOURCES)
    assert (folder / "vllm/v1/core/sched/scheduler.py").read_text() == "# vllm/v1/core/sched/scheduler.py\n"
    assert not [p for p in folder.parent.iterdir() if p.name.startswith(".")]  # no staging left behind
    wrong = tmp_path / "vllm-0.32.0-py3-none-any.whl"
    wheel.rename(wrong)
    monkeypatch.setenv("OSBENCH_PEERS_DIR", str(tmp_path / "other"))
    with pytest.raises(ValueError, match=r"must be a vllm-0\.33\.0 wheel"):
        vllm_peer.fetch(str(wrong))


@needs_vllm
def test_closed_loop_clients_are_sent_the_same_way_to_vllm() -> None:
    reqs = workload(60, 7, rate=400, prompt=120, output=40, prefixes=3)
    cfg = EngineConfig(num_blocks=120, block_size=8, max_model_len=1024)
    ours = reference.run(reqs, cfg, STEP, record=True, concurrency=5)
    theirs = vllm_peer.run(reqs, cfg, STEP, concurrency=5)
    assert_same_runs(ours, theirs)
    assert int(ours.steps.num_seqs.max()) == 5 and (ours.arrival > reqs.arrival).any()
