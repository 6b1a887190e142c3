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


def _one_call(n: int, sizes: str, load: tuple[float, ...], seed: int, sigma: float) -> tuple[np.ndarray, ...]:
    """The workload as the docstring defines it: each array in one draw of ``default_rng(seed)``,
    in order (sizes, gaps, classes, noise)."""
    rng = np.random.default_rng(seed)
    d = ob.sched.size_dist(sizes)
    p = d.params
    if sizes == "exp":
        size = rng.exponential(1.0, n)
    elif sizes == "lognormal":
        size = rng.lognormal(p["mu"], p["sigma"], n)
    elif sizes == "pareto":
        size = p["low"] * (1.0 - rng.random(n) * (1.0 - (p["low"] / p["high"]) ** p["alpha"])) ** (-1.0 / p["alpha"])
    else:
        assert d.atoms is not None
        size = d.atoms[0][rng.choice(len(d.atoms[0]), size=n, p=d.atoms[1])]
    arrival = np.cumsum(rng.exponential(1.0 / (sum(load) / d.mean), n))
    priority = rng.choice(len(load), size=n, p=np.array(load) / sum(load)) if len(load) > 1 else np.zeros(0)
    return size, arrival, priority, size * np.exp(rng.normal(0.0, sigma, n))


@pytest.mark.parametrize(
    ("sizes", "load"), [("exp", (0.8,)), ("lognormal", (0.6, 0.3)), ("pareto", (0.5,)), ("bimodal", (0.3, 0.2, 0.1))]
)
def test_a_large_workload_drawn_in_steps_is_the_one_call_draw(sizes: str, load: tuple[float, ...]) -> None:
    # More than two steps of draws (osbench._steps.CHUNK each): Ctrl-C can stop between them.
    n = 2 * (1 << 20) + 12_345
    w = ob.sched.workload(n, load=load, sizes=sizes, seed=7, prediction_sigma=0.5)
    size, arrival, priority, predicted = _one_call(n, sizes, load, 7, 0.5)
    np.testing.assert_array_equal(w.size, size)
    np.testing.assert_array_equal(w.arrival, arrival)
    np.testing.assert_array_equal(w.predicted, predicted)
    if len(load) > 1:
        assert w.priority is not None
        np.testing.assert_array_equal(w.priority, priority)
