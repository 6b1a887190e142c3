"""Closed-loop clients (``simulate(..., concurrency=N)``, as ``benchmark_serving
--max-concurrency N`` sends requests): at most N in flight, each sent at its arrival or when a
request finishes and leaves room; the native engine equal to the reference step for step; and
the open loop as the limit of many clients. The property test (native equal to the reference on
random workloads under every limit) is in test_native.py, beside its workloads."""

from __future__ import annotations

from dataclasses import asdict

import numpy as np
import pytest
from runs import assert_same_runs

import osbench as ob
from osbench.errors import ArgumentError, ArgumentTypeError
from osbench.serve import native, reference
from osbench.serve.config import EngineConfig
from osbench.serve.requests import Requests
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
