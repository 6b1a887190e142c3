"""osbench.sched workloads: Poisson arrivals and size distributions, classes, predictions."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import osbench as ob
from osbench.sched import simulate


def test_workload_generation() -> None:
    w = ob.sched.workload(200_000, load=0.8, sizes="lognormal", seed=1)
    assert w.size.mean() == pytest.approx(1.0, rel=0.05)
    assert w.offered_load == pytest.approx(0.8, rel=0.05)
    np.testing.assert_array_equal(w.size, ob.sched.workload(200_000, load=0.8, sizes="lognormal", seed=1).size)
    b = ob.sched.workload(100_000, sizes="bimodal", seed=1)
    assert set(np.unique(b.size).tolist()) == {0.5, 5.5}
    assert (b.size == 5.5).mean() == pytest.approx(0.1, abs=0.01)
    p = ob.sched.workload(100_000, sizes="pareto", seed=1)
    assert p.size.mean() == pytest.approx(1.0, rel=0.1)
    assert ob.sched.workload(10, sizes="det").size.tolist() == [1.0] * 10
    pred = ob.sched.workload(1000, sizes="exp", seed=1, prediction_sigma=1.0)
    assert pred.predicted is not None
    np.testing.assert_array_equal(pred.size, ob.sched.workload(1000, sizes="exp", seed=1).size)
    c = ob.sched.workload(50_000, load=(0.6, 0.3), seed=1)
    assert c.priority is not None and (c.priority == 0).mean() == pytest.approx(2 / 3, abs=0.01)
    assert np.all(np.diff(w.arrival) >= 0)


def test_unstable_load_warns_but_runs() -> None:
    with pytest.warns(RuntimeWarning, match="unstable"):
        w = ob.sched.workload(500, load=1.2, seed=1)
    assert np.isfinite(simulate(w, "srpt").completion).all()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ob.sched.workload(10, load=0.5)


def test_prediction_noise_is_independent_of_sizes() -> None:
    # The noise must not reuse the normal draws that made lognormal sizes (same seed).
    for w in (
        ob.sched.workload(20_000, sizes="lognormal", seed=2).with_predictions(1.0, seed=2),
        ob.sched.workload(20_000, sizes="lognormal", seed=2, prediction_sigma=1.0),
    ):
        assert w.predicted is not None
        log_noise = np.log(w.predicted / w.size)
        assert abs(np.corrcoef(np.log(w.size), log_noise)[0, 1]) < 0.05
        assert log_noise.std() == pytest.approx(1.0, rel=0.05)
    exact = ob.sched.workload(100, seed=1).with_predictions(0.0, seed=1)
    assert exact.predicted is not None
    np.testing.assert_array_equal(exact.predicted, exact.size)
