"""Preemption by swap (:mod:`osbench.serve.vllm.swap`): a run worked by hand, the facts (an
infinitely fast link keeps every token's KV, a full host pool recomputes, the copies' time is
in the steps that make them), and bad input. Native equals reference under swap:
tests/serve/test_native.py."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from runs import assert_same_runs

import osbench as ob
from osbench.errors import ArgumentError, ArgumentTypeError
from osbench.serve import lecture, native, reference
from osbench.serve.config import EngineConfig
from osbench.serve.requests import Requests
from osbench.serve.steptime import StepTime
from osbench.serve.vllm.swap import LINKS

ONE_SECOND = StepTime.linear(1.0, 0.0, 0.0, 0.0)
LINEAR = StepTime.linear(0.0037, 1.3e-5, 7.1e-4, 3.3e-7)


def _two_requests(**swap: object) -> EngineConfig:
    """Four usable blocks of 4 tokens, two 8-token prompts: the second is preempted in step 1."""
    return EngineConfig(
        num_blocks=5,
        block_size=4,
        max_num_batched_tokens=16,
        max_num_seqs=2,
        max_model_len=32,
        enable_prefix_caching=False,
        scheduler_reserve_full_isl=False,
        **swap,  # type: ignore[arg-type]
    )


@pytest.mark.parametrize("engine", [reference.run, native.run])
def test_a_swapped_request_comes_back_where_it_stopped(engine) -> None:  # type: ignore[no-untyped-def]
    """Step 0 prefills both prompts (2 blocks each, the pool full). In step 1 request 0's ninth
    token needs a block: fcfs preempts the last running request, 1, whose 8 computed tokens fill
    2 blocks of 16 bytes: 32 bytes out at 64 B/s, 0.5 s more in that step. Request 0 finishes at
    the end of step 5 (its 6 tokens); in step 6 request 1 comes back, its 32 bytes in (0.5 s),
    and decodes its second token at once, where recompute prefills its 9 tokens again."""
    reqs = Requests([0.0, 0.0], [8, 8], [6, 2])
    swap = engine(reqs, _two_requests(preemption="swap", swap_space=64 / 2**30, kv_block_bytes=16, swap_bandwidth=64.0), ONE_SECOND, record=True)  # fmt: skip
    again = engine(reqs, _two_requests(), ONE_SECOND, record=True)
    assert swap.steps.swap_out_bytes.tolist() == [0, 32, 0, 0, 0, 0, 0]
    assert swap.steps.swap_in_bytes.tolist() == [0, 0, 0, 0, 0, 0, 32]
    assert swap.steps.duration.tolist() == [1.0, 1.5, 1.0, 1.0, 1.0, 1.0, 1.5]
    assert swap.steps.swap_time.tolist() == [0.0, 0.5, 0.0, 0.0, 0.0, 0.0, 0.5]
    assert swap.record.step(6)["scheduled"] == [(1, 1)] and swap.steps.prefill_tokens[6] == 0
    assert (swap.finish.tolist(), swap.preemptions.tolist()) == ([6.5, 8.0], [0, 1])
    assert swap.steps.recomputed_tokens.sum() == 0
    # By recompute, request 1's 8 tokens are computed again, with its ninth, in one prefill.
    assert again.record.step(6)["scheduled"] == [(1, 9)] and again.steps.recomputed_tokens.tolist()[6] == 8
    assert again.finish.tolist() == [6.0, 7.0] and again.steps.swap_out_bytes.sum() == 0


def _pressure(n: int = 150, seed: int = 3) -> Requests:
    rng = np.random.default_rng(seed)
    return Requests(np.cumsum(rng.exponential(0.02, n)), rng.integers(1, 300, n), rng.integers(1, 200, n))


def _config(**change: object) -> EngineConfig:
    base = EngineConfig(
        num_blocks=90,
        block_size=8,
        max_num_batched_tokens=512,
        max_num_seqs=12,
        max_model_len=512,
        enable_chunked_prefill=False,
        enable_prefix_caching=False,
        kv_block_bytes=2**20,
    )
    return dataclasses.replace(base, **change)  # type: ignore[arg-type]


@pytest.mark.parametrize("policy", ob.serve.config.POLICIES)
def test_swap_over_an_infinitely_fast_link_keeps_every_tokens_kv(policy: str) -> None:
    """What a request that keeps its KV means in vLLM's loop: preempted, it leaves the running
    list and frees its blocks, and readmitted it goes on from the tokens it had computed, with
    no copy time. With an infinite bandwidth and a host pool nothing fills, swap is that: no
    token is computed twice (every token's KV once, as in a run with blocks enough that nothing
    is preempted: the same scheduled and prefill tokens), and every step takes its batch's time
    alone. Recompute, on the same pool, computes tokens again."""
    reqs = _pressure()
    keeps = _config(policy=policy, preemption="swap", swap_space=10.0, swap_bandwidth=np.inf)
    keep = reference.run(reqs, keeps, LINEAR)
    assert_same_runs(keep, native.run(reqs, keeps, LINEAR))
    roomy = reference.run(reqs, _config(policy=policy, num_blocks=10**6), LINEAR)
    recompute = reference.run(reqs, _config(policy=policy), LINEAR)
    steps = keep.steps
    assert keep.preemptions.sum() > 0 and roomy.preemptions.sum() == 0 and steps.swap_in_bytes.sum() > 0
    assert steps.recomputed_tokens.sum() == 0 and steps.swap_time.sum() == 0
    scheduled = [int((r.steps.prefill_tokens + r.steps.decode_seqs).sum()) for r in (keep, roomy)]
    assert scheduled == [int((reqs.prompt_len + reqs.output_len - 1).sum())] * 2
    assert steps.prefill_tokens.sum() == roomy.steps.prefill_tokens.sum()
    np.testing.assert_array_equal(steps.duration, [LINEAR(steps.batch(j)) for j in range(len(steps))])
    assert recompute.steps.recomputed_tokens.sum() > 0
    assert recompute.steps.prefill_tokens.sum() > roomy.steps.prefill_tokens.sum()


@pytest.mark.parametrize("engine", [reference.run, native.run])
def test_a_full_host_pool_falls_back_to_recompute(engine) -> None:  # type: ignore[no-untyped-def]
    """A host pool of 0 blocks, or fewer than any preempted request holds, recomputes every
    preempted request: the run is recompute's, array for array. One that holds a few swaps
    those it can and recomputes the others."""
    reqs = _pressure()
    recompute = engine(reqs, _config(), LINEAR, record=True)
    for space in (0.0, 0.5 / 1024):  # none, and half a block of 1 MiB
        assert_same_runs(engine(reqs, _config(preemption="swap", swap_space=space), LINEAR, record=True), recompute)
    some = engine(reqs, _config(preemption="swap", swap_space=8 / 1024), LINEAR, record=True)
    assert some.steps.swap_out_bytes.sum() > 0 and 0 < some.steps.recomputed_tokens.sum()
    assert some.steps.recomputed_tokens.sum() < recompute.steps.recomputed_tokens.sum()
    # The host pool never holds more than its 8 blocks.
    held = np.cumsum(some.steps.swap_out_bytes - some.steps.swap_in_bytes) // 2**20
    assert held.max() <= 8 and held.min() >= 0 and held[-1] == 0


def test_the_copies_time_is_the_bytes_over_the_links_bandwidth() -> None:
    """Arrivals all at once: the schedule does not depend on time, so a slower link changes
    only the steps that copy, each by its bytes over the bandwidth; the presets differ by their
    rated figures."""
    some = _pressure()
    reqs = Requests(np.zeros(len(some)), some.prompt_len, some.output_len)
    fast = native.run(reqs, _config(preemption="swap", swap_space=10.0, swap_bandwidth=np.inf), LINEAR, record=True)
    for link in LINKS.values():
        slow = native.run(reqs, _config(preemption="swap", swap_space=10.0, link=link.name), LINEAR, record=True)
        for name in ("scheduled_request", "scheduled_tokens", "preempted_request", "admitted_request"):
            np.testing.assert_array_equal(getattr(slow.record, name), getattr(fast.record, name))
        copied = slow.steps.swap_out_bytes + slow.steps.swap_in_bytes
        np.testing.assert_array_equal(slow.steps.swap_time, copied / link.bandwidth)
        np.testing.assert_array_equal(slow.steps.duration, fast.steps.duration + slow.steps.swap_time)
        assert slow.steps.swap_time.sum() > 0
    assert LINKS["pcie4"].bandwidth < LINKS["pcie5"].bandwidth < LINKS["nvlink-c2c"].bandwidth
    assert round(LINKS["pcie5"].bandwidth / 1e9, 1) == 63.0 and LINKS["nvlink-c2c"].bandwidth == 450e9


def test_simulate_sizes_the_host_pool_from_the_model() -> None:
    """``kv_block_bytes`` from the model (one GPU's share under tensor parallelism) and vLLM
    v0's ``swap_space`` of 4 GiB per GPU: Llama-3-8B's 16-token block is 2 MiB, 2048 of them."""
    reqs = _pressure(60)
    r = ob.serve.simulate(reqs, model="llama-3-8b", gpu="h100", num_blocks=200, preemption="swap")
    assert r.config.kv_block_bytes == 16 * ob.serve.MODELS["llama-3-8b"].kv_bytes_per_token() == 2**21
    assert r.config.swap.host_blocks == 2048 and r.config.swap.bandwidth == LINKS["pcie5"].bandwidth
    s = r.summary()
    assert s.preemptions > 0 and s.swapped_out_bytes == s.swapped_in_bytes > 0 and s.recomputed_tokens == 0
    assert s.swap_time == pytest.approx(s.swapped_out_bytes * 2 / LINKS["pcie5"].bandwidth)
    on_two = ob.serve.simulate(reqs, model="llama-3-70b", gpu="h100", tp=2, num_blocks=200, preemption="swap")
    assert on_two.config.kv_block_bytes == 16 * ob.serve.MODELS["llama-3-70b"].kv_bytes_per_token(2)


def test_swap_runs_behind_a_router_on_either_engine() -> None:
    reqs = _pressure(120)
    kwargs = {"model": "qwen2.5-7b", "gpu": "l40s", "num_blocks": 120, "preemption": "swap", "swap_space": 0.05}
    a = ob.serve.simulate_cluster(reqs, replicas=2, router="least-tokens", engine="reference", **kwargs)
    b = ob.serve.simulate_cluster(reqs, replicas=2, router="least-tokens", **kwargs)
    assert a.merged.summary() == b.merged.summary() and a.merged.summary().swapped_in_bytes > 0


@pytest.mark.parametrize(
    ("change", "error", "match"),
    [
        ({"preemption": "drop"}, ArgumentError, "preemption='drop' is not accepted: use one of recompute, swap"),
        ({"swap_space": -1.0}, ArgumentError, "swap_space=-1.0 is not accepted: it must be a finite number >= 0"),
        ({"swap_space": float("inf")}, ArgumentError, "swap_space=inf is not accepted"),
        ({"link": "usb4"}, ArgumentError, "link='usb4' is not accepted: use one of pcie5, pcie4, nvlink-c2c"),
        ({"swap_bandwidth": -1.0}, ArgumentError, "swap_bandwidth=-1.0 is not accepted: .* bytes per second >= 1"),
        ({"swap_bandwidth": 0}, ArgumentError, "swap_bandwidth=0 is not accepted"),
        ({"swap_bandwidth": float("nan")}, ArgumentError, "swap_bandwidth=nan is not accepted"),
        ({"swap_bandwidth": "fast"}, ArgumentTypeError, "swap_bandwidth='fast' is not accepted"),
        ({"kv_block_bytes": -1}, ArgumentError, "kv_block_bytes=-1 is not accepted"),
        (
            {"preemption": "swap", "kv_block_bytes": 0},
            ArgumentError,
            "kv_block_bytes=0 is not accepted with preemption='swap'",
        ),
    ],
)
def test_bad_swap_options_are_refused_with_the_argument_named(change: dict, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        EngineConfig(num_blocks=10, **{"kv_block_bytes": 1024, **change})
    if "kv_block_bytes" not in change:  # simulate takes them as keywords, with the same errors
        with pytest.raises(error, match=match):
            ob.serve.simulate(Requests([0.0], [10], [2]), model="llama-3-8b", gpu="h100", **change)


@pytest.mark.parametrize("caching", [False, True])
def test_recomputed_tokens_are_the_work_a_recompute_throws_away(caching: bool) -> None:
    """Without shared content, every token a request computes is computed once, or again after a
    preemption by recompute (less what its own cached blocks give back): the recomputed tokens
    are what the steps computed beyond the tokens the requests needed (the lecture's
    ``recomputed_share``, table 06-2)."""
    reqs = _pressure()
    r = ob.serve.simulate(reqs, step_time=LINEAR, **dataclasses.asdict(_config(enable_prefix_caching=caching, enable_chunked_prefill=True, max_num_batched_tokens=96)))  # fmt: skip
    needed = int((reqs.prompt_len - r.cached_tokens).sum() + (reqs.output_len - 1).sum())
    computed = int(r.steps.prefill_tokens.sum() + r.steps.decode_seqs.sum())
    assert r.preemptions.sum() > 0 and r.steps.recomputed_tokens.sum() == computed - needed > 0
    assert lecture.recomputed_share(r) == (computed - needed) / needed
