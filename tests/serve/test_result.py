"""ServeResult on a run worked by hand (three requests, four steps), and its checks of an
engine's raw arrays."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

from osbench.serve import Batch, Requests, ServeResult


@dataclass
class Run:
    """An EngineRun-shaped record, built by hand."""

    admitted: Any = field(default_factory=lambda: [0.0, 1.5, 2.0])
    first_token: Any = field(default_factory=lambda: [0.5, 2.0, 3.0])
    finish: Any = field(default_factory=lambda: [0.5, 3.0, 5.0])
    preemptions: Any = field(default_factory=lambda: [0, 1, 0])
    cached_tokens: Any = field(default_factory=lambda: [0, 100, 25])
    tier_tokens: Any = field(default_factory=lambda: [0, 0, 0])
    start: Any = field(default_factory=lambda: [0.0, 0.5, 2.0, 3.0])
    duration: Any = field(default_factory=lambda: [0.5, 1.0, 1.0, 2.0])
    num_seqs: Any = field(default_factory=lambda: [1, 1, 2, 1])
    prefill_seqs: Any = field(default_factory=lambda: [1, 1, 1, 0])
    prefill_tokens: Any = field(default_factory=lambda: [100, 100, 25, 0])
    decode_seqs: Any = field(default_factory=lambda: [0, 0, 1, 1])
    context_tokens: Any = field(default_factory=lambda: [0, 100, 225, 26])
    attention_pairs: Any = field(default_factory=lambda: [5050, 15050, 6176, 27])
    num_preempted: Any = field(default_factory=lambda: [0, 0, 1, 0])
    num_waiting: Any = field(default_factory=lambda: [0, 1, 0, 0])
    blocks_used: Any = field(default_factory=lambda: [7, 13, 20, 4])
    blocks_cached: Any = field(default_factory=lambda: [6, 12, 18, 18])
    swap_out_bytes: Any = field(default_factory=lambda: [0, 0, 4096, 0])
    swap_in_bytes: Any = field(default_factory=lambda: [0, 0, 0, 4096])
    swap_time: Any = field(default_factory=lambda: [0.0, 0.0, 0.25, 0.25])
    recomputed_tokens: Any = field(default_factory=lambda: [0, 0, 0, 0])
    tier_load_bytes: Any = field(default_factory=lambda: [0, 0, 0, 0])
    tier_time: Any = field(default_factory=lambda: [0.0, 0.0, 0.0, 0.0])

    @property
    def steps(self) -> Run:  # the per-step arrays sit beside the per-request ones here
        return self


@dataclass(frozen=True)
class Config:
    num_blocks: int = 40


REQUESTS = Requests([0.0, 1.0, 2.0], [100, 200, 50], [1, 3, 5])


def result(**change: Any) -> ServeResult:
    return ServeResult.from_run(Run(**change), REQUESTS, Config())


def test_per_request_latencies() -> None:
    r = result()
    assert r.ttft.tolist() == [0.5, 1.0, 1.0]
    tpot = r.tpot
    assert math.isnan(tpot[0]) and tpot[1:].tolist() == [0.5, 0.5]  # (3 - 2) / 2, (5 - 3) / 4; one token: none
    assert r.e2e.tolist() == [0.5, 2.0, 3.0] and r.queueing.tolist() == [0.0, 0.5, 0.0]
    assert r.duration == 5.0 and r.num_blocks == 40 and len(r.steps) == 4
    assert r.steps.end.tolist() == [0.5, 1.5, 3.0, 5.0]
    assert r.steps.batch(2) == Batch(2, 1, 25, 1, 225, 6176)


def test_summary_worked_by_hand() -> None:
    s = result().summary()
    assert (s.requests, s.duration, s.request_throughput, s.output_throughput) == (3, 5.0, 0.6, 1.8)
    assert math.isclose(s.ttft.mean, 2.5 / 3) and (s.ttft.p50, s.ttft.p90, s.ttft.p99) == (1.0, 1.0, 1.0)
    assert s.e2e.p50 == 2.0 and math.isclose(s.e2e.p90, 2.8) and math.isclose(s.e2e.p99, 2.98)  # linear interpolation
    assert (s.tpot.mean, s.tpot.p50) == (0.5, 0.5)  # over the two requests with more than one token
    assert math.isclose(s.queueing.mean, 0.5 / 3)
    assert (s.slo_ttft, s.slo_tpot, s.slo_met, s.goodput) == (None, None, 3, 0.6)
    assert math.isclose(s.kv_utilization, (7 * 0.5 + 13 * 1 + 20 * 1 + 4 * 2) / 4.5 / 40)
    assert s.kv_utilization_peak == 0.5
    assert (s.preemptions, s.preempted_requests) == (1, 1)
    assert (s.swapped_out_bytes, s.swapped_in_bytes, s.swap_time, s.recomputed_tokens) == (4096, 4096, 0.5, 0)
    assert math.isclose(s.prefix_hit_rate, 125 / 350)
    assert (s.steps, s.mean_step_time, s.mean_batch_size) == (4, 1.125, 1.25)


@pytest.mark.parametrize(
    ("slo_ttft", "slo_tpot", "met"),
    [
        (1.0, 0.5, 3),
        (0.9, None, 1),  # only the first request's first token came within 0.9 s
        (None, 0.4, 1),  # the one-token request has no TPOT: it meets any TPOT SLO
        (0.5, 0.4, 1),
        (0.4, None, 0),
    ],
)
def test_goodput(slo_ttft: Any, slo_tpot: Any, met: int) -> None:
    s = result().summary(slo_ttft=slo_ttft, slo_tpot=slo_tpot)
    assert s.slo_met == met and s.goodput == met / 5.0 and s.slo_attainment == met / 3


def test_to_dict_is_plain_json() -> None:
    d = result().to_dict()
    assert d["config"] == {"num_blocks": 40} and d["summary"]["ttft"]["p50"] == 1.0
    assert d["steps"]["blocks_used"] == [7, 13, 20, 4]
    json.dumps(d)


@pytest.mark.parametrize(
    ("change", "error", "message"),
    [
        ({"finish": [0.5, 3.0]}, ValueError, "run.finish is not accepted: it has 2 entries, expected 3"),
        ({"finish": [0.5, 3.0, float("nan")]}, ValueError, "run.finish[2]=nan is not accepted"),
        (
            {"admitted": [0.0, 0.5, 2.0]},
            ValueError,
            "run.admitted[1]=0.5 is not accepted: request 1 needs arrival <= admitted",
        ),
        (
            {"first_token": [0.5, 1.0, 3.0]},
            ValueError,
            "run.first_token[1]=1.0 is not accepted: request 1 needs admitted",
        ),
        (
            {"finish": [0.5, 3.0, 2.5]},
            ValueError,
            "run.finish[2]=2.5 is not accepted: request 2 needs first_token <= finish",
        ),
        ({"preemptions": [0, -1, 0]}, ValueError, "run.preemptions[1]=-1 is not accepted"),
        (
            {"cached_tokens": [0.0, 1.0, 2.0]},
            TypeError,
            "run.cached_tokens is not accepted: it must be a 1-D int64 array",
        ),
        ({"blocks_used": [1, 2, 3]}, ValueError, "run.steps.blocks_used is not accepted: it has 3 entries, expected 4"),
        ({"duration": [0.5, 1.0, float("inf"), 2.0]}, ValueError, "run.steps.duration[2]=inf is not accepted"),
        ({"start": [[0.0]] * 4}, TypeError, "run.steps.start is not accepted: it must be a 1-D float64 array"),
    ],
)
def test_bad_runs_are_refused(change: dict[str, Any], error: type, message: str) -> None:
    with pytest.raises(error) as info:
        result(**change)
    assert message in str(info.value)


def test_bad_arguments() -> None:
    with pytest.raises(TypeError, match="run is not accepted: it has no 'admitted' array"):
        ServeResult.from_run(object(), REQUESTS, Config())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="num_blocks=None is not accepted"):
        ServeResult.from_run(Run(), REQUESTS, object())
    assert ServeResult.from_run(Run(), REQUESTS, object(), num_blocks=80).summary().kv_utilization_peak == 0.25
    with pytest.raises(TypeError, match=r"requests=.* is not accepted"):
        ServeResult.from_run(Run(), [1, 2, 3], Config())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="slo_ttft=0 is not accepted"):
        result().summary(slo_ttft=0)


def test_empty_run() -> None:
    empty = Run(**dict.fromkeys(Run.__dataclass_fields__, np.zeros(0)))
    s = ServeResult.from_run(empty, Requests([], [], []), Config()).summary()
    assert s.requests == 0 and s.steps == 0 and math.isnan(s.ttft.mean) and math.isnan(s.kv_utilization)
