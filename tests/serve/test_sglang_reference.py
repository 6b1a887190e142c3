"""SGLang's semantics, the reference engine (``osbench.serve.sglang``): its facts, its
invariants on random workloads, its errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from osbench.errors import ArgumentError
from osbench.serve import reference as vllm_reference
from osbench.serve.config import EngineConfig as VllmConfig
from osbench.serve.drive import drive
from osbench.serve.requests import Requests
from osbench.serve.run import Recorder
from osbench.serve.sglang import POLICIES, EngineConfig, run
from osbench.serve.sglang.adder import CLIP_MAX_NEW_TOKENS
from osbench.serve.sglang.scheduler import NewTokenRatioTracker
from osbench.serve.sglang.stepper import Stepper
from osbench.serve.steptime import StepTime

STEP = StepTime.linear(0.004, 5e-5, 1e-4, 1e-7)


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


class CheckedStepper(Stepper):
    """The stepper, checking after every step what must always hold: every page is free, the
    tree's or one running request's own; the tree's sizes add up; no step is empty; a step
    that retracted left a request decoding."""

    def __init__(self, requests: Requests, config: EngineConfig) -> None:
        super().__init__(requests, config)
        self.retractions = 0
        self.retracting_steps_with_waiting = 0

    def check(self) -> None:
        s, kv = self.scheduler, self.scheduler.kv
        holders = list(s.running.reqs)
        if s.last_batch is not None and s.last_batch is not s.running:
            holders += [r for r in s.last_batch.reqs if r not in holders]
        if s.chunked_req is not None and s.chunked_req not in holders:
            holders.append(s.chunked_req)
        own = sum(kv.own_pages(r) for r in holders if r.alloc_len)
        assert kv.free_pages + kv.tree.total_size // kv.page_size + own == kv.num_pages
        assert kv.free_pages >= 0 and all(kv.own_pages(r) >= 0 for r in holders)
        assert kv.tree.total_size % kv.page_size == 0
        nodes = list(kv.tree.iter_nodes())
        assert sum(len(n.tokens) for n in nodes) == kv.tree.total_size
        assert sum(len(n.tokens) for n in nodes if n.lock_ref == 0) == kv.tree.evictable_size

    def schedule(self):  # type: ignore[no-untyped-def]
        plan = super().schedule()
        assert plan.scheduled
        if plan.preempted:
            self.retractions += len(plan.preempted)
            assert plan.batch.decode_seqs >= 1  # retraction keeps at least one request decoding
        return plan

    def update_from_output(self):  # type: ignore[no-untyped-def]
        out = super().update_from_output()
        self.check()
        return out


def checked_run(reqs: Requests, cfg: EngineConfig) -> tuple:
    stepper = CheckedStepper(reqs, cfg)
    result = drive(reqs, stepper, STEP, Recorder(len(reqs), True))
    return result, stepper


def test_the_run_is_the_checked_run() -> None:
    reqs = workload(40, 7, rate=100, prompt=80, output=40)
    cfg = EngineConfig(max_total_tokens=1500)
    a, b = run(reqs, cfg, STEP, record=True), checked_run(reqs, cfg)[0]
    np.testing.assert_array_equal(a.finish, b.finish)


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(1, 30),
    policy=st.sampled_from(POLICIES),
    page_size=st.sampled_from([1, 2, 4, 16]),
    pool_pages=st.integers(1, 400),
    chunk=st.sampled_from([-1, 16, 64, 512]),
    mixed=st.booleans(),
    conservativeness=st.sampled_from([0.3, 1.0, 2.0]),
    prefixes=st.sampled_from([0, 2]),
)
def test_invariants_on_random_workloads(
    seed: int,
    n: int,
    policy: str,
    page_size: int,
    pool_pages: int,
    chunk: int,
    mixed: bool,
    conservativeness: float,
    prefixes: int,
) -> None:
    reqs = workload(n, seed, rate=300, prompt=60, output=30, prefixes=prefixes)
    # Prompts reach 240 tokens and outputs 120: every request fits alone, some barely.
    tokens = (pool_pages + 400 // page_size) * page_size
    cfg = EngineConfig(
        max_total_tokens=tokens,
        page_size=page_size,
        schedule_policy=policy,
        chunked_prefill_size=chunk,
        enable_mixed_chunk=mixed,
        schedule_conservativeness=conservativeness,
        max_prefill_tokens=256,
        max_running_requests=8,
    )
    try:
        result, _ = checked_run(reqs, cfg)
    except ArgumentError as exc:  # where SGLang itself runs out of KV (test_sglang_fidelity)
        assert "runs out of KV in a prefill" in str(exc)
        return
    assert np.all(np.isfinite(result.finish))
    # Every request's tokens came out: outputs counted over the steps equal the outputs asked.
    assert (result.steps.num_seqs <= 8 + 1).all()  # the cap, and the one chunked request


def test_unbounded_memory_one_request_at_a_time_serves_as_vllm() -> None:
    """Alone in an unbounded pool, a request is prefilled whole in one step, then decodes one
    token a step, in both semantics: the same service, step for step."""
    rng = np.random.default_rng(3)
    n = 30
    prompt = rng.integers(1, 2000, n)
    output = rng.integers(1, 200, n)
    arrival = np.arange(n) * 1000.0  # each one done long before the next
    reqs = Requests(arrival, prompt, output)
    ours = run(reqs, EngineConfig(max_total_tokens=1 << 20), STEP)
    theirs = vllm_reference.run(reqs, VllmConfig(num_blocks=1 << 16, enable_prefix_caching=False), STEP)
    for name in ("admitted", "first_token", "finish"):
        np.testing.assert_array_equal(getattr(ours, name), getattr(theirs, name), err_msg=name)
    assert ours.preemptions.sum() == 0 and ours.num_steps == theirs.num_steps


def test_decode_memory_pressure_retracts_and_recovers_the_prefix() -> None:
    reqs = workload(120, 2, rate=400, prompt=120, output=200, prefixes=3)
    cfg = EngineConfig(max_total_tokens=3000, schedule_conservativeness=0.2)
    result, stepper = checked_run(reqs, cfg)
    assert stepper.retractions > 3
    assert result.preemptions.sum() == stepper.retractions
    assert np.all(np.isfinite(result.finish))


class Tally(Stepper):
    """The stepper, adding up what each request computes: its new tokens over every step, and
    the prefix hit of its first admission."""

    def __init__(self, requests: Requests, config: EngineConfig) -> None:
        super().__init__(requests, config)
        self.computed = np.zeros(len(requests), dtype=np.int64)
        self.first_hit: dict[int, int] = {}

    def schedule(self):  # type: ignore[no-untyped-def]
        plan = super().schedule()
        for index, new in plan.scheduled:
            self.computed[index] += new
        for index, hit in plan.admitted:
            self.first_hit.setdefault(index, hit)
        return plan


@pytest.mark.parametrize("pool", [100_000, 3000])
def test_recomputed_tokens_are_what_retractions_make_requests_compute_again(pool: int) -> None:
    """A finished request has computed the KV of its prompt and of every output token but the
    last, less its first admission's prefix hit; whatever it computed beyond that, it computed
    again after a retraction, and the run's ``recomputed_tokens`` counts exactly that (none
    without retractions)."""
    reqs = workload(120, 2, rate=400, prompt=120, output=200, prefixes=3)
    stepper = Tally(reqs, EngineConfig(max_total_tokens=pool, schedule_conservativeness=0.2))
    result = drive(reqs, stepper, STEP, Recorder(len(reqs), False))
    hits = np.array([stepper.first_hit[i] for i in range(len(reqs))])
    once = reqs.prompt_len + reqs.output_len - 1 - hits
    again = stepper.computed - once
    assert (again >= 0).all()
    assert result.steps.recomputed_tokens.sum() == again.sum()
    assert (again > 0).any() == (result.preemptions.sum() > 0) == (pool == 3000)


def test_long_prompts_are_chunked_at_the_chunk_size() -> None:
    """One 1000-token prompt alone, chunks of 256 tokens: 256, 256, 256, then the 232 left, a
    token only after the last chunk."""
    reqs = Requests([0.0], [1000], [3])
    result = run(reqs, EngineConfig(max_total_tokens=4096, chunked_prefill_size=256), STEP, record=True)
    assert result.record is not None
    assert result.steps.prefill_tokens.tolist() == [256, 256, 256, 232, 0, 0]
    assert result.steps.decode_seqs.tolist() == [0, 0, 0, 0, 1, 1]


def test_the_first_chunk_ends_on_a_page_boundary() -> None:
    """The chunk that admits a request ends on a page (250 down to 240: ``_select_prefill_admission``);
    the chunks that continue it take the whole budget (``add_chunked_req`` does not align)."""
    reqs = Requests([0.0], [1000], [2])
    result = run(reqs, EngineConfig(max_total_tokens=4096, chunked_prefill_size=250, page_size=16), STEP)
    assert result.steps.prefill_tokens.tolist() == [240, 250, 250, 250, 10, 0]


def hit_rate(policy: str, seed: int) -> float:
    """Prefix hits over prompt tokens, with a pool that evicts (5000 tokens for prompts of 300)."""
    reqs = workload(300, seed, rate=400, prompt=300, output=20, prefixes=8)
    result = run(reqs, EngineConfig(max_total_tokens=5000, schedule_policy=policy), STEP)
    return float(result.cached_tokens.sum() / reqs.prompt_len.sum())


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_lpm_hits_at_least_as_much_as_fcfs_on_shared_prefixes(seed: int) -> None:
    """Under eviction, serving the requests whose prefix is cached first keeps it from being
    evicted before they hit it. (Not a theorem: with a pool that never evicts, the orders
    differ only in which requests share a batch, and either may come out ahead.)"""
    lpm, fcfs = hit_rate("lpm", seed), hit_rate("fcfs", seed)
    assert fcfs > 0.05  # the prefixes are there to hit
    assert lpm >= fcfs


def test_lpm_falls_back_to_the_queue_order_above_128_waiting() -> None:
    """With more than 128 waiting requests ``lpm`` sorts nothing: a burst of 200 at once is
    admitted in arrival order, as under ``fcfs``."""
    reqs = workload(200, 4, rate=1e9, prompt=100, output=5, prefixes=4)
    cfg = {"max_total_tokens": 50000, "max_running_requests": 16}
    lpm = run(reqs, EngineConfig(schedule_policy="lpm", **cfg), STEP)
    fcfs = run(reqs, EngineConfig(schedule_policy="fcfs", **cfg), STEP)
    first = np.argsort(lpm.admitted, kind="stable")[:16]
    np.testing.assert_array_equal(first, np.argsort(fcfs.admitted, kind="stable")[:16])


def test_lof_admits_the_longest_outputs_first() -> None:
    out = np.array([5, 50, 20, 40])
    reqs = Requests(np.zeros(4), np.full(4, 30), out)
    result = run(reqs, EngineConfig(max_total_tokens=4096, schedule_policy="lof", max_running_requests=1), STEP)
    assert np.argsort(result.admitted).tolist() == [1, 3, 2, 0]


def test_random_is_seeded() -> None:
    reqs = workload(60, 5, rate=1e6, prompt=50, output=10)
    runs = [
        run(
            reqs,
            EngineConfig(max_total_tokens=4096, schedule_policy="random", random_seed=s, max_running_requests=4),
            STEP,
        ).admitted
        for s in (1, 1, 2)
    ]
    np.testing.assert_array_equal(runs[0], runs[1])
    assert not np.array_equal(runs[0], runs[2])


def test_the_ratio_tracker() -> None:
    t = NewTokenRatioTracker(EngineConfig(max_total_tokens=64).init_new_token_ratio)
    assert t.current == 0.7 and t.min == pytest.approx(0.098)
    for _ in range(600):
        t.decay_step()
    assert t.current == pytest.approx(0.098)
    t.decay_step()
    assert t.current == t.min
    t.reset()
    assert t.current == 0.7
    assert EngineConfig(max_total_tokens=64, schedule_conservativeness=2.0).init_new_token_ratio == 1.0


def test_admission_reserves_the_running_requests_expected_output() -> None:
    """Two requests of 100 prompt tokens and 1000 outputs in a 1300-token pool: the first is
    admitted (100 + 1000 + 1 < 1300); the second is not while the first runs, its reservation
    being 1000 x 0.7 and 100 + 1000 + 1 not below 1300 - 101 - 700."""
    reqs = Requests([0.0, 0.0], [100, 100], [1000, 1000])
    result = run(reqs, EngineConfig(max_total_tokens=1300), STEP, record=True)
    assert result.steps.prefill_seqs[0] == 1
    assert result.admitted[1] >= result.finish[0]
    assert CLIP_MAX_NEW_TOKENS == 4096


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"max_total_tokens": 0}, "max_total_tokens"),
        ({"max_total_tokens": 100, "page_size": 0}, "page_size"),
        ({"max_total_tokens": 100, "page_size": 16}, "max_total_tokens"),
        ({"max_total_tokens": 100, "schedule_policy": "priority"}, "schedule_policy"),
        ({"max_total_tokens": 100, "schedule_policy": "sjf"}, "schedule_policy"),
        ({"max_total_tokens": 100, "chunked_prefill_size": 0}, "chunked_prefill_size"),
        ({"max_total_tokens": 100, "schedule_conservativeness": 0}, "schedule_conservativeness"),
        ({"max_total_tokens": 100, "max_running_requests": 0}, "max_running_requests"),
        ({"max_total_tokens": 100, "enable_mixed_chunk": "yes"}, "enable_mixed_chunk"),
    ],
)
def test_bad_configs_are_refused_by_name(kwargs: dict, name: str) -> None:
    with pytest.raises((ArgumentError, TypeError), match=name):
        EngineConfig(**kwargs)


def test_a_request_that_never_fits_is_refused() -> None:
    with pytest.raises(ArgumentError, match="requests=1 is not accepted"):
        run(Requests([0.0, 1.0], [10, 1000], [10, 100]), EngineConfig(max_total_tokens=1024), STEP)


def test_closed_loop_clients_bound_the_requests_in_flight() -> None:
    reqs = workload(60, 7, rate=400, prompt=120, output=40)
    result = run(reqs, EngineConfig(max_total_tokens=20000), STEP, concurrency=4)
    assert int(result.steps.num_seqs.max()) == 4 and (result.arrival > reqs.arrival).any()


def test_a_run_where_sglang_runs_out_of_kv_is_refused_saying_so() -> None:
    """A continuing chunk takes a whole chunk when the admission budget has none left
    (``PrefillBudget.available_chunk_tokens``); in a small pool the prefill then finds no room,
    where SGLang raises its out-of-memory error."""
    reqs = workload(100, 6, rate=300, prompt=400, output=60, prefixes=4)
    cfg = EngineConfig(
        max_total_tokens=4000,
        schedule_policy="shortest-prefill-first",
        chunked_prefill_size=128,
        enable_mixed_chunk=True,
    )
    with pytest.raises(ArgumentError, match=r"max_total_tokens=4000 is not accepted: .* runs out of KV in a prefill"):
        run(reqs, cfg, STEP)


class RetractionWatcher(Stepper):
    """The stepper, checking every retraction against its rule: the requests retracted are those
    with the fewest outputs (ties: the longest prompt), at least one, never the last; the ratio
    becomes ``(outputs + 20 x kept) / (max_new_tokens + 1)`` over the requests kept, capped at 1."""

    def __init__(self, requests: Requests, config: EngineConfig) -> None:
        super().__init__(requests, config)
        self.checked = 0

    def schedule(self):  # type: ignore[no-untyped-def]
        s = self.scheduler
        last = s.last_batch.reqs if s.last_batch is not None and s.last_batch.extend else []
        decoding = [r for r in [*s.running.reqs, *last] if not r.finished() and r is not s.chunked_req]
        before = {r.index: (r.num_outputs, -r.prompt_len) for r in decoding}
        plan = super().schedule()
        if plan.preempted:
            kept = list(s.running.reqs)
            assert kept and len(plan.preempted) < len(before)
            worst_kept = min(before[r.index] for r in kept)
            assert all(before[i] <= worst_kept for i in plan.preempted)
            decoded = sum(r.num_outputs for r in kept)
            asked = sum(r.max_new_tokens for r in kept)
            assert s.ratio.current == min(1.0, (decoded + 20 * len(kept)) / (asked + 1))
            self.checked += 1
        return plan


def test_retraction_follows_its_rule() -> None:
    reqs = workload(120, 2, rate=400, prompt=120, output=200, prefixes=3)
    stepper = RetractionWatcher(reqs, EngineConfig(max_total_tokens=3000, schedule_conservativeness=0.2))
    drive(reqs, stepper, STEP, Recorder(len(reqs), False))
    assert stepper.checked > 3
