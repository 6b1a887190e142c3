"""The native serving engine against the reference, step for step; the decode jump; bad input;
Ctrl-C; and cross-checks with osbench's scheduling and radix-tree simulators."""

from __future__ import annotations

import re
import threading
import time
import types
from dataclasses import fields, replace
from typing import Any, Callable, Union

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from interrupts import assert_stops
from runs import TIED, TIED_CONFIG, assert_same_runs, native_counted, run_or_same_livelock

import osbench as ob
from osbench import _native
from osbench.errors import ArgumentError, ArgumentTypeError
from osbench.serve import native, reference, simulate
from osbench.serve.config import POLICIES, EngineConfig
from osbench.serve.drive import drive
from osbench.serve.requests import Requests
from osbench.serve.run import Clients, EngineRun, Recorder, StepRecord
from osbench.serve.steptime import Batch, StepTime
from osbench.serve.vllm.checks import check_requests
from osbench.serve.vllm.config import PREDICTIONS
from osbench.serve.vllm.prediction import predicted_output_len
from osbench.serve.vllm.request import Request as VllmRequest
from osbench.serve.vllm.stepper import Stepper
from osbench.serve.vllm.swap import LINKS, PREEMPTIONS

# Coefficients that are not binary fractions: the times are equal only if the arithmetic is.
LINEAR = StepTime.linear(0.0037, 1.3e-5, 7.1e-4, 3.3e-7)
ROOFLINES = (
    StepTime.roofline("llama-3-8b", "h100-sxm"),
    StepTime.roofline("mixtral-8x7b", "l40s", tp=4),  # experts: the x ** n product
    StepTime.roofline("llama-3-70b", "a100-80gb", tp=8),
)


# --------------------------------------------------------------------------- native == reference


@st.composite
def pressured(draw, max_requests: int = 30, max_output: int = 40):  # type: ignore[no-untyped-def]
    """Small workloads and configurations that make things happen: few blocks (preemptions,
    evictions), tiny budgets (chunks), shared prefixes (hits), priorities, every option."""
    n = draw(st.integers(1, max_requests))
    block_size = draw(st.sampled_from([1, 2, 4, 8, 16]))
    prompt = draw(st.lists(st.integers(1, 80), min_size=n, max_size=n))
    output = draw(st.lists(st.integers(1, max_output), min_size=n, max_size=n))
    gaps = draw(st.lists(st.sampled_from([0.0, 0.003, 0.05, 1.0, 30.0]), min_size=n, max_size=n))
    source_block = draw(st.sampled_from([4, 8, 16]))
    alphabet = draw(st.integers(1, 3))  # few distinct ids: many shared prefixes
    content = None
    if draw(st.booleans()):
        content = [[draw(st.integers(0, alphabet - 1)) for _ in range(-(-p // source_block))] for p in prompt]
    priority = draw(st.one_of(st.none(), st.lists(st.integers(0, 2), min_size=n, max_size=n)))
    need = max(-(-(p + o - 1) // block_size) for p, o in zip(prompt, output))
    seqs = draw(st.integers(1, 8))
    chunked = draw(st.booleans())
    max_len = max(p + o for p, o in zip(prompt, output)) + draw(st.sampled_from([0, 7]))
    cfg = EngineConfig(
        num_blocks=need + 1 + draw(st.integers(0, 2 * need)),
        block_size=block_size,
        max_num_batched_tokens=max(draw(st.integers(seqs, 96)), seqs if chunked else max_len),
        max_num_seqs=seqs,
        max_model_len=max_len,
        enable_chunked_prefill=chunked,
        long_prefill_token_threshold=min(draw(st.sampled_from([0, 3, 7])), max_len) if chunked else 0,
        enable_prefix_caching=draw(st.booleans()),
        policy=draw(st.sampled_from(POLICIES)),
        watermark=draw(st.sampled_from([0.0, 0.1, 0.3])),
        scheduler_reserve_full_isl=draw(st.booleans()),
        aging=draw(st.sampled_from([0.0, 0.25, 3.0])),
        mlfq_levels=draw(st.integers(1, 5)),
        mlfq_quantum=draw(st.integers(1, 24)),
        mlfq_growth=draw(st.integers(1, 3)),
        mlfq_boost=draw(st.sampled_from([0, 1, 5, 40])),
        prediction=draw(st.sampled_from(PREDICTIONS)),
        prediction_sigma=draw(st.sampled_from([0.0, 0.5, 2.0])),
        prediction_bucket=draw(st.integers(1, 30)),
        prediction_seed=draw(st.integers(0, 3)),
        # Preemption by swap into host pools from none to unbounded (blocks of 1 MiB: swap_space
        # = host blocks / 1024 GiB, exactly), at rated, measured-looking and infinite bandwidths.
        preemption=draw(st.sampled_from(PREEMPTIONS)),
        swap_space=draw(st.sampled_from([0, 1, need // 2, need, 2 * need, 10**6])) / 1024,
        link=draw(st.sampled_from(tuple(LINKS))),
        swap_bandwidth=draw(st.sampled_from([None, np.inf, 3.7e8, 1.1e10])),
        kv_block_bytes=2**20,
    )
    predicted = draw(st.lists(st.integers(0, 2 * max_output), min_size=n, max_size=n))
    reqs = Requests(
        np.cumsum(gaps),
        prompt,
        output,
        blocks=content,
        priority=priority,
        source_block=source_block,
        predicted_output_len=predicted,
    )
    return reqs, cfg


@settings(max_examples=250, deadline=None)
@given(pressured(), st.sampled_from([LINEAR, *ROOFLINES]))
def test_native_equals_the_reference_step_for_step(workload, step_time) -> None:  # type: ignore[no-untyped-def]
    reqs, cfg = workload
    try:
        ours = reference.run(reqs, cfg, step_time, record=True)
    except ArgumentError as livelock:  # requests tied under priority preempt one another forever
        for jump in (True, False):
            with pytest.raises(ArgumentError) as caught:
                native.run(reqs, cfg, step_time, jump=jump)
            assert str(caught.value) == str(livelock)
        return
    assert_same_runs(ours, native.run(reqs, cfg, step_time, record=True))
    assert_same_runs(ours, native.run(reqs, cfg, step_time, record=True, jump=False))


@settings(max_examples=200, deadline=None)
@given(pressured(), st.data())
def test_native_equals_the_reference_with_swap_under_kv_pressure(workload, data) -> None:  # type: ignore[no-untyped-def]
    """Preemption by swap on a pool barely large enough for the largest request, so that
    requests are swapped out and in, and a host pool from none to unbounded, so that some are
    recomputed when it is full."""
    reqs, cfg = workload
    need = max(-(-(int(p) + int(o) - 1) // cfg.block_size) for p, o in zip(reqs.prompt_len, reqs.output_len))
    host = data.draw(st.sampled_from([0, 1, max(need // 2, 1), need, 3 * need, 10**6]))
    cfg = replace(
        cfg,
        num_blocks=need + 1 + data.draw(st.integers(0, max(need // 2, 1))),
        preemption="swap",
        swap_space=host / 1024,
        watermark=0.0,
    )
    step_time = data.draw(st.sampled_from([LINEAR, ROOFLINES[0]]))
    ours = run_or_same_livelock(reference.run, native.run, reqs, cfg, step_time)
    if ours is None:
        return
    assert_same_runs(ours, native.run(reqs, cfg, step_time, record=True))
    assert_same_runs(ours, native.run(reqs, cfg, step_time, record=True, jump=False))
    steps = ours.steps
    # Every byte that went out came back, and each copy's time is in its step.
    assert steps.swap_out_bytes.sum() == steps.swap_in_bytes.sum()
    expected = (steps.swap_out_bytes + steps.swap_in_bytes) / cfg.swap.bandwidth
    np.testing.assert_array_equal(steps.swap_time, expected)


class _MixedStepper(Stepper):
    """The reference's stepper with the requests in ``private`` given no content (their blocks
    keyed by private tags, unhashed), the others their prompt keys."""

    def __init__(
        self, requests: Requests, config: EngineConfig, priority: np.ndarray, predicted: np.ndarray, private: set[int]
    ) -> None:
        super().__init__(requests, config, priority, predicted)
        self.private = private

    def add_request(self, index: int, arrival: float) -> None:
        if index not in self.private:
            return super().add_request(index, arrival)
        r = self.requests
        prompt, output = int(r.prompt_len[index]), int(r.output_len[index])
        priority, predicted = int(self.priority[index]), int(self.predicted[index])
        request = VllmRequest(index, arrival, priority, prompt, output, None, predicted, private=True)
        self.scheduler.add_request(request)


def _outcome(run: Callable[..., EngineRun], *args: Any) -> Union[EngineRun, str]:
    """The run, or the error of one that cannot end (requests tied under priority)."""
    try:
        return run(*args, record=True)
    except ArgumentError as livelock:
        return str(livelock)


def _assert_same_outcome(a: Union[EngineRun, str], b: Union[EngineRun, str]) -> None:
    if isinstance(a, str) or isinstance(b, str):
        assert a == b
    else:
        assert_same_runs(a, b)


@settings(max_examples=150, deadline=None)
@given(pressured(), st.sampled_from([LINEAR, ROOFLINES[0]]), st.data())
def test_prompts_without_content_run_as_if_every_block_had_content_of_its_own(workload, step_time, data) -> None:  # type: ignore[no-untyped-def]
    """The shortcut for prompts without content (no hash, no map: only the request itself can
    hit its blocks, after a preemption) against the semantics it stands for: the same prompts
    with content no other block has, hashed into the prefix cache like any other. Both engines;
    and, on the reference, with requests with and without content mixed in one run."""
    reqs, cfg = workload
    cfg = replace(cfg, enable_prefix_caching=True)
    fresh = iter(range(1 << 40, 1 << 41))  # ids no drawn content uses

    def unique_content(i: int) -> list[int]:
        return [next(fresh) for _ in range(-(-int(reqs.prompt_len[i]) // reqs.source_block))]

    def with_blocks(blocks: list) -> Requests:
        return Requests(
            reqs.arrival,
            reqs.prompt_len,
            reqs.output_len,
            blocks=blocks,
            priority=reqs.priority,
            source_block=reqs.source_block,
        )

    bare = Requests(reqs.arrival, reqs.prompt_len, reqs.output_len, priority=reqs.priority)
    hashed = with_blocks([unique_content(i) for i in range(len(reqs))])
    expected = _outcome(reference.run, hashed, cfg, step_time)
    _assert_same_outcome(expected, _outcome(reference.run, bare, cfg, step_time))
    _assert_same_outcome(expected, _outcome(native.run, bare, cfg, step_time))
    # Mixed: the drawn content (shared prefixes) for some requests, none for the others.
    private = set(data.draw(st.lists(st.integers(0, len(reqs) - 1), unique=True)))
    shared = reqs.blocks or [unique_content(i) for i in range(len(reqs))]
    mixed_hashed = with_blocks([unique_content(i) if i in private else list(shared[i]) for i in range(len(reqs))])

    def mixed(requests: Requests, record: bool) -> EngineRun:
        predicted = predicted_output_len(requests, cfg)
        stepper = _MixedStepper(requests, cfg, check_requests(requests, cfg), predicted, private)
        guard = reference.LivelockGuard(stepper.state, stepper.livelock_error)
        return drive(requests, stepper, step_time, Recorder(len(requests), record), guard=guard, concurrency=None)

    expected = _outcome(reference.run, mixed_hashed, cfg, step_time)
    _assert_same_outcome(expected, _outcome(mixed, with_blocks([list(b) for b in shared])))


@settings(max_examples=150, deadline=None)
@given(pressured(), st.integers(1, 6), st.sampled_from([0.0, 1e-4, 3e-3, 0.05]), st.integers(0, 10))
def test_native_equals_the_reference_with_closed_loop_clients(
    workload, count: int, turnaround: float, warmup: int
) -> None:  # type: ignore[no-untyped-def]
    reqs, cfg = workload
    concurrency = Clients(count, turnaround, warmup)
    ours = run_or_same_livelock(reference.run, native.run, reqs, cfg, LINEAR, concurrency=concurrency)
    if ours is None:
        return
    assert_same_runs(ours, native.run(reqs, cfg, LINEAR, record=True, concurrency=concurrency))
    assert_same_runs(ours, native.run(reqs, cfg, LINEAR, record=True, jump=False, concurrency=concurrency))
    in_flight_when_sent = [int(((ours.arrival <= t) & (t < ours.finish)).sum()) for t in ours.arrival]
    assert max(in_flight_when_sent) <= count
    assert (ours.arrival >= reqs.arrival).all()
    if 0 < warmup < len(reqs):  # the requests after the warm-up wait for all of it
        assert ours.arrival[warmup:].min() >= ours.finish[:warmup].max() + turnaround


def test_the_random_workloads_do_exercise_preemption_eviction_hits_and_the_jump() -> None:
    """What the property test relies on happens, on one seeded workload of the same kind."""
    rng = np.random.default_rng(5)
    n = 200
    prompt = rng.integers(1, 200, n)
    reqs = Requests(
        np.cumsum(rng.exponential(0.05, n)),
        prompt,
        rng.integers(1, 120, n),
        blocks=[rng.integers(0, 3, -(-int(p) // 32)) for p in prompt],
        priority=rng.integers(0, 3, n),
        source_block=32,
    )
    for policy in POLICIES:
        cfg = EngineConfig(
            num_blocks=60, block_size=8, max_num_batched_tokens=48, max_num_seqs=6, max_model_len=512, policy=policy
        )
        ours = reference.run(reqs, cfg, LINEAR, record=True)
        theirs, jumped = native_counted(reqs, cfg, LINEAR, record=True)
        assert_same_runs(ours, theirs)
        assert ours.preemptions.sum() > 0 and ours.cached_tokens.sum() > 0 and jumped > 0
        assert (np.diff(ours.steps.blocks_cached) < 0).any()  # the prefix cache evicted
    # Swap into a host pool that fills: requests are swapped out and in, and some recomputed.
    for policy in POLICIES:
        cfg = EngineConfig(
            num_blocks=60, block_size=8, max_num_batched_tokens=48, max_num_seqs=6, max_model_len=512, policy=policy,
            preemption="swap", swap_space=24 / 1024, kv_block_bytes=2**20, swap_bandwidth=3.7e8,
        )  # fmt: skip
        ours = reference.run(reqs, cfg, LINEAR, record=True)
        assert_same_runs(ours, native.run(reqs, cfg, LINEAR, record=True))
        steps = ours.steps
        assert steps.swap_out_bytes.sum() > 0 and steps.swap_in_bytes.sum() > 0, policy
        assert steps.recomputed_tokens.sum() > 0, policy  # the host pool was full at times
        assert ((steps.swap_out_bytes > 0) & (steps.swap_in_bytes > 0)).sum() == 0  # one way a step


def test_simulate_gives_equal_results_with_either_engine() -> None:
    reqs = Requests.poisson(120, rate=40.0, prompt_len=300, output_len=60, seed=2)
    kwargs = {"model": "qwen2.5-7b", "gpu": "l40s", "num_blocks": 300, "max_num_batched_tokens": 512}
    a = simulate(reqs, engine="reference", record=True, **kwargs)
    b = simulate(reqs, record=True, **kwargs)
    assert b.summary() == a.summary() and b.preemptions.sum() > 0
    assert b.config == a.config and b.config.max_model_len == 32768  # the model's
    for name in ("admitted", "first_token", "finish", "preemptions", "cached_tokens"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    for f in fields(a.steps):
        np.testing.assert_array_equal(getattr(a.steps, f.name), getattr(b.steps, f.name), err_msg=f.name)
    for f in fields(StepRecord):
        np.testing.assert_array_equal(getattr(a.record, f.name), getattr(b.record, f.name), err_msg=f.name)


def test_a_run_that_repeats_itself_forever_is_stopped_as_the_reference_stops_it() -> None:
    # Equal (priority, arrival): vLLM preempts the first running one of them, which keeps
    # resetting the other's progress (tests/serve/test_vllm_fidelity.py shows vLLM doing it).
    reqs, cfg = TIED, TIED_CONFIG
    message = (
        "requests=0, 1 is not accepted: requests the scheduler can serve: with policy='priority' these preempt one "
        "another forever"
    )
    for run in (reference.run, native.run):
        with pytest.raises(ArgumentError, match=message):
            run(reqs, cfg, LINEAR)
    # Apart, or first come first served, they are served.
    assert np.isfinite(native.run(Requests([0, 1e-9], [3, 3], [3, 3]), cfg, LINEAR).finish).all()
    fcfs = EngineConfig(**{**_fields(cfg), "num_blocks": 4, "policy": "fcfs"})
    assert_same_runs(reference.run(reqs, fcfs, LINEAR), native.run(reqs, fcfs, LINEAR))


@pytest.mark.parametrize(
    ("arrival", "concurrency", "next_send"),
    [
        ([0, 0, 1e5], None, "100000"),  # nothing changes in the 1e8 steps before it: stopped at once
        ([0, 0, 1e5], 3, "100000"),  # closed loop, with room: sent at its arrival
        ([0, 0, 2.5], 2, None),  # closed loop, no room: no request is sent again
        ([0, 0], None, None),
    ],
)
def test_a_livelock_is_stopped_at_once_even_with_requests_to_come(
    arrival: list[float], concurrency: int | None, next_send: str | None
) -> None:
    reqs = Requests(arrival, [3] * len(arrival), [3] * len(arrival))
    step = StepTime.linear(1e-3, 0.0, 0.0, 0.0)
    with pytest.raises(ArgumentError) as want:
        reference.run(reqs, TIED_CONFIG, step, concurrency=concurrency)
    message = str(want.value)
    # The two tied requests are caught; the last token came out at the end of step 7.
    assert message.startswith("requests=0, 1 is not accepted")
    assert "the requests in the engine make no progress from t=0.007 s on" in message
    later = f"nothing changes before the next request would arrive, at t={next_send} s"
    assert (later in message) == (next_send is not None) and ("next request" in message) == (next_send is not None)
    for jump in (True, False):
        with pytest.raises(ArgumentError) as caught:
            native.run(reqs, TIED_CONFIG, step, concurrency=concurrency, jump=jump)
        assert str(caught.value) == message
    # Apart, the late request is served as ever.
    if len(arrival) == 3:
        apart = Requests([0, 1e-9, arrival[2]], [3, 3, 3], [3, 3, 3])
        assert_same_runs(reference.run(apart, TIED_CONFIG, step), native.run(apart, TIED_CONFIG, step))


@pytest.mark.parametrize("late", [1.0, 10.1 + 0.2, 123456.789, 2.0**40 + 0.5, 3.3e11])
def test_the_livelock_error_writes_times_as_the_native_engine_does(late: float) -> None:
    """One text (``stalled``), two writers of a float: the reference's must match Rust's."""
    reqs = Requests([0, 0, late], [3, 3, 3], [3, 3, 3])
    with pytest.raises(ArgumentError) as want:
        reference.run(reqs, TIED_CONFIG, LINEAR)
    assert f"at t={reference.stalled(0.0, late).rsplit('t=', 1)[1]}" in str(want.value)
    with pytest.raises(ArgumentError) as caught:
        native.run(reqs, TIED_CONFIG, LINEAR)
    assert str(caught.value) == str(want.value)


# --------------------------------------------------------------------------- the decode jump


@settings(max_examples=60, deadline=None)
@given(pressured(max_requests=12, max_output=400), st.sampled_from([LINEAR, ROOFLINES[1]]))
def test_the_decode_jump_changes_nothing(workload, step_time) -> None:  # type: ignore[no-untyped-def]
    reqs, cfg = workload
    stepped = run_or_same_livelock(lambda *a, **k: native.run(*a, **k, jump=False), native.run, reqs, cfg, step_time)
    if stepped is None:
        return
    assert_same_runs(stepped, native.run(reqs, cfg, step_time, record=True))


@pytest.mark.parametrize("caching", [True, False])
def test_the_decode_jump_takes_most_steps_of_a_decode_heavy_run(caching: bool) -> None:
    rng = np.random.default_rng(1)
    reqs = Requests(np.cumsum(rng.exponential(2.0, 100)), rng.integers(10, 300, 100), rng.integers(50, 800, 100))
    cfg = EngineConfig(num_blocks=4000, enable_prefix_caching=caching)
    step_time = ROOFLINES[0]
    stepped, none = native_counted(reqs, cfg, step_time, jump=False)
    jumped_run, jumped = native_counted(reqs, cfg, step_time)
    assert none == 0 and jumped > stepped.num_steps / 3
    assert_same_runs(stepped, jumped_run)
    assert_same_runs(reference.run(reqs, cfg, step_time), jumped_run)


# --------------------------------------------------------------------------- bad input


SMALL = Requests([0.0, 0.5], [20, 30], [5, 5])


@pytest.mark.parametrize(
    ("make", "error", "match"),
    [
        (lambda: Requests([0], [-3], [1]), ValueError, r"prompt_len\[0\]=-3 is not accepted"),
        (lambda: Requests([0], [4], [0]), ValueError, r"output_len\[0\]=0 is not accepted"),
        (lambda: Requests([np.nan], [4], [1]), ValueError, r"arrival\[0\]=nan is not accepted"),
        (lambda: Requests([2.0, 1.0], [4, 4], [1, 1]), ValueError, "arrivals must be non-decreasing"),
        (lambda: simulate(SMALL, model="llama-3-8b", gpu="h100", block_size=0), ValueError, "block_size=0"),
        (lambda: simulate(SMALL, model="llama-2", gpu="h100"), ValueError, "model='llama-2' is not accepted"),
        (lambda: simulate(SMALL, model="llama-3-8b", gpu="v100"), ValueError, "gpu='v100' is not accepted"),
        (
            lambda: simulate(SMALL, model="llama-3-8b", gpu="h100", max_model_len=30),
            ValueError,
            r"request 1 is not accepted: prompt_len \+ output_len exceeds max_model_len=30",
        ),
        (
            lambda: simulate(SMALL, step_time=lambda b: 0.01, num_blocks=100),
            TypeError,
            "not accepted by the native engine: it takes a StepTime",
        ),
        (lambda: simulate(SMALL, model="llama-3-8b", gpu="h100", engine="gpu"), ValueError, "engine='gpu'"),
        (lambda: simulate(SMALL, model="llama-3-8b", gpu="h100", max_batch=4), TypeError, "max_batch=4 is not"),
        (lambda: simulate(SMALL, gpu="h100"), ValueError, "model=None is not accepted without a step_time object"),
        (lambda: simulate(SMALL, step_time=LINEAR), ValueError, "model=None is not accepted without num_blocks"),
        (lambda: simulate(SMALL, step_time=LINEAR, num_blocks=100, tp=2), ValueError, "tp=2 is not accepted"),
        (lambda: simulate([1, 2], model="llama-3-8b", gpu="h100"), TypeError, "requests=list is not accepted"),
        (lambda: native.run(SMALL, EngineConfig(num_blocks=9), LINEAR, jump=1), TypeError, "jump=1 is not"),
    ],
)
def test_bad_input_is_refused_with_the_argument_named(make, error: type, match: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(error, match=match):
        make()


def _tier(**changes: Any) -> Any:
    """A tier as the binding reads it (its fields by name), past EngineConfig's checks."""
    fields = {"gib": 1.0, "policy": "lru", "bandwidth": 1e9, "latency": 0.0, "costs": False, **changes}
    return types.SimpleNamespace(**fields)


_POLICY_FIELDS = (
    "aging",
    "mlfq_levels",
    "mlfq_quantum",
    "mlfq_growth",
    "mlfq_boost",
    "prediction",
    "prediction_sigma",
    "prediction_bucket",
    "prediction_seed",
    "preemption",
    "swap_space",
    "link",
    "swap_bandwidth",
    "kv_block_bytes",
    "kv_tiers",
    "block_flops",
    "block_flops_step",
)


def _binding(**changes):  # type: ignore[no-untyped-def]
    """``_native.serve_simulate`` on two valid requests, with ``changes``."""
    return _native.serve_simulate(*_binding_groups(**changes))


def _binding_groups(**changes):  # type: ignore[no-untyped-def]
    """The argument groups (requests, engine, options) of :func:`_binding`; a change the
    requests and the engine do not take goes to the options."""
    args = {
        "arrival": np.array([0.0, 1.0]),
        "prompt_len": np.array([20, 30]),
        "output_len": np.array([5, 5]),
        "priority": None,
        "keys": np.array([1, 2, 3, 4, 5], dtype=np.uint64),
        "key_offsets": np.array([0, 2, 5]),
        "num_blocks": 100,
        "block_size": 8,
        "max_num_batched_tokens": 64,
        "max_num_seqs": 4,
        "max_model_len": 64,
        "enable_chunked_prefill": True,
        "long_prefill_token_threshold": 0,
        "enable_prefix_caching": True,
        "policy": "fcfs",
        "watermark": 0.0,
        "scheduler_reserve_full_isl": True,
        **{name: getattr(EngineConfig(num_blocks=2), name) for name in _POLICY_FIELDS},
        "step_kind": "linear",
        "step_coefficients": [0.01, 0.0, 0.0, 0.0],
        **changes,
    }
    arrays = ("arrival", "prompt_len", "output_len", "priority", "keys", "key_offsets", "predicted")
    requests = {k: args.pop(k) for k in arrays if k in args}
    engine = {"settings": {name: args.pop(name) for name in _native.SERVE_ENGINES[0][3]}}
    engine.update((k, args.pop(k)) for k in ("step_kind", "step_coefficients", "step_tables") if k in args)
    return requests, engine, {"record": False, "jump": True, **args}


@pytest.mark.parametrize(
    ("changes", "match"),
    [
        ({"prompt_len": np.array([-20, 30])}, "prompt_len=-20 at index 0 is not accepted"),
        ({"output_len": np.array([5])}, "output_len=1 entries is not accepted"),
        ({"arrival": np.array([0.0, np.nan])}, "arrival=NaN at index 1 is not accepted"),
        ({"arrival": np.array([1.0, 0.0])}, "arrival=0 at index 1 is not accepted: non-decreasing"),
        ({"arrival": np.array([0.0, np.inf])}, "arrival=inf at index 1 is not accepted"),
        ({"priority": np.array([1])}, "priority=1 entries is not accepted"),
        ({"key_offsets": np.array([0, 3, 5])}, "key_offsets=3 keys for request 0 is not accepted"),
        ({"key_offsets": np.array([0, 2, 9])}, "key_offsets=3 offsets is not accepted"),
        ({"key_offsets": np.array([0, -(2**63), 5])}, f"key_offsets={-(2**63)} keys for request 0"),
        ({"key_offsets": None}, "key_offsets=0 offsets is not accepted"),
        ({"block_size": 0}, "block_size=0 is not accepted"),
        ({"kv_tiers": [_tier(policy="nope")], "kv_block_bytes": 1024}, 'policy="nope" is not accepted'),
        ({"kv_tiers": [_tier(bandwidth=-1.0)], "kv_block_bytes": 1024}, "kv_tiers=tier 0 of -1 bytes/s"),
        ({"kv_tiers": [_tier(gib=0.0)], "kv_block_bytes": 1024}, "kv_tiers=tier 0 of 0 GiB"),
        ({"kv_tiers": [_tier()], "kv_block_bytes": 0}, "kv_block_bytes=0 is not accepted"),
        ({"kv_tiers": [_tier(policy="lru", costs=True)], "kv_block_bytes": 1024}, "cost"),
        ({"block_flops": 0.0}, "block_flops=0 is not accepted"),
        ({"num_blocks": 1}, "num_blocks=1 is not accepted"),
        ({"num_blocks": 3}, "requests=request 0 is not accepted: prompt_len \\+ output_len - 1 tokens in the 2"),
        ({"max_model_len": 30}, "requests=request 1 is not accepted: prompt_len \\+ output_len within"),
        ({"max_num_seqs": 100}, "max_num_batched_tokens=64 is not accepted: at least max_num_seqs=100"),
        ({"enable_chunked_prefill": False, "max_model_len": 128}, "at least max_model_len=128 without chunked"),
        ({"policy": "lifo"}, 'policy="lifo" is not accepted'),
        ({"policy": "priority", "aging": -1.0}, "aging=-1 is not accepted"),
        ({"policy": "mlfq", "mlfq_levels": 0}, "mlfq_levels=0 is not accepted"),
        ({"preemption": "drop"}, 'preemption="drop" is not accepted'),
        ({"swap_space": -1.0}, "swap_space=-1 is not accepted"),
        ({"swap_space": np.inf}, "swap_space=inf is not accepted"),
        ({"link": "usb"}, 'link="usb" is not accepted: one of pcie5, pcie4, nvlink-c2c'),
        ({"swap_bandwidth": -1.0}, "swap_bandwidth=-1 is not accepted"),
        ({"swap_bandwidth": np.nan}, "swap_bandwidth=NaN is not accepted"),
        ({"preemption": "swap"}, "kv_block_bytes=0 is not accepted"),
        ({"predicted": np.array([3])}, "predicted_output_len=1 entries is not accepted: 2 entries"),
        ({"predicted": np.array([3, -1])}, "predicted_output_len=-1 at index 1 is not accepted"),
        ({"step_kind": "cubic"}, 'kind="cubic" is not accepted'),
        ({"step_coefficients": [1.0]}, "coefficients=1 numbers is not accepted: 4 numbers for a linear model"),
        ({"step_coefficients": [-1.0, 0.0, 0.0, 0.0]}, "step_time=.* is not accepted: a model giving a finite"),
        ({"step_coefficients": [np.nan, 0.0, 0.0, 0.0]}, "step_time=.* is not accepted"),
    ],
)
def test_the_binding_refuses_bad_input_without_crashing(changes: dict, match: str) -> None:
    with pytest.raises(ArgumentError, match=match):
        _binding(**changes)


def test_the_binding_takes_only_the_types_it_states() -> None:
    with pytest.raises(TypeError):
        _binding(prompt_len=np.array([20.0, 30.0]))
    with pytest.raises((TypeError, OverflowError)):
        _binding(num_blocks=-5)
    assert isinstance(ArgumentTypeError("x"), TypeError)  # the native engine's type errors come from Python
    columns, record, _ = _binding()
    assert record is None and columns["finish"].tolist()[0] > 0


def test_the_binding_refuses_a_group_by_its_name() -> None:
    """Each argument group is a dict of the keys it takes: a key it does not take (a typo),
    a required one missing, or not a dict at all is refused naming the argument, with the keys
    listed; nothing is ignored."""
    requests, engine, options = _binding_groups()
    takes = "arrival, prompt_len, output_len, priority, predicted, keys, key_offsets"
    with pytest.raises(ArgumentTypeError, match=rf'requests\["priorty"\] is not accepted: requests takes {takes}'):
        _native.serve_simulate({**requests, "priorty": None}, engine, options)
    with pytest.raises(ArgumentTypeError, match=r'options\["recrod"\] is not accepted: options takes record, jump'):
        _binding(recrod=True)
    with pytest.raises(ArgumentTypeError, match=r'engine\["step_tabels"\] is not accepted'):
        _native.serve_simulate(requests, {**engine, "step_tabels": None}, options)
    short = {k: v for k, v in requests.items() if k != "prompt_len"}
    with pytest.raises(ArgumentError, match=f"requests is not accepted: it has no 'prompt_len'; it takes {takes}"):
        _native.serve_simulate(short, engine, options)
    with pytest.raises(ArgumentError, match="options is not accepted: it has no 'jump'"):
        _native.serve_simulate(requests, engine, {"record": False})
    with pytest.raises(ArgumentTypeError, match="engine=list is not accepted: a dict of settings, step_kind"):
        _native.serve_simulate(requests, list(engine.items()), options)
    router = {"name": "round-robin", **native.ROUTER_DEFAULTS, "sead": 1}
    with pytest.raises(ArgumentTypeError, match=r'router\["sead"\] is not accepted: router takes name, seed'):
        _native.serve_simulate_cluster(requests, engine, 2, router, options)


def test_an_untouched_pool_costs_nothing() -> None:
    """vLLM's pool size up to 2**62 blocks: only the blocks a run touches exist."""
    run = native.run(SMALL, EngineConfig(num_blocks=2**62, block_size=4), LINEAR, record=True)
    assert run.record is not None and run.record.free_blocks[0] == 2**62 - 1 - 5
    assert_same_runs(
        reference.run(SMALL, EngineConfig(num_blocks=400, block_size=4), LINEAR),
        native.run(SMALL, EngineConfig(num_blocks=2**62, block_size=4), LINEAR),
    )


def test_ctrl_c_stops_a_long_native_run() -> None:
    assert_stops(
        """
        import numpy as np
        from osbench.serve import native
        from osbench.serve.config import EngineConfig
        from osbench.serve.requests import Requests
        from osbench.serve.steptime import StepTime
        rng = np.random.default_rng(0)
        reqs = Requests(np.zeros(3000), rng.integers(100, 2000, 3000), rng.integers(500, 2000, 3000))
        cfg = EngineConfig(num_blocks=5000, max_num_seqs=256)
        for _ in range(1000):  # minutes of work if nothing stops it
            native.run(reqs, cfg, StepTime.linear(0.01, 1e-5, 1e-4, 1e-7), jump=False)
        """
    )


def test_a_long_native_run_releases_the_gil() -> None:
    rng = np.random.default_rng(0)
    reqs = Requests(np.zeros(2000), rng.integers(100, 2000, 2000), rng.integers(200, 800, 2000))
    ticks = 0
    done = threading.Event()

    def count() -> None:
        nonlocal ticks
        while not done.is_set():
            ticks += 1
            time.sleep(0)

    worker = threading.Thread(target=count)
    worker.start()
    try:
        before = ticks
        native.run(reqs, EngineConfig(num_blocks=4000, max_num_seqs=64), LINEAR, jump=False)
        during = ticks - before
    finally:
        done.set()
        worker.join()
    assert during > 10  # holding the GIL, the counter would move only at the call's edges


@pytest.mark.parametrize(
    ("reqs", "record", "need", "named"),
    [
        # 10 steps of 18 eight-byte fields; with record=True 4 more each, and 16 bytes per token.
        (Requests([0.0], [1], [10]), False, 10 * 144, "output_len=10 (request 0)"),
        (Requests([0.0], [1], [10]), True, 10 * 176 + 16 * 10, "output_len=10 (request 0)"),
        # 4 sequences at most per step: 13 tokens take 4 steps at the least.
        (Requests([0.0] * 13, [1] * 13, [1] * 13), False, 4 * 144, "output_len (summing to 13 tokens, max_num_seqs=4)"),
        # 1000 prompt tokens in blocks of 16: 63 blocks held at once.
        (Requests([0.0], [1000], [1]), False, 63 * 36, "prompt_len=1000 (request 0)"),
    ],
)
def test_a_run_that_cannot_fit_in_the_memory_free_is_refused_up_front(
    monkeypatch: pytest.MonkeyPatch, reqs: Requests, record: bool, need: int, named: str
) -> None:
    from osbench import _checks

    cfg = EngineConfig(num_blocks=100, max_num_seqs=4, enable_prefix_caching=False)
    for engine in (native.run, reference.run):
        monkeypatch.setattr(_checks, "available_memory", lambda: need)  # just enough
        assert engine(reqs, cfg, LINEAR, record=record).num_steps > 0
        monkeypatch.setattr(_checks, "available_memory", lambda: need - 1)
        with pytest.raises(MemoryError, match=rf"^{re.escape(named)} is not accepted here: .* more than the"):
            engine(reqs, cfg, LINEAR, record=record)


# --------------------------------------------------------------------------- cross-checks


def test_one_request_at_a_time_at_a_constant_time_per_token_is_fcfs_scheduling() -> None:
    """``max_num_seqs=1``, no chunking, ``t`` seconds per token: request i is a job of
    ``t * (prompt_len + output_len - 1)`` seconds (its prefill step, then one step per further
    output token), served first come first served."""
    rng = np.random.default_rng(4)
    n, t = 300, 2.0**-10
    reqs = Requests(np.cumsum(rng.integers(0, 2000, n)) * 2.0**-10, rng.integers(1, 500, n), rng.integers(1, 300, n))
    cfg = EngineConfig(
        num_blocks=100, max_num_seqs=1, max_num_batched_tokens=1024, max_model_len=1024, enable_chunked_prefill=False
    )
    served = simulate(reqs, step_time=StepTime.linear(0.0, t, t, 0.0), num_blocks=100, **_fields(cfg))
    jobs = ob.sched.Workload(reqs.arrival, t * (reqs.prompt_len + reqs.output_len - 1))
    fcfs = ob.sched.simulate(jobs, "fcfs")
    assert (fcfs.response > 0).all() and served.queueing.max() > 0  # requests did wait
    np.testing.assert_array_equal(served.e2e, fcfs.response)
    np.testing.assert_array_equal(served.admitted, fcfs.first_start)


def _fields(cfg: EngineConfig) -> dict:
    return {f.name: getattr(cfg, f.name) for f in fields(cfg) if f.name != "num_blocks"}


def test_at_low_load_ttft_tends_to_the_prefill_time() -> None:
    step_time = ROOFLINES[0]
    reqs = Requests.poisson(400, rate=1.0, prompt_len=1000, output_len=100, seed=3)
    prefill = np.array([step_time(Batch(1, 1, int(p), 0, 0, int(p) * (int(p) + 1) // 2)) for p in reqs.prompt_len])
    ratio = {}
    for rate in (0.05, 1.0, 8.0, 30.0):
        result = simulate(reqs.at_rate(rate), model="llama-3-8b", gpu="h100")
        ratio[rate] = float(np.mean(result.ttft / prefill))
    alone = simulate(reqs.at_rate(0.05), model="llama-3-8b", gpu="h100")
    alone_in_step = alone.steps.num_seqs[np.searchsorted(alone.steps.start, alone.admitted)] == 1
    isolated = alone_in_step & (alone.admitted == alone.arrival)
    assert isolated.mean() > 0.9
    # Alone, the first token comes out one prefill step after the arrival.
    np.testing.assert_array_equal(alone.first_token[isolated], (alone.arrival + prefill)[isolated])
    assert 1.0 <= ratio[0.05] < ratio[1.0] < ratio[8.0] < ratio[30.0]
    assert ratio[0.05] < 1.01 and ratio[30.0] > 1.5


def test_prefix_hits_with_unbounded_blocks_are_the_radix_trees() -> None:
    """With room for every block, a request finds as many blocks as the radix tree of all
    earlier prompts (over block keys) matches, but for vLLM's rule that the last prompt token is
    always computed: at most ``(prompt_len - 1) // block_size`` blocks."""
    conv = Requests.conversations(60, rate=2.0, turns=(1, 6), think_time=5.0, seed=7)
    sys_prompts = ob.serve.SystemPrompts(count=4, length=300)
    shared = Requests.poisson(200, rate=3.0, prompt_len=400, output_len=30, system_prompts=sys_prompts, seed=8)
    for reqs in (conv, shared):
        block_size = 16
        keys, offsets = reqs.prompt_block_keys(block_size)
        tree = ob.radix.RadixCache()
        expected = np.zeros(len(reqs), dtype=np.int64)
        for i in range(len(reqs)):
            own = keys[offsets[i] : offsets[i + 1]].view(np.int64).tolist()
            usable = (int(reqs.prompt_len[i]) - 1) // block_size
            expected[i] = tree.match_prefix(own[:usable]).length * block_size
            tree.insert(own)
        # One request at a time (a prompt is whole in the cache before the next arrives).
        spaced = Requests(
            np.arange(len(reqs)) * 1000.0,
            reqs.prompt_len,
            reqs.output_len,
            blocks=reqs.block_ids,
            source_block=reqs.source_block,
            block_offsets=reqs.block_offsets,
        )
        result = simulate(spaced, model="llama-3-8b", gpu="h100", num_blocks=10**9)
        assert expected.sum() > 0.3 * reqs.prompt_len.sum()
        np.testing.assert_array_equal(result.cached_tokens, expected)
        hit_rate = result.summary().prefix_hit_rate
        assert hit_rate == expected.sum() / reqs.prompt_len.sum()


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), concurrency=st.sampled_from([None, 1, 3]))
def test_a_run_without_its_step_rows_has_the_same_request_times(seed: int, concurrency: Any) -> None:
    rng = np.random.default_rng(seed)
    reqs = Requests(np.sort(rng.random(30)), rng.integers(1, 300, 30), rng.integers(1, 60, 30))
    cfg = EngineConfig(num_blocks=120, block_size=4, max_num_batched_tokens=64, max_num_seqs=4, max_model_len=512)
    full = native.run(reqs, cfg, LINEAR, concurrency=concurrency)
    bare = native.run(reqs, cfg, LINEAR, concurrency=concurrency, steps=False)
    assert len(full.steps.start) > 0 and all(len(getattr(bare.steps, f.name)) == 0 for f in fields(bare.steps))
    for name in ("arrival", "admitted", "first_token", "finish", "preemptions", "cached_tokens"):
        np.testing.assert_array_equal(getattr(bare, name), getattr(full, name), err_msg=name)


def test_the_service_alone_keeps_no_step_rows_and_equals_the_reference() -> None:
    # One request at a time: a row for each of its steps would be 96 bytes a step of every request.
    rng = np.random.default_rng(2)
    reqs = Requests(np.sort(rng.random(40) * 8), rng.integers(1, 300, 40), rng.integers(1, 60, 40))
    cfg = EngineConfig(num_blocks=120, block_size=4, max_num_batched_tokens=128, max_num_seqs=8, max_model_len=512)
    from osbench.serve.vllm import engines

    alone = engines.run_alone(reqs, cfg, LINEAR, "reference")  # a StepTime runs natively
    ref = reference.run(reqs, replace(cfg, enable_prefix_caching=False, policy="fcfs"), LINEAR, concurrency=1)
    assert len(alone.steps.start) == 0 and len(ref.steps.start) > 0
    np.testing.assert_array_equal(alone.finish - alone.arrival, ref.finish - ref.arrival)


def test_step_rows_are_needed_by_a_record_and_steps_is_a_flag() -> None:
    reqs = Requests([0.0], [10], [3])
    cfg = EngineConfig(num_blocks=8)
    with pytest.raises(ArgumentError, match="steps=false is not accepted: true with record=True"):
        native.run(reqs, cfg, LINEAR, record=True, steps=False)
    with pytest.raises(ArgumentTypeError, match="steps=1 is not accepted: it must be True or False"):
        native.run(reqs, cfg, LINEAR, steps=1)  # type: ignore[arg-type]
