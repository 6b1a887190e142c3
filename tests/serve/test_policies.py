"""The batch-level policies' facts (lecture section 2 in a batch server): one request at a time
they all serve alike; SRPT on exact output lengths beats FCFS where section 2 says it should,
and degrades toward it as the prediction error grows; aging bounds strict priority's
starvation; the prediction models; bad input named."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import osbench as ob
from osbench.errors import ArgumentError
from osbench.serve import EngineConfig, Requests, StepTime, native, reference
from osbench.serve.config import POLICIES
from osbench.serve.vllm.prediction import predicted_output_len

# Every step costs the same, whatever it holds: a request's service is its number of steps,
# the single server of section 2.
CONSTANT = StepTime.linear(0.01, 0.0, 0.0, 0.0)


def heavy_tailed(n: int, rate: float, seed: int) -> Requests:
    """Short prompts (one step of prefill), lognormal output lengths (long tail), Poisson arrivals."""
    rng = np.random.default_rng(seed)
    output = np.minimum(np.rint(rng.lognormal(3.5, 1.3, n)).astype(np.int64) + 1, 2000)
    return Requests(np.cumsum(rng.exponential(1 / rate, n)), np.full(n, 32), output)


def config(policy: str, **options: object) -> EngineConfig:
    """Memory without bound: the KV cache never preempts."""
    return EngineConfig(
        num_blocks=100_000, block_size=16, max_num_batched_tokens=4096, max_model_len=4096, policy=policy, **options
    )


def mean_e2e(requests: Requests, cfg: EngineConfig) -> float:
    run = native.run(requests, cfg, CONSTANT)
    return float((run.finish - run.arrival).mean())


@pytest.mark.parametrize("engine", [native.run, reference.run])
def test_one_request_at_a_time_every_policy_gives_the_same_service(engine) -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(3)
    n = 40
    reqs = Requests(
        np.cumsum(rng.exponential(0.2, n)),
        rng.integers(1, 300, n),
        rng.integers(1, 200, n),
        priority=rng.integers(0, 3, n),
    )
    variants = [
        {},
        {"aging": 2.0},
        {"mlfq_levels": 3, "mlfq_quantum": 8, "mlfq_boost": 5},
        {"prediction": "noisy", "prediction_sigma": 2.0},
        {"prediction": "bucketed", "prediction_bucket": 50},
    ]
    services = []
    for policy in POLICIES:
        for options in variants:
            run = engine(reqs, config(policy, max_num_seqs=8, **options), CONSTANT, concurrency=1)
            services.append(run.finish - run.arrival)
    for service in services[1:]:
        np.testing.assert_array_equal(service, services[0])
    # And that service is each request's time alone, as the summary's slowdown divides by.
    alone = ob.serve.simulate(reqs, step_time=CONSTANT, num_blocks=100_000, max_num_seqs=8, max_model_len=4096).alone
    np.testing.assert_array_equal(services[0], alone)


def test_srpt_on_exact_lengths_has_the_lowest_mean_e2e_and_degrades_toward_fcfs_with_noise() -> None:
    # One request at a time (max_num_seqs=1) is section 2's single server, at load about 0.9,
    # with a long tail of output lengths: there SRPT is best and FCFS suffers the convoy. The
    # noisy predictions average eight seeds of the error (none of them the workload's).
    reqs = heavy_tailed(400, rate=1.15, seed=12345)
    fcfs = mean_e2e(reqs, config("fcfs", max_num_seqs=1))
    exact = mean_e2e(reqs, config("srpt", max_num_seqs=1))
    noisy = [
        np.mean(
            [
                mean_e2e(
                    reqs, config("srpt", max_num_seqs=1, prediction="noisy", prediction_sigma=s, prediction_seed=k)
                )
                for k in range(8)
            ]
        )
        for s in (0.5, 1.0, 2.0)
    ]
    mlfq = mean_e2e(reqs, config("mlfq", max_num_seqs=1))
    assert exact < noisy[0] < noisy[1] < noisy[2] < fcfs
    assert exact <= min(mlfq, mean_e2e(reqs, config("sjf", max_num_seqs=1)))
    # sjf and srpt admit alike when nothing is preempted (a waiting request has generated
    # nothing, so its remaining is its total); and mlfq is fcfs: every waiting request is at
    # level 0, attained service counting only while it runs.
    assert mean_e2e(reqs, config("sjf", max_num_seqs=1)) == exact
    assert mlfq == fcfs


def test_short_requests_misjudged_as_long_suffer_in_slowdown() -> None:
    reqs = heavy_tailed(400, rate=1.15, seed=12345)
    opts = {"step_time": CONSTANT, "num_blocks": 100_000, "max_num_seqs": 1, "max_model_len": 4096}
    exact = ob.serve.simulate(reqs, policy="srpt", **opts).summary()
    noisy = ob.serve.simulate(reqs, policy="srpt", prediction="noisy", prediction_sigma=2.0, **opts).summary()
    fcfs = ob.serve.simulate(reqs, policy="fcfs", **opts).summary()
    assert exact.slowdown_short.p99 < noisy.slowdown_short.p99 < fcfs.slowdown_short.p99
    assert min(s.slowdown.p50 for s in (exact, noisy, fcfs)) >= 1.0


def test_aging_bounds_the_wait_of_the_batch_class() -> None:
    rng = np.random.default_rng(4)
    n = 300
    reqs = Requests(np.cumsum(rng.exponential(0.9, n)), np.full(n, 32), rng.integers(50, 150, n))
    classes = np.where(rng.random(n) < 0.2, 1, 0)  # one in five is batch work (priority 1)
    reqs = Requests(reqs.arrival, reqs.prompt_len, reqs.output_len, priority=classes)
    waits = []
    for aging in (0.0, 0.05, 0.5):
        run = native.run(reqs, config("priority", max_num_seqs=1, aging=aging), CONSTANT)
        waits.append(float((run.admitted - run.arrival)[classes == 1].max()))
    assert waits[0] > waits[1] > waits[2]
    # The summary's per-class figures say the same, class by class, with their slowdowns.
    opts = {"step_time": CONSTANT, "num_blocks": 100_000, "max_num_seqs": 1, "policy": "priority"}
    strict, aged = (ob.serve.simulate(reqs, aging=a, **opts).summary().by_priority for a in (0.0, 0.5))
    assert [c.priority for c in strict] == [0, 1] and [c.requests for c in strict] == [n - classes.sum(), classes.sum()]
    assert strict[1].max_queueing == waits[0] and aged[1].max_queueing == waits[2]
    assert strict[1].slowdown.p99 > aged[1].slowdown.p99 and strict[0].slowdown.p99 < aged[0].slowdown.p99
    unprioritised = Requests(reqs.arrival, reqs.prompt_len, reqs.output_len)
    assert ob.serve.simulate(unprioritised, **{**opts, "policy": "fcfs"}).summary().by_priority == ()


def test_the_prediction_models() -> None:
    reqs = Requests([0.0, 1.0, 2.0, 3.0], [5, 5, 5, 5], [1, 100, 128, 129], predicted_output_len=[7, 0, 9, 3])
    exact = predicted_output_len(reqs, config("srpt"))
    np.testing.assert_array_equal(exact, reqs.output_len)
    np.testing.assert_array_equal(predicted_output_len(reqs, config("srpt", prediction="given")), [7, 0, 9, 3])
    bucketed = predicted_output_len(reqs, config("sjf", prediction="bucketed", prediction_bucket=128))
    np.testing.assert_array_equal(bucketed, [64, 64, 64, 192])  # classes (0, 128] and (128, 256]
    noisy = config("srpt", prediction="noisy", prediction_sigma=1.0, prediction_seed=5)
    np.testing.assert_array_equal(predicted_output_len(reqs, noisy), predicted_output_len(reqs, noisy))
    z = np.random.default_rng(5).standard_normal(4)
    np.testing.assert_array_equal(
        predicted_output_len(reqs, noisy), np.maximum(1, np.rint(reqs.output_len * np.exp(z)))
    )
    assert not (predicted_output_len(reqs, noisy) == exact).all()
    np.testing.assert_array_equal(predicted_output_len(reqs, dataclasses.replace(noisy, prediction_sigma=0.0)), exact)
    # A policy that reads no prediction sees the true lengths, whatever the model.
    np.testing.assert_array_equal(predicted_output_len(reqs, config("fcfs", prediction="given")), exact)


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda: Requests([0.0, 1.0], [5, 5], [5, 5], predicted_output_len=[3]), "predicted_output_len is not accepted: it has 1 entries, one per request is 2"),
        (lambda: Requests([0.0], [5], [5], predicted_output_len=[-1]), "predicted_output_len"),
        (lambda: config("srpt", prediction="oracle"), "prediction='oracle' is not accepted: use one of exact, noisy, bucketed, given"),
        (lambda: config("mlfq", mlfq_levels=0), "mlfq_levels=0 is not accepted"),
        (lambda: config("mlfq", mlfq_quantum=0), "mlfq_quantum=0 is not accepted"),
        (lambda: config("priority", aging=-0.5), "aging=-0.5 is not accepted"),
        (lambda: config("srpt", prediction_sigma=float("nan")), "prediction_sigma=nan is not accepted"),
        (lambda: native.run(Requests([0.0], [5], [5]), config("srpt", prediction="given"), CONSTANT), "prediction='given': it has no predicted_output_len"),
    ],
)  # fmt: skip
def test_bad_policy_input_is_refused_with_the_argument_named(make, match: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ArgumentError, match=match):
        make()
