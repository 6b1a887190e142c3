"""Closed-loop clients (``simulate(..., concurrency=N)``, as ``benchmark_serving
--max-concurrency N`` sends requests): at most N in flight, each sent at its arrival or when a
request finishes and leaves room; the native engine equal to the reference step for step; and
the open loop as the limit of many clients. The property test (native equal to the reference on
random workloads under every limit) is in test_native.py, beside its workloads."""

from __future__ import annotations

from dataclasses import asdict

import numpy as np
import pytest
from runs import assert_same_runs, native_counted

import osbench as ob
from osbench.errors import ArgumentError, ArgumentTypeError
from osbench.serve import native, reference
from osbench.serve.config import EngineConfig
from osbench.serve.requests import Requests
from osbench.serve.run import Clients
from osbench.serve.steptime import StepTime

LINEAR = StepTime.linear(0.0037, 1.3e-5, 7.1e-4, 3.3e-7)


def burst(n: int = 40) -> Requests:
    rng = np.random.default_rng(3)
    return Requests(np.zeros(n), rng.integers(20, 200, n), rng.integers(5, 60, n))


CONFIG = EngineConfig(num_blocks=400, block_size=16, max_num_batched_tokens=512, max_num_seqs=64)


@pytest.mark.parametrize("engine", ["native", "reference"])
def test_a_burst_is_served_n_at_a_time_each_sent_when_one_finishes(engine: str) -> None:
    reqs = burst()
    run = ob.serve.simulate(reqs, engine=engine, step_time=LINEAR, concurrency=4, **asdict(CONFIG))
    assert int(run.steps.num_seqs.max()) == 4  # the engine would take 40 at once
    open_loop = ob.serve.simulate(reqs, engine=engine, step_time=LINEAR, **asdict(CONFIG))
    assert int(open_loop.steps.num_seqs.max()) > 4
    # Latencies count from when each was sent: the queueing behind the clients is not the engine's.
    assert float(run.ttft.max()) < float(open_loop.ttft.max())


def test_the_fifth_request_of_four_clients_is_sent_when_the_first_one_finishes() -> None:
    reqs = burst(5)
    run = reference.run(reqs, CONFIG, LINEAR, concurrency=4)
    assert (run.arrival[:4] == 0).all()
    assert run.arrival[4] == run.finish[:4].min()


def test_concurrency_at_least_the_requests_is_the_open_loop() -> None:
    reqs = burst(12)
    for engine in (native, reference):
        assert_same_runs(engine.run(reqs, CONFIG, LINEAR), engine.run(reqs, CONFIG, LINEAR, concurrency=12))


@pytest.mark.parametrize("engine", ["native", "reference"])
@pytest.mark.parametrize(("value", "error"), [(0, ArgumentError), (-1, ArgumentError), (1.5, ArgumentTypeError)])
def test_bad_concurrency_is_refused_by_name(engine: str, value: object, error: type) -> None:
    with pytest.raises(error, match="concurrency="):
        ob.serve.simulate(burst(3), engine=engine, step_time=LINEAR, concurrency=value, **asdict(CONFIG))


@pytest.mark.parametrize("engine", [native, reference])
def test_a_client_sends_its_next_request_a_turnaround_after_the_finish(engine) -> None:  # type: ignore[no-untyped-def]
    reqs = burst(5)
    run = engine.run(reqs, CONFIG, LINEAR, concurrency=Clients(4, turnaround=0.25))
    assert (run.arrival[:4] == 0).all() and run.arrival[4] == run.finish[:4].min() + 0.25
    # a turnaround of 0 is the plain count
    assert_same_runs(
        engine.run(reqs, CONFIG, LINEAR, concurrency=Clients(4)), engine.run(reqs, CONFIG, LINEAR, concurrency=4)
    )


def test_a_turnaround_makes_the_next_request_miss_the_step_that_starts_at_the_finish() -> None:
    # Two clients: when one request finishes, the other's next decode step starts at once; the
    # new request, sent a millisecond later, waits for it before its prefill.
    reqs = Requests(np.zeros(3), [64, 64, 64], [4, 40, 4])
    at_once = reference.run(reqs, CONFIG, LINEAR, concurrency=2, record=True)
    later = reference.run(reqs, CONFIG, LINEAR, concurrency=Clients(2, 1e-3), record=True)
    decode = LINEAR.coefficients[0] + LINEAR.coefficients[2]  # one request decoding (its context: tens of us)
    ttft_at_once = at_once.first_token[2] - at_once.arrival[2]
    ttft_later = later.first_token[2] - later.arrival[2]
    assert np.isclose(ttft_later - ttft_at_once, decode - 1e-3, atol=1e-4)


@pytest.mark.parametrize("engine", [native, reference])
def test_the_requests_after_a_warm_up_are_sent_once_all_of_it_has_finished(engine) -> None:  # type: ignore[no-untyped-def]
    reqs = burst(20)
    run = engine.run(reqs, CONFIG, LINEAR, concurrency=Clients(4, turnaround=0.25, warmup=6))
    drained = run.finish[:6].max() + 0.25
    # the first four after it all go at once, on an idle engine: the warm-up's places are all free
    assert (run.arrival[6:10] == drained).all() and run.arrival[10:].min() > drained
    # ... as if the warm-up had been served alone and the others had arrived then
    alone = engine.run(reqs[:6], CONFIG, LINEAR, concurrency=Clients(4, turnaround=0.25))
    assert alone.finish.max() + 0.25 == drained
    later = Requests(np.r_[np.zeros(6), np.full(14, drained)], reqs.prompt_len, reqs.output_len)
    assert_same_runs(run, engine.run(later, CONFIG, LINEAR, concurrency=Clients(4, turnaround=0.25)))


def test_a_warm_up_of_every_request_or_none_changes_nothing() -> None:
    reqs = burst(12)
    for engine in (native, reference):
        plain = engine.run(reqs, CONFIG, LINEAR, concurrency=Clients(3, 0.1))
        for warmup in (0, 12, 50):
            assert_same_runs(plain, engine.run(reqs, CONFIG, LINEAR, concurrency=Clients(3, 0.1, warmup)))


@pytest.mark.parametrize(
    ("kw", "error", "name"),
    [
        ({"count": 2, "warmup": -1}, ArgumentError, "warmup="),
        ({"count": 2, "warmup": 1.5}, ArgumentTypeError, "warmup="),
        ({"count": 2, "warmup": "2"}, ArgumentTypeError, "warmup="),
        ({"count": 2, "warmup": 2**70}, ArgumentError, "warmup="),
        ({"count": 0}, ArgumentError, "concurrency="),
        ({"count": 2, "turnaround": -1.0}, ArgumentError, "turnaround="),
        ({"count": 2, "turnaround": float("nan")}, ArgumentError, "turnaround="),
        ({"count": 2, "turnaround": "1ms"}, ArgumentTypeError, "turnaround="),
    ],
)
def test_bad_clients_are_refused_by_name(kw: dict, error: type, name: str) -> None:  # type: ignore[type-arg]
    with pytest.raises(error, match=name):
        Clients(**kw)


# The clock is float64 seconds. A turnaround or steps that would carry it to infinity are refused
# by name in both engines (each send and each step's end checked as it is made), and simulate()
# refuses up front a turnaround that would carry it where a step no longer moves it.
HUGE = 1.7e308


@pytest.mark.parametrize("engine", [native, reference])
@pytest.mark.parametrize("warmup", [0, 1])
def test_a_turnaround_that_sends_at_infinity_is_refused_by_name(engine, warmup: int) -> None:  # type: ignore[no-untyped-def]
    reqs = burst(3)
    with pytest.raises(ArgumentError, match=r"turnaround=1\.7e\+?308 is not accepted"):
        engine.run(reqs, CONFIG, LINEAR, concurrency=Clients(1, HUGE, warmup=warmup))
    # one request per client sends nothing after a finish: nothing to refuse
    assert engine.run(reqs, CONFIG, LINEAR, concurrency=Clients(3, HUGE)).finish.max() < 1.0


@pytest.mark.parametrize("engine", [native, reference])
@pytest.mark.parametrize("concurrency", [None, 1])
def test_steps_that_carry_the_clock_to_infinity_are_refused_by_name(engine, concurrency) -> None:  # type: ignore[no-untyped-def]
    reqs = Requests(np.zeros(3), [8, 8, 8], [3, 3, 3])
    with pytest.raises(
        ArgumentError, match=r"step_time=a step of .* is not accepted: steps whose times keep the clock finite"
    ):
        engine.run(reqs, CONFIG, StepTime.linear(1e308, 0.0, 0.0, 0.0), concurrency=concurrency)


def test_the_decode_jump_refuses_the_same_steps() -> None:
    # The native engine's jump over quiet decode steps sums their times as stepping would: the
    # run below jumps (at 3e307 s a step its five steps end in time), and at 5e307 s a step its
    # fourth would end at infinity, jumped or not.
    reqs = Requests(np.zeros(1), [8], [5])
    _, jumped = native_counted(reqs, CONFIG, StepTime.linear(3e307, 0.0, 0.0, 0.0))
    assert jumped > 0
    step = StepTime.linear(5e307, 0.0, 0.0, 0.0)
    for jump in (True, False):
        with pytest.raises(ArgumentError, match="step_time=a step of"):
            native.run(reqs, CONFIG, step, jump=jump)


@pytest.mark.parametrize("engine", ["native", "reference"])
def test_simulate_refuses_a_turnaround_past_where_a_step_moves_the_clock(engine: str) -> None:
    reqs = burst(3)
    step = StepTime.linear(1e-3, 0.0, 0.0, 0.0)
    with pytest.raises(ArgumentError, match=r"turnaround=1e\+300 is not accepted: over 3 requests"):
        ob.serve.simulate(reqs, engine=engine, step_time=step, num_blocks=400, concurrency=Clients(1, 1e300))
    # a turnaround of a day is far inside: latencies still count the steps
    run = ob.serve.simulate(reqs, engine=engine, step_time=step, num_blocks=400, concurrency=Clients(1, 86400.0))
    assert float(run.ttft.min()) > 0
