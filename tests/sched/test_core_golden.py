"""The core's golden scheduling runs (``rust/osbench-core/src/sched/golden.rs``) held to the
reference engine: the same seeded workload, regenerated here, run through
``osbench.sched.reference``; a changed checksum in the core's table, or a generator that drifted
from its twin below, fails here."""

from __future__ import annotations

import re
from typing import Any, Callable

import numpy as np

import osbench as ob
from osbench.host.reference import SplitMix64


def golden_workload(seed: int, n: int) -> ob.sched.Workload:
    """The twin of the core's ``golden_workload``: bursts, ties, load about 0.92, every number
    a multiple of 1/8."""
    rng = SplitMix64(seed)
    arrival, size, predicted, klass = [], [], [], []
    t = 0.0
    for _ in range(n):
        if rng.below(4) != 0:
            t += (1 + rng.below(16)) / 4
        arrival.append(t)
        s = (1 + rng.below(24)) / 8
        size.append(s)
        klass.append(rng.below(3))
        predicted.append(s * (1 + rng.below(4)) / 2)
    return ob.sched.Workload(np.array(arrival), np.array(size), np.array(klass), np.array(predicted))


def weighted(values: np.ndarray) -> float:
    """Σ (i + 1) * v[i], added in index order as the core does."""
    total = 0.0
    for i, v in enumerate(values.tolist()):
        total += (i + 1) * v
    return total


def parameters(text: str) -> dict[str, Any]:
    """``quantum: 0.5, levels: 3`` as keyword arguments."""
    out: dict[str, Any] = {}
    for name, value in re.findall(r"(\w+): ([\w.]+)", text):
        out[name] = value == "true" if value in ("true", "false") else float(value) if "." in value else int(value)
    return out


def test_core_golden_runs_are_the_reference_engines(core_table: Callable[[str, str], str]) -> None:
    rows = re.findall(
        r'\("(\w+)", (?:D|Params \{ (.*?), \.\.D \}), ([\d.]+), ([\d.]+), (\d+)\)',
        core_table("sched/golden.rs", "GOLDEN_RUNS"),
    )
    assert len(rows) == 14 and {r[0] for r in rows} == set(ob.sched.POLICIES)
    w = golden_workload(7, 400)
    for policy, params, completion, first_start, switches in rows:
        s = ob.sched.simulate(w, policy, engine="reference", **parameters(params))
        got = (weighted(s.completion), weighted(s.first_start), s.switches)
        assert got == (float(completion), float(first_start), int(switches)), (policy, params)
