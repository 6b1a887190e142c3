"""osbench.sched: bad input gets a clear error naming the argument, from either engine."""

from __future__ import annotations

import math

import numpy as np
import pytest

import osbench as ob
from osbench.sched import Workload, simulate


@pytest.mark.parametrize(
    "call, exc, match",
    [
        (lambda: Workload([0.0, -1.0], [1.0, 1.0]), ValueError, "arrival"),
        (lambda: Workload([0.0, math.nan], [1.0, 1.0]), ValueError, "arrival"),
        (lambda: Workload([0.0, 1.0], [1.0, -2.0]), ValueError, "size"),
        (lambda: Workload([0.0, 1.0], [1.0, math.nan]), ValueError, "size"),
        (lambda: Workload([0.0, 1.0], [0.0, 1.0]), ValueError, "size"),
        (lambda: Workload([0.0, 1.0], [1.0]), ValueError, "one size per job"),
        (lambda: Workload([0.0], [1.0], predicted=[1.0, 2.0]), ValueError, "predicted"),
        (lambda: Workload([0.0], [1.0], priority=[0.5]), TypeError, "priority"),
        (lambda: Workload(["a"], [1.0]), TypeError, "arrival"),
        (lambda: simulate(Workload.batch([1]), "lifo"), ValueError, "policy"),
        (lambda: simulate(Workload.batch([1]), "rr", quantum=0), ValueError, "quantum"),
        (lambda: simulate(Workload.batch([1]), "rr", quantum=-1.0), ValueError, "quantum"),
        (lambda: simulate(Workload.batch([1]), "rr", quantum=math.nan), ValueError, "quantum"),
        (lambda: simulate(Workload.batch([1]), "mlfq", quantum=math.inf), ValueError, "quantum"),
        (lambda: simulate(Workload.batch([1]), "fcfs", quantum=2.0), ValueError, "quantum"),
        (lambda: simulate(Workload.batch([1]), "ps", switch_cost=0.1), ValueError, "switch_cost"),
        (lambda: simulate(Workload.batch([1]), "rr", switch_cost=-0.1), ValueError, "switch_cost"),
        (lambda: simulate(Workload.batch([1]), "mlfq", levels=0), ValueError, "levels"),
        (lambda: simulate(Workload.batch([1]), "mlfq", boost=0.0), ValueError, "boost"),
        (lambda: simulate(Workload.batch([1]), "priority", aging=-1.0), ValueError, "aging"),
        (lambda: simulate(Workload.batch([1]), "srpt", use_predictions=True), ValueError, "predicted"),
        (lambda: simulate(Workload.batch([1]), "fcfs", engine="gpu"), ValueError, "engine"),
        (lambda: simulate([1.0, 2.0], "fcfs"), TypeError, "Workload"),
        (lambda: ob.sched.workload(0), ValueError, "n"),
        (lambda: ob.sched.workload(10, sizes="zipf"), ValueError, "sizes"),
        (lambda: ob.sched.workload(10, sizes="lognormal", alpha=2), ValueError, "alpha"),
        (lambda: ob.sched.workload(10, load=-0.5), ValueError, "load"),
        (lambda: ob.sched.workload(10, load="high"), TypeError, "load"),
        (lambda: ob.sched.workload(3, sizes=[1.0, 2.0]), ValueError, "sizes"),
        (lambda: ob.sched.workload(10, sizes="bimodal", p_large=1.5), ValueError, "p_large"),
        (lambda: ob.sched.workload(10, sizes="pareto", low=1.0), ValueError, "low"),
    ],
)
def test_bad_input(call, exc, match) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(exc, match=match):
        call()


def test_native_rejects_bad_arrays_directly() -> None:
    defaults = {
        "quantum": 0.1,
        "switch_cost": 0.0,
        "levels": None,
        "boost": None,
        "use_predictions": False,
        "aging": 0.0,
    }

    def nat(policy: str, arrival: np.ndarray, size: np.ndarray) -> object:
        return ob._native.sched_simulate(policy, arrival, size, None, None, **defaults)

    with pytest.raises(ValueError, match="size"):
        nat("fcfs", np.zeros(2), np.ones(3))
    with pytest.raises(ValueError, match="size"):
        nat("fcfs", np.zeros(2), np.array([1.0, -1.0]))
    with pytest.raises(ValueError, match="arrival"):
        nat("fcfs", np.array([math.inf]), np.ones(1))
    with pytest.raises(ValueError, match="policy"):
        nat("nope", np.zeros(1), np.ones(1))
