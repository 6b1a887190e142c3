"""Lecture demo 02 tables (quick mode) and the traces reader."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

import numpy as np
import pytest

import osbench as ob
from osbench.sched import lecture


@pytest.fixture(scope="module")
def tables() -> dict[str, ob._table.Table]:
    return {t.key: t for t in lecture.tables(quick=True)}


def test_every_table_renders(tables: dict) -> None:
    assert set(tables) == {
        "convoy",
        "distributions",
        "quantum_sweep",
        "predictions",
        "aging",
        "exercise_1",
        "lecture_vs_theory",
    }
    for t in tables.values():
        assert t.rows and all(len(r) == len(t.columns) for r in t.rows)
        assert t.to_text() and t.to_markdown() and t.to_html() and t.to_dict()["rows"]


def test_convoy_and_exercise(tables: dict) -> None:
    assert [r[-1] for r in tables["convoy"].rows] == [11.0, 5.0]
    assert [r[2] for r in tables["exercise_1"].rows] == [12.25, 6.5, 9.25]
    assert all(r[2] == r[3] for r in tables["exercise_1"].rows)


def test_distribution_table_shape(tables: dict) -> None:
    rows = {(r[0].split()[0], r[1]): r for r in tables["distributions"].rows}
    for sizes in ("exponential", "bimodal", "lognormal"):
        # SRPT is best; FCFS is worst under the heavy tail.
        assert rows[(sizes, "srpt")][2] == min(rows[(sizes, p)][2] for p in ("fcfs", "sjf", "srpt", "rr", "mlfq", "ps"))
    assert rows[("lognormal", "fcfs")][2] > 5 * rows[("lognormal", "srpt")][2]
    # Under the heavy tail the largest jobs fare better under SRPT than under RR.
    assert rows[("lognormal", "srpt")][5] < rows[("lognormal", "rr")][5]


def test_quantum_sweep_is_u_shaped(tables: dict) -> None:
    rows = tables["quantum_sweep"].rows
    means = [r[1] for r in rows[:-1]]
    best = int(np.argmin(means))
    assert 0 < best < len(means) - 1
    fractions = [r[2] for r in rows[:-1]]
    assert fractions == sorted(fractions, reverse=True) and fractions[0] > 0.15


def test_predictions_table(tables: dict) -> None:
    rows = tables["predictions"].rows
    srpt = rows[: len(lecture.SIGMAS)]
    mlfq, fcfs = rows[-2], rows[-1]
    means = [r[1] for r in srpt]
    assert means == sorted(means)  # the worse the prediction, the worse SRPT
    assert all(m < fcfs[1] / 3 for m in means)
    assert all(mlfq[2] < r[2] for r in srpt[1:])  # MLFQ's slowdown beats every noisy SRPT


def test_aging_trades_classes(tables: dict) -> None:
    rows = tables["aging"].rows
    strict, fastest = rows[0], rows[len(lecture.AGING) - 1]
    assert strict[1] < fastest[1] and strict[2] > fastest[2]
    assert rows[-1][0] == "theory, strict" and rows[-1][1] == pytest.approx(2.5)


@pytest.mark.parametrize("name", ["azure-code-2023", "azure-conv-2023", "mooncake-conversation", "mooncake-synthetic"])
def test_from_requests(name: str, dataset: Callable[[str], Path]) -> None:
    path = dataset(name)
    w = ob.sched.Workload.from_requests(name, load=0.8)  # by its dataset name
    assert np.array_equal(w.arrival, ob.sched.Workload.from_requests(path, load=0.8).arrival)
    assert len(w) > 1000
    assert w.arrival.min() == 0.0 and np.all(np.isfinite(w.arrival))
    assert w.size.mean() == pytest.approx(1.0)
    assert w.offered_load == pytest.approx(0.8)
    real = ob.sched.Workload.from_requests(path, size="total", tokens_per_second=1e5, limit=500)
    assert len(real) == 500 and real.size.min() > 0
    s = ob.sched.simulate(w, "srpt")
    assert s.summary().mean_response <= ob.sched.simulate(w, "fcfs").summary().mean_response
    f = ob.sched.Workload.from_requests(path, size=lambda i, o: i + 2 * o, limit=100)
    assert len(f) == 100


def test_from_requests_bad_input(tmp_path: Path) -> None:
    bad = tmp_path / "x.csv"
    bad.write_text("a,b,c\n1,2,3\n")
    with pytest.raises(ValueError, match="request log"):
        ob.sched.Workload.from_requests(bad)
    good = tmp_path / "y.jsonl"
    good.write_text(
        '{"timestamp": 0, "input_length": 5, "output_length": 0}\n'
        '{"timestamp": 1000, "input_length": 7, "output_length": 3}\n'
    )
    w = ob.sched.Workload.from_requests(good, size="output", tokens_per_second=1.0)
    assert w.size.tolist() == [1.0, 3.0] and w.arrival.tolist() == [0.0, 1.0]
    with pytest.raises(ValueError, match="size"):
        ob.sched.Workload.from_requests(good, size="prompt")
    with pytest.raises(ValueError, match="load"):
        ob.sched.Workload.from_requests(good, load=None)
    with pytest.raises(ValueError, match="tokens_per_second"):
        ob.sched.Workload.from_requests(good, tokens_per_second=0)
    assert os.fspath(good)
