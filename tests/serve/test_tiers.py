"""KV tiers below vLLM's GPU prefix cache (:mod:`osbench.serve.vllm.tiers`): the native engine
equals the reference step for step with tiers, the rules' facts hold on runs counted by hand,
the tiers' caches replay as :mod:`osbench.cache`'s, and bad tiers are refused by name."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any, ClassVar

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from runs import assert_same_runs, run_or_same_livelock

import osbench as ob
from osbench.cache import new as new_cache
from osbench.cache.policies import COSTED_POLICIES, MIN_CAPACITY, OFFLINE, TABLE
from osbench.errors import ArgumentError, ArgumentTypeError
from osbench.serve import native, reference
from osbench.serve.config import POLICIES, EngineConfig
from osbench.serve.requests import Requests
from osbench.serve.run import EngineRun
from osbench.serve.steptime import StepTime
from osbench.serve.vllm import block_pool, tiers
from osbench.serve.vllm import scheduler as vllm_scheduler

KvTier = ob.serve.KvTier
# Coefficients that are not binary fractions: the times are equal only if the arithmetic is.
LINEAR = StepTime.linear(0.0037, 1.3e-5, 7.1e-4, 3.3e-7)
ONLINE = [p for p in TABLE if p not in OFFLINE]
MiB = 2**20


def _gib(blocks: int, block_bytes: int) -> float:
    """GiB that hold exactly ``blocks`` blocks of ``block_bytes`` (half a block to spare, so
    that rounding cannot take one away)."""
    return (blocks + 0.5) * block_bytes / 2**30


# --------------------------------------------------------------------------- native == reference


@st.composite
def tiered(draw, policies: list[str] = ONLINE):  # type: ignore[no-untyped-def]
    """Small workloads with shared prefixes on a small GPU pool (the prefix cache evicts
    often), under one or two small tiers of any online policy, figures and costs."""
    n = draw(st.integers(1, 40))
    block_size = draw(st.sampled_from([2, 4, 8, 16]))
    prompt = draw(st.lists(st.integers(1, 80), min_size=n, max_size=n))
    output = draw(st.lists(st.integers(1, 30), min_size=n, max_size=n))
    gaps = draw(st.lists(st.sampled_from([0.0, 0.003, 0.05, 1.0, 30.0]), min_size=n, max_size=n))
    source_block = draw(st.sampled_from([4, 8, 16]))
    content = None
    if draw(st.integers(0, 5)):  # mostly with content (a prompt without any is never stored)
        # Prompts that begin as one of a few documents, for as many source blocks as drawn,
        # then go their own way: long prefixes shared, evicted from the small pool, found again.
        documents = draw(st.integers(1, 3))
        content = []
        for i, p in enumerate(prompt):
            doc, blocks = draw(st.integers(0, documents - 1)), -(-p // source_block)
            shared = draw(st.integers(0, blocks))
            content.append(
                [1000 * doc + k for k in range(shared)] + [10**6 + 100 * i + k for k in range(blocks - shared)]
            )
    priority = draw(st.one_of(st.none(), st.lists(st.integers(0, 2), min_size=n, max_size=n)))
    need = max(-(-(p + o - 1) // block_size) for p, o in zip(prompt, output))
    seqs = draw(st.integers(1, 6))
    chunked = draw(st.booleans())
    max_len = max(p + o for p, o in zip(prompt, output))
    block_bytes = draw(st.sampled_from([MiB, 123457]))
    kv_tiers = []
    for _ in range(draw(st.integers(1, 2))):
        policy = draw(st.sampled_from(policies))
        blocks = max(MIN_CAPACITY.get(policy, 1), draw(st.integers(1, 40)))
        costs = draw(st.sampled_from([None, True, False] if policy in COSTED_POLICIES else [None, False]))
        kv_tiers.append(
            KvTier(
                _gib(blocks, block_bytes),
                draw(st.sampled_from(tuple(tiers.MEDIA))),
                policy,
                bandwidth=draw(st.sampled_from([None, math.inf, 3.7e8, 1.1e10])),
                latency=draw(st.sampled_from([None, 0.0, 2.3e-5, 1.7e-3])),
                costs=costs,
            )
        )
    preemption = draw(st.sampled_from(["recompute", "swap"]))
    cfg = EngineConfig(
        num_blocks=need + 1 + draw(st.integers(0, need)),
        block_size=block_size,
        max_num_batched_tokens=max(draw(st.integers(seqs, 96)), seqs if chunked else max_len),
        max_num_seqs=seqs,
        max_model_len=max_len,
        enable_chunked_prefill=chunked,
        long_prefill_token_threshold=min(draw(st.sampled_from([0, 3, 7])), max_len) if chunked else 0,
        enable_prefix_caching=draw(st.sampled_from([True, True, True, False])),
        policy=draw(st.sampled_from(POLICIES)),
        watermark=draw(st.sampled_from([0.0, 0.1])),
        scheduler_reserve_full_isl=draw(st.booleans()),
        preemption=preemption,
        swap_space=draw(st.sampled_from([0, 1, need, 10**6])) * block_bytes / 2**30,
        kv_block_bytes=block_bytes,
        kv_tiers=tuple(kv_tiers),
        block_flops=draw(st.sampled_from([1.0, 0.7, 3.3e9])),
        block_flops_step=draw(st.sampled_from([0.0, 0.3, 1.9e7])),
    )
    reqs = Requests(np.cumsum(gaps), prompt, output, blocks=content, priority=priority, source_block=source_block)
    concurrency = draw(st.sampled_from([None, None, 1, 3]))
    return reqs, cfg, concurrency


def _check_rules(run: EngineRun, reqs: Requests, cfg: EngineConfig) -> None:
    """What every run with tiers shows by the rules, whatever the workload."""
    counts, steps = run.tier_blocks, run.steps
    assert counts.shape == (len(cfg.kv_tiers), 3) or (len(steps) == 0 and counts.shape == (0, 3))
    hits, stored, inserted = counts.T
    # Every tier stores every evicted content (inclusive tiers): the same count in each.
    assert (stored == stored[:1]).all()
    assert (inserted <= stored).all() and (inserted >= 0).all()
    assert hits.sum() <= stored[:1].sum()
    # Whole blocks, within the lookup's bound (the last token is computed for its logits).
    assert (run.tier_tokens % cfg.block_size == 0).all()
    assert (run.cached_tokens + run.tier_tokens <= reqs.prompt_len - 1).all() or len(reqs) == 0
    # Every block loaded is kv_block_bytes, priced in its step only.
    assert steps.tier_load_bytes.sum() == hits.sum() * cfg.kv_block_bytes
    assert (steps.tier_load_bytes % cfg.kv_block_bytes == 0).all()
    assert (steps.tier_time[steps.tier_load_bytes == 0] == 0).all()
    # The tokens of first admissions are among the blocks loaded (a request recomputed after a
    # preemption may load again); without preemptions they are all of them.
    assert run.tier_tokens.sum() <= hits.sum() * cfg.block_size
    if run.preemptions.sum() == 0:
        assert run.tier_tokens.sum() == hits.sum() * cfg.block_size
    if len(cfg.kv_tiers) == 1:  # one tier: each loading step costs its latency and bytes exactly
        (tier,) = cfg.kv_tiers
        loaded = steps.tier_load_bytes > 0
        expected = tier.latency + steps.tier_load_bytes[loaded].astype(np.float64) / tier.bandwidth
        np.testing.assert_array_equal(steps.tier_time[loaded], expected)
    # The loads block the step: its duration is the model's time, then the copies, then the loads.
    for j in range(len(steps)):
        assert steps.duration[j] == LINEAR(steps.batch(j)) + steps.swap_time[j] + steps.tier_time[j]
    # No prefix cache, or prompts without content: nothing reaches a tier.
    if not cfg.enable_prefix_caching or reqs.block_ids is None:
        assert (counts == 0).all() and (run.tier_tokens == 0).all()


@settings(max_examples=250, deadline=None)
@given(tiered())
def test_native_equals_the_reference_step_for_step_with_tiers(workload) -> None:  # type: ignore[no-untyped-def]
    reqs, cfg, concurrency = workload
    ours = run_or_same_livelock(reference.run, native.run, reqs, cfg, LINEAR, concurrency=concurrency)
    if ours is None:
        return
    for jump in (True, False):
        theirs = native.run(reqs, cfg, LINEAR, record=True, jump=jump, concurrency=concurrency)
        assert_same_runs(ours, theirs)
        np.testing.assert_array_equal(ours.tier_tokens, theirs.tier_tokens)
        np.testing.assert_array_equal(ours.tier_blocks, theirs.tier_blocks)
    _check_rules(ours, reqs, cfg)


def test_the_random_workloads_do_exercise_the_tiers() -> None:
    """The property test's workloads load from the tiers, evict from them, refresh them, and
    preempt: the comparison covers the tiers' every path."""
    seen = {"loads": 0, "tier evictions": 0, "refreshes": 0, "preemptions": 0, "two tiers loaded": 0}

    @settings(max_examples=80, deadline=None, database=None, derandomize=True)  # the same examples every run
    @given(tiered())
    def collect(workload) -> None:  # type: ignore[no-untyped-def]
        reqs, cfg, concurrency = workload
        try:
            run = native.run(reqs, cfg, LINEAR, concurrency=concurrency)
        except ArgumentError:
            return
        hits, stored, inserted = run.tier_blocks.T
        blocks = [t.blocks(cfg.kv_block_bytes) for t in cfg.kv_tiers]
        seen["loads"] += int(hits.sum() > 0)
        seen["tier evictions"] += int((inserted > np.array(blocks)).any())
        seen["refreshes"] += int((inserted < stored).any())
        seen["preemptions"] += int(run.preemptions.sum() > 0)
        seen["two tiers loaded"] += int(len(hits) == 2 and (hits > 0).all())

    collect()
    assert all(seen.values()), seen


# --------------------------------------------------------------------------- facts by hand

BS = 16


def _hand_workload(*contents: list[int], gap: float = 10.0) -> Requests:
    """Requests of 65 prompt tokens (4 full blocks of 16 and one token) and 1 output token,
    ``gap`` seconds apart, with the source-block ids given (5 blocks of 16 tokens each)."""
    n = len(contents)
    return Requests([gap * i for i in range(n)], [65] * n, [1] * n, blocks=list(contents), source_block=BS)


def _hand_config(*kv_tiers: KvTier, **changes: Any) -> EngineConfig:
    """A pool of 5 usable blocks: exactly one request of 65 tokens at a time."""
    fields = {
        "num_blocks": 6,
        "block_size": BS,
        "max_num_batched_tokens": 256,
        "max_num_seqs": 4,
        "max_model_len": 128,
        "kv_block_bytes": MiB,
        "kv_tiers": kv_tiers,
        **changes,
    }
    return EngineConfig(**fields)


A = [10, 11, 12, 13, 14]
B = [20, 21, 22, 23, 24]
A_AGAIN = [10, 11, 12, 13, 44]  # A's 64-token prefix, another last token
C = [30, 31, 32]
D = [40, 41, 42, 43, 49]
E = [50, 51, 52, 53, 54]


def _computed(run: EngineRun) -> int:
    """Tokens the run's steps computed (a request's last outstanding token counts as a decode)."""
    return int(run.steps.prefill_tokens.sum() + run.steps.decode_seqs.sum())


def _both(reqs: Requests, cfg: EngineConfig, **kw: Any) -> EngineRun:
    ours = reference.run(reqs, cfg, LINEAR, record=True, **kw)
    assert_same_runs(ours, native.run(reqs, cfg, LINEAR, record=True, **kw))
    return ours


def test_a_prefix_the_gpu_evicted_is_loaded_from_the_tier_as_counted_by_hand() -> None:
    """Request 0 (prefix A) fills 4 hashed blocks and a partial one; request 1 (B) takes all 5
    blocks, evicting A's 4 contents, which reach the tier at the end of its step; request 2 (A
    again) finds no A in the GPU, 4 blocks of A in the tier (64 tokens, the most a 65-token
    prompt may hit), and its 5 blocks evict B's 4 contents. One load of 4 blocks in request 2's
    step: latency + 4 MiB / bandwidth."""
    reqs = _hand_workload(A, B, A_AGAIN)
    tier = KvTier(_gib(8, MiB), bandwidth=3.7e9, latency=2.3e-5)
    run = _both(reqs, _hand_config(tier))
    assert run.tier_tokens.tolist() == [0, 0, 64]
    assert run.cached_tokens.tolist() == [0, 0, 0]
    assert run.tier_blocks.tolist() == [[4, 8, 8]]  # 4 loaded; A's 4 then B's 4 stored, all new
    steps = run.steps
    loaded = np.flatnonzero(steps.tier_load_bytes)
    assert len(loaded) == 1 and steps.tier_load_bytes[loaded[0]] == 4 * MiB
    assert steps.tier_time[loaded[0]] == 2.3e-5 + 4 * MiB / 3.7e9
    assert steps.tier_time.sum() == 2.3e-5 + 4 * MiB / 3.7e9
    # The loaded tokens are not computed: the step computes request 2's last token, over them.
    assert (steps.prefill_tokens[loaded[0]], steps.decode_seqs[loaded[0]], steps.context_tokens[loaded[0]]) == (
        0,
        1,
        64,
    )

    # Without the tier the GPU has lost A: request 2 computes it again.
    gpu_only = _both(reqs, _hand_config())
    assert gpu_only.cached_tokens.tolist() == [0, 0, 0]
    assert (gpu_only.tier_tokens == 0).all() and gpu_only.tier_blocks.shape == (0, 3)
    assert _computed(gpu_only) - _computed(run) == 64


def test_the_contents_a_step_evicts_reach_the_tiers_only_once_it_is_decided() -> None:
    """A (request 0) then D (request 1) leave 10 blocks free: 2 partial ones, A's 4 (tail
    first), D's 4. Request 2 (48 tokens) takes the 2 partial blocks and A3's, evicting A3;
    request 3 (A again) hits A0-A2 in the GPU, and its 2 new blocks evict D3 and D2. Admitted in
    request 2's step, request 3 finds no A3 in the tier (it gets there at the step's end) and
    computes it; admitted a step later, it loads A3 from the tier."""
    tier = KvTier(_gib(8, MiB))
    for late, loaded in ((0.0, 0), (0.001, 16)):
        reqs = Requests(
            [0.0, 5.0, 10.0, 10.0 + late], [65, 65, 48, 65], [1] * 4, blocks=[A, D, C, A_AGAIN], source_block=BS
        )
        run = _both(reqs, _hand_config(tier, num_blocks=11))
        assert run.cached_tokens.tolist() == [0, 0, 0, 48]
        assert run.tier_tokens.tolist() == [0, 0, 0, loaded]
        assert run.tier_blocks.tolist() == [[loaded // BS, 3, 3]]  # A3, D3, D2 stored
        assert (run.admitted[3] == run.admitted[2]) == (late == 0.0)


def test_a_tier_of_unbounded_bandwidth_and_no_latency_adds_no_time() -> None:
    reqs = _hand_workload(A, B, A_AGAIN, B, A)
    free = _both(reqs, _hand_config(KvTier(_gib(16, MiB), bandwidth=math.inf, latency=0.0)))
    assert free.tier_blocks[0, 0] > 0
    assert (free.steps.tier_time == 0).all()
    costly = _both(reqs, _hand_config(KvTier(_gib(16, MiB), bandwidth=1.3e9, latency=4.1e-4)))
    np.testing.assert_array_equal(free.tier_tokens, costly.tier_tokens)
    loaded = costly.steps.tier_load_bytes > 0
    np.testing.assert_array_equal(costly.steps.tier_time[loaded], 4.1e-4 + costly.steps.tier_load_bytes[loaded] / 1.3e9)
    assert costly.finish[-1] > free.finish[-1]


def test_two_tiers_load_each_block_from_the_first_holding_it_and_both_are_priced() -> None:
    """A 4-block lru host tier over a 16-block SSD tier, requests of A, B, E, A, E, B (each
    evicting its predecessor's 4 contents, stored in both tiers at the end of its step): the
    host holds only the last 4 contents stored, the SSD all. Request 3 finds A in the SSD
    only; request 4 finds E in both and loads it from the host; request 5 finds B in the SSD
    only. The host takes every store as new; the SSD refreshes A and E, stored again."""
    host = KvTier(_gib(4, MiB), bandwidth=5.3e10, latency=1.1e-5)
    ssd = KvTier(_gib(16, MiB), medium="nvme-gen4", bandwidth=6.7e9, latency=9.7e-5)
    reqs = _hand_workload(A, B, E, A_AGAIN, [50, 51, 52, 53, 64], [20, 21, 22, 23, 74])
    run = _both(reqs, _hand_config(host, ssd))
    assert run.cached_tokens.tolist() == [0] * 6
    assert run.tier_tokens.tolist() == [0, 0, 0, 64, 64, 64]
    assert run.tier_blocks.tolist() == [[4, 20, 20], [8, 20, 12]]
    loaded = np.flatnonzero(run.steps.tier_load_bytes)
    ssd_time, host_time = 9.7e-5 + 4 * MiB / 6.7e9, 1.1e-5 + 4 * MiB / 5.3e10
    assert run.steps.tier_time[loaded].tolist() == [ssd_time, host_time, ssd_time]


def test_with_one_request_at_a_time_the_tiers_add_to_the_gpus_hits() -> None:
    """At concurrency=1 a request runs alone, its blocks taken from the front of the free queue
    whether its KV is computed or loaded, so the GPU's contents are the same with tiers as
    without: the GPU's hits are the same request by request (so GPU + tier hits >= the GPU-only
    run's, with equality of the GPU's part), and the tiers' come on top."""
    rng = np.random.default_rng(7)
    # Six prompts of 3 to 8 blocks of 8 tokens, sharing first blocks, drawn 60 times.
    templates = [[0, 1, 2, 3, 4, 5, 6, 7], [0, 1, 2, 9], [0, 8, 9, 10, 11, 12], [5, 6, 7], [5, 6, 1, 2, 3], [3, 4, 5]]
    picks = rng.integers(0, len(templates), 60)
    extra = rng.integers(0, 8, 60)  # a partial last block, or a token more
    content = [templates[i] + ([100 + j] if e else []) for j, (i, e) in enumerate(zip(picks, extra))]
    prompt = [8 * len(templates[i]) + int(e) for i, e in zip(picks, extra)]
    reqs = Requests(np.zeros(60), prompt, rng.integers(1, 20, 60), blocks=content, source_block=8)
    base = EngineConfig(
        num_blocks=16, block_size=8, max_num_batched_tokens=24, max_num_seqs=4, max_model_len=128, kv_block_bytes=MiB
    )
    gpu_only = _both(reqs, base, concurrency=1)
    for policy in ONLINE:
        cfg = replace(base, kv_tiers=(KvTier(_gib(max(40, MIN_CAPACITY.get(policy, 1)), MiB), policy=policy),))
        run = _both(reqs, cfg, concurrency=1)
        assert run.tier_tokens.sum() > 0
        np.testing.assert_array_equal(run.cached_tokens, gpu_only.cached_tokens)
        assert (run.cached_tokens + run.tier_tokens >= gpu_only.cached_tokens).all()
        # Fewer tokens computed by exactly those loaded.
        assert _computed(gpu_only) - _computed(run) == run.tier_tokens.sum()


# --------------------------------------------------------------------------- the caches' replay


class _Traced(tiers.Tiers):
    """The reference's tiers, keeping every access in order: ``(op, tier or None for every
    tier, key, position)``."""

    trace: ClassVar[list] = []

    def load(self, t: int, key: int, position: int) -> None:
        _Traced.trace.append(("load", t, key, position))
        super().load(t, key, position)

    def store(self, key: int, position: int) -> None:
        _Traced.trace.append(("store", None, key, position))
        super().store(key, position)


class _CountedMap(dict):
    """The GPU's prefix-cache map, counting the contents (hashes, not private tags) that
    leave it: its evictions."""

    left = 0

    def __delitem__(self, key: int) -> None:
        _CountedMap.left += key >= 0
        super().__delitem__(key)


def _assert_replays(reqs: Requests, cfg: EngineConfig, concurrency: Any) -> list[int]:
    """Run the reference keeping its tiers' accesses and counting the GPU's evictions; check
    that every content the GPU evicted was stored in every tier, and that the accesses,
    replayed through osbench.cache's native caches, give the native engine's counts, each
    load finding its block in its tier (a hit) and in no faster one, unless an earlier load's
    hit pushed it out (returned: those blocks)."""
    _Traced.trace, _CountedMap.left = [], 0
    pool_init = block_pool.BlockPool.__init__

    def counted_init(self, *args: Any, **kwargs: Any) -> None:  # type: ignore[no-untyped-def]
        pool_init(self, *args, **kwargs)
        self.cached = _CountedMap()

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(vllm_scheduler, "Tiers", _Traced)
        mp.setattr(block_pool.BlockPool, "__init__", counted_init)
        try:
            reference.run(reqs, cfg, LINEAR, concurrency=concurrency)
        except ArgumentError:  # a livelock (the step-for-step test compares those)
            return []
    theirs = native.run(reqs, cfg, LINEAR, concurrency=concurrency)
    if not len(theirs.steps):
        return []
    assert (theirs.tier_blocks[:, 1] == _CountedMap.left).all()
    caches = [
        new_cache(t.policy, t.blocks(cfg.kv_block_bytes), engine="native", costs=bool(t.costs)) for t in cfg.kv_tiers
    ]
    counts = np.zeros((len(caches), 3), dtype=np.int64)
    pushed_out = []
    for op, t, key, position in _Traced.trace:
        for i, cache in enumerate(caches):
            cost = cfg.block_flops + cfg.block_flops_step * float(position) if cache.costs else None
            if op == "store":
                counts[i, 1] += 1
                counts[i, 2] += not cache.access(key, cost=cost)
            elif i != t:
                assert i > t or key not in cache, "a block loaded from a tier when a faster one held it"
            else:
                # Found at the lookup; an earlier block's hit may have pushed it out since (the
                # policies whose hits evict): then it is read but not put back.
                if key in cache:
                    assert cache.access(key, cost=cost)
                else:
                    assert cfg.kv_tiers[i].policy in HIT_EVICTS, "a block loaded from a tier that never held it"
                    pushed_out.append(key)
                counts[i, 0] += 1
    np.testing.assert_array_equal(theirs.tier_blocks, counts)
    return pushed_out


# Policies whose hit can evict another object (slru's promotion cascades down to segment 0 and
# out of it; wtinylfu's too): with them a load can push out the next block the same lookup
# found (test_a_block_its_lookup_found_is_read_even_if_an_earlier_load_pushed_it_out).
HIT_EVICTS = ("slru", "wtinylfu")


@settings(max_examples=60, deadline=None)
@given(tiered(ONLINE))
def test_the_tiers_replay_as_osbench_cache_and_store_every_gpu_eviction(workload) -> None:  # type: ignore[no-untyped-def]
    _assert_replays(*workload)


def test_a_block_its_lookup_found_is_read_even_if_an_earlier_load_pushed_it_out() -> None:
    """X = X0 X1 X2 and Y = Y0 Y1 Y2 one at a time on 4 GPU blocks over a 6-block slru tier
    (4 segments of 1): X's 3 contents are stored and loaded back (one to each of segments 1-3),
    then Y's 3 stored: none has room, all go to segment 0. Request 3 (Y0 Y1) finds Y0 and Y1
    in the tier; loading Y0 promotes it to segment 1, whose least recent moves down to segment
    0, over its allowance: Y2 and Y1 are evicted. Y1 is read all the same (the lookup found it)
    and not put back: 5 blocks loaded, the tier left without Y1."""
    reqs = Requests(
        [0.0, 10.0, 20.0, 30.0],
        [49, 49, 49, 33],
        [1] * 4,
        blocks=[[0, 1, 2, 9], [10, 1, 2, 9], [0, 1, 2, 9], [10, 1, 9]],
        source_block=BS,
    )
    cfg = _hand_config(KvTier(_gib(6, MiB), policy="slru"), num_blocks=5)
    run = native.run(reqs, cfg, LINEAR)
    assert run.tier_tokens.tolist() == [0, 0, 48, 32] and run.tier_blocks[0, 0] == 5
    assert len(_assert_replays(reqs, cfg, None)) == 1


# --------------------------------------------------------------------------- without tiers


def test_no_tiers_is_the_run_without_the_argument() -> None:
    rng = np.random.default_rng(3)
    n = 40
    prompt = rng.integers(1, 80, n)
    content = [[int(rng.integers(0, 2)) for _ in range(-(-int(p) // 8))] for p in prompt]
    reqs = Requests(
        np.cumsum(rng.choice([0.0, 0.01, 1.0], n)), prompt, rng.integers(1, 30, n), blocks=content, source_block=8
    )
    fields = {"num_blocks": 40, "block_size": 4, "max_num_batched_tokens": 32, "max_num_seqs": 4, "max_model_len": 128}
    plain = EngineConfig(**fields)
    for none in ((), []):
        assert EngineConfig(**fields, kv_tiers=none) == plain
        # The blocks' costs are the tiers' only: without tiers they change nothing.
        cfg = EngineConfig(**fields, kv_tiers=none, block_flops=3.3e9, block_flops_step=1.9e7)
        for engine in (reference, native):
            a, b = engine.run(reqs, plain, LINEAR, record=True), engine.run(reqs, cfg, LINEAR, record=True)
            assert_same_runs(a, b)
            assert a.tier_blocks.shape == (0, 3) and (a.tier_tokens == 0).all()
            assert (a.steps.tier_time == 0).all() and (a.steps.tier_load_bytes == 0).all()
    s = ob.serve.simulate(reqs, step_time=LINEAR, **fields).summary()
    assert s.tiers == () and s.tier_time == 0 and s.tier_hit_rate == 0


# --------------------------------------------------------------------------- simulate


def test_simulate_sets_the_tiers_block_bytes_and_costs_from_the_model() -> None:
    reqs = _hand_workload(A, B, A_AGAIN)
    model = ob.serve.MODELS["llama-3-8b"]
    res = ob.serve.simulate(reqs, model="llama-3-8b", gpu="h100-sxm", num_blocks=6, kv_tiers=["1:pcie4:gdsf"])
    cfg = res.config
    assert cfg.kv_block_bytes == BS * model.kv_bytes_per_token(1)
    assert (cfg.block_flops, cfg.block_flops_step) == tiers.block_flops(model, BS)
    assert cfg.kv_tiers == (KvTier(1.0, "pcie4", "gdsf", tiers.MEDIA["pcie4"].bandwidth, 1e-5, True),)
    assert res.tier_tokens.tolist() == [0, 0, 64]
    s = res.summary()
    assert s.tier_hit_rate == 64 / (3 * 65)
    (t,) = s.tiers
    assert (t.medium, t.policy, t.capacity_blocks) == ("pcie4", "gdsf", 2**30 // cfg.kv_block_bytes)
    assert (t.loaded_blocks, t.loaded_bytes, t.stored_blocks, t.inserted_blocks) == (4, 4 * cfg.kv_block_bytes, 8, 8)
    assert s.tier_time == tiers.MEDIA["pcie4"].latency + 4 * cfg.kv_block_bytes / tiers.MEDIA["pcie4"].bandwidth
    ref = ob.serve.simulate(
        reqs, engine="reference", model="llama-3-8b", gpu="h100-sxm", num_blocks=6, kv_tiers=["1:pcie4:gdsf"]
    )
    np.testing.assert_array_equal(ref.tier_blocks, res.tier_blocks)
    assert ref.summary().tier_time == s.tier_time


# --------------------------------------------------------------------------- bad input


def _config(kv_tiers: Any, kv_block_bytes: int = MiB) -> EngineConfig:
    return EngineConfig(num_blocks=10, kv_block_bytes=kv_block_bytes, kv_tiers=kv_tiers)


ONE_GIB = 1.0
BAD_TIERS = [
    (
        [KvTier(ONE_GIB, bandwidth=-1.0)],
        ArgumentError,
        r"kv_tiers\[0\]\.bandwidth=-1\.0 is not accepted: .*bytes per second >= 1",
    ),
    ([KvTier(ONE_GIB, bandwidth=math.nan)], ArgumentError, r"kv_tiers\[0\]\.bandwidth=nan is not accepted"),
    ([KvTier(ONE_GIB), KvTier(ONE_GIB, bandwidth=0.999)], ArgumentError, r"kv_tiers\[1\]\.bandwidth=0\.999 is not"),
    ([KvTier(ONE_GIB, latency=math.nan)], ArgumentError, r"kv_tiers\[0\]\.latency=nan is not accepted: .*seconds >= 0"),
    ([KvTier(ONE_GIB, latency=math.inf)], ArgumentError, r"kv_tiers\[0\]\.latency=inf is not accepted"),
    ([KvTier(ONE_GIB, latency=-1e-300)], ArgumentError, r"kv_tiers\[0\]\.latency=-1e-300 is not accepted"),
    ([KvTier(ONE_GIB, latency="0")], ArgumentTypeError, r"kv_tiers\[0\]\.latency='0' is not accepted: .*a number"),
    (
        [KvTier(ONE_GIB, medium="usb")],
        ArgumentError,
        r"kv_tiers\[0\]\.medium='usb' is not accepted: use one of pcie5, pcie4",
    ),
    (["64:usb"], ArgumentError, r"kv_tiers\[0\]\.medium='usb' is not accepted: use one of pcie5, pcie4, nvlink-c2c"),
    (
        [KvTier(ONE_GIB, policy="nope")],
        ArgumentError,
        r"kv_tiers\[0\]\.policy='nope' is not accepted: use one of fifo, lru",
    ),
    ([KvTier(ONE_GIB, policy="opt")], ArgumentError, r"kv_tiers\[0\]\.policy='opt' is not accepted: use one of"),
    ([KvTier(ONE_GIB, policy="belady-size")], ArgumentError, r"kv_tiers\[0\]\.policy='belady-size' is not accepted"),
    (
        [KvTier(ONE_GIB, policy="lru", costs=True)],
        ArgumentError,
        r"kv_tiers\[0\]\.costs=True is not accepted with policy='lru': it takes no costs; .* are gdsf",
    ),
    (
        [KvTier(ONE_GIB, policy="gdsf", costs="yes")],
        ArgumentTypeError,
        r"kv_tiers\[0\]\.costs='yes' is not accepted: it must be True or False",
    ),
    ([KvTier(0.0)], ArgumentError, r"kv_tiers\[0\]\.gib=0\.0 is not accepted: it must be a finite number of GiB > 0"),
    ([KvTier(-1.0)], ArgumentError, r"kv_tiers\[0\]\.gib=-1\.0 is not accepted"),
    ([KvTier(math.inf)], ArgumentError, r"kv_tiers\[0\]\.gib=inf is not accepted"),
    ([KvTier(True)], ArgumentTypeError, r"kv_tiers\[0\]\.gib=True is not accepted: it must be a number"),
    (
        [KvTier(0.5 / 1024)],
        ArgumentError,
        r"kv_tiers\[0\]\.gib=0\.00048828125 is not accepted: it holds 0 KV blocks of 1048576 bytes, and policy='lru' needs at least 1",
    ),
    (
        5,
        ArgumentTypeError,
        r"kv_tiers=5 is not accepted: it must be a sequence \(a list or tuple, fastest tier first\)",
    ),
    (KvTier(ONE_GIB), ArgumentTypeError, r"kv_tiers=KvTier\(.*\) is not accepted: it must be a sequence"),
    ("64:pcie5:lru", ArgumentTypeError, r"kv_tiers='64:pcie5:lru' is not accepted: it must be a sequence"),
    ([5], ArgumentTypeError, r"kv_tiers\[0\]=5 is not accepted: it must be a KvTier or a 'GIB:MEDIUM:POLICY'"),
    ([KvTier(ONE_GIB)] * 9, ArgumentError, r"kv_tiers is not accepted: it has 9 tiers, at most 8"),
    (["1:2:3:4"], ArgumentError, r"kv_tiers?(\[0\])?='1:2:3:4' is not accepted: it must be GIB\[:MEDIUM\[:POLICY\]\]"),
]


@pytest.mark.parametrize(("kv_tiers", "error", "match"), BAD_TIERS)
def test_bad_tiers_are_refused_naming_the_argument(kv_tiers: Any, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        _config(kv_tiers)


def test_tiers_need_the_block_bytes() -> None:
    with pytest.raises(ArgumentError, match=r"kv_block_bytes=0 is not accepted with kv_tiers: .* name a model"):
        _config([KvTier(ONE_GIB)], kv_block_bytes=0)
    assert _config([], kv_block_bytes=0).kv_tiers == ()


@pytest.mark.parametrize(
    ("field", "ok", "bad", "match"),
    [
        ("bandwidth", 1.0, math.nextafter(1.0, 0.0), "bandwidth=0.9999999999999999 is not accepted"),
        ("bandwidth", math.inf, -math.inf, "bandwidth=-inf is not accepted"),
        ("latency", 0.0, -5e-324, "latency=-5e-324 is not accepted"),
        ("latency", 1e300, math.inf, "latency=inf is not accepted"),
        (
            "gib",
            1 / 1024,
            math.nextafter(1 / 1024, 0.0),
            "gib=0.0009765624999999999 is not accepted: it holds 0 KV blocks",
        ),
    ],
)
def test_tier_figures_are_checked_at_their_bounds(field: str, ok: float, bad: float, match: str) -> None:
    assert getattr(_config([KvTier(**{"gib": ONE_GIB, field: ok})]).kv_tiers[0], field) == ok
    with pytest.raises(ArgumentError, match=r"kv_tiers\[0\]\." + match):
        _config([KvTier(**{"gib": ONE_GIB, field: bad})])


@pytest.mark.parametrize("policy", sorted(p for p in ONLINE if MIN_CAPACITY.get(p, 1) > 1))
@pytest.mark.parametrize("block_bytes", [MiB, 123457])
def test_a_tier_must_hold_its_policys_least_capacity(policy: str, block_bytes: int) -> None:
    least = MIN_CAPACITY[policy]
    enough = KvTier(least * block_bytes / 2**30, policy=policy)
    fewer = KvTier(math.nextafter(least * block_bytes / 2**30, 0.0), policy=policy)
    assert enough.blocks(block_bytes) == least and fewer.blocks(block_bytes) == least - 1
    assert _config([enough], block_bytes).kv_tiers[0].policy == policy
    match = rf"kv_tiers\[0\]\.gib=.* is not accepted: it holds {least - 1} KV blocks of {block_bytes} bytes, and policy='{policy}' needs at least {least}"
    with pytest.raises(ArgumentError, match=match):
        _config([fewer], block_bytes)
    with pytest.raises(ArgumentError, match=match.replace(r"\[0\]", r"\[1\]")):
        _config([enough, fewer], block_bytes)


def test_at_most_max_tiers() -> None:
    assert len(_config([KvTier(ONE_GIB)] * tiers.MAX_TIERS).kv_tiers) == tiers.MAX_TIERS == 8
    with pytest.raises(ArgumentError, match=f"it has {tiers.MAX_TIERS + 1} tiers, at most {tiers.MAX_TIERS}"):
        _config([KvTier(ONE_GIB)] * (tiers.MAX_TIERS + 1))


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("", r"kv_tiers?='' is not accepted: it must be GIB\[:MEDIUM\[:POLICY\]\], e\.g\. 64:pcie5:lru"),
        (":pcie5", r"kv_tiers?=':pcie5' is not accepted: it must be GIB\[:MEDIUM\[:POLICY\]\]"),
        ("x", r"kv_tiers?='x' is not accepted: its GIB must be a number"),
        ("1:2:3:4", r"kv_tiers?(\[0\])?='1:2:3:4' is not accepted: it must be GIB\[:MEDIUM\[:POLICY\]\]"),
    ],
)
def test_parse_refuses_what_is_not_gib_medium_policy(text: str, match: str) -> None:
    with pytest.raises(ArgumentError, match=match):
        KvTier.parse(text)


def test_parse_reads_gib_medium_policy_and_leaves_their_checks_to_the_config() -> None:
    assert KvTier.parse("64") == KvTier(64.0)
    assert KvTier.parse("0.5:nvme-gen4:s3fifo") == KvTier(0.5, "nvme-gen4", "s3fifo")
    assert KvTier.parse("64:usb") == KvTier(64.0, "usb")  # a name, checked with the others
    with pytest.raises(ArgumentError, match=r"kv_tiers\[0\]\.medium='usb' is not accepted"):
        _config(["64:usb"])
    with pytest.raises(ArgumentError, match=r"kv_tiers\[0\]\.policy='opt' is not accepted"):
        _config(["64:pcie5:opt"])
    assert _config(["1:nvme-gen5:gdsf"]).kv_tiers == (KvTier(1.0, "nvme-gen5", "gdsf", 14.8e9, 100e-6, True),)


@pytest.mark.parametrize(
    ("kv_tiers", "error", "match"),
    [
        ([KvTier(ONE_GIB, bandwidth=-1.0)], ArgumentError, r"kv_tiers\[0\]\.bandwidth=-1\.0 is not accepted"),
        ([KvTier(ONE_GIB, latency=math.nan)], ArgumentError, r"kv_tiers\[0\]\.latency=nan is not accepted"),
        (["1:usb"], ArgumentError, r"kv_tiers\[0\]\.medium='usb' is not accepted"),
        (["1:pcie5:opt"], ArgumentError, r"kv_tiers\[0\]\.policy='opt' is not accepted"),
        ([KvTier(ONE_GIB, costs=True)], ArgumentError, r"kv_tiers\[0\]\.costs=True is not accepted with policy='lru'"),
        (5, ArgumentTypeError, r"kv_tiers=5 is not accepted: it must be a sequence"),
        (["1"] * 9, ArgumentError, r"kv_tiers is not accepted: it has 9 tiers, at most 8"),
        # llama-3-8b's blocks of 16 tokens are 2 MiB: 9 of them are one fewer than s3fifo's 10.
        (
            [KvTier(9 * 2 * MiB / 2**30, policy="s3fifo")],
            ArgumentError,
            r"kv_tiers\[0\]\.gib=0\.017578125 is not accepted: it holds 9 KV blocks of 2097152 bytes, and policy='s3fifo' needs at least 10",
        ),
    ],
)
def test_simulate_refuses_bad_tiers_naming_the_argument(kv_tiers: Any, error: type, match: str) -> None:
    reqs = _hand_workload(A)
    with pytest.raises(error, match=match):
        ob.serve.simulate(reqs, model="llama-3-8b", gpu="h100-sxm", num_blocks=6, kv_tiers=kv_tiers)


def test_simulate_takes_a_tier_of_exactly_the_policys_least_capacity() -> None:
    reqs = _hand_workload(A)
    res = ob.serve.simulate(
        reqs, model="llama-3-8b", gpu="h100-sxm", num_blocks=6, kv_tiers=[KvTier(10 * 2 * MiB / 2**30, policy="s3fifo")]
    )
    assert res.summary().tiers[0].capacity_blocks == 10


@pytest.mark.parametrize("tiers", [{"64:pcie5:lru": "fast"}, {"64:pcie5:lru"}])
def test_a_dict_or_set_of_tiers_is_refused(tiers: Any) -> None:
    # Neither is a sequence: a dict's keys would be read as tiers, and a set has no order.
    with pytest.raises(ArgumentTypeError, match=r"kv_tiers=.* is not accepted: it must be a sequence"):
        _config(tiers)


def test_a_bad_tier_string_is_refused_naming_kv_tiers_and_its_index() -> None:
    with pytest.raises(ArgumentError, match=r"^kv_tiers\[1\]='x' is not accepted: its GIB must be a number"):
        _config(["1", "x"])


@pytest.mark.parametrize("engine", ["native", "reference"])
def test_a_run_of_no_steps_reports_each_tier_with_nothing_done(engine: str) -> None:
    # An engine builds its tiers at its first step; the result still has a row per tier.
    res = ob.serve.simulate(
        Requests([], [], []), model="llama-3-8b", gpu="h100", kv_tiers=["4:pcie5:lru"], engine=engine
    )
    assert res.tier_blocks.tolist() == [[0, 0, 0]]
    assert [(t.policy, t.capacity_blocks, t.loaded_blocks) for t in res.summary().tiers] == [("lru", 2048, 0)]
