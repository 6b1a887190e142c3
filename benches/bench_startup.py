"""What a user waits for before any work: ``import osbench`` and ``osbench --help``, each a fresh
interpreter (the target: under 0.3 s on an idle machine); and the traces a long run starts with,
50M Zipf accesses (the target: under 5 s), native against the numpy code it replaced."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import osbench as ob


def fresh(code: str) -> None:
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)


@pytest.mark.benchmark(group="start-up")
@pytest.mark.parametrize(
    "what, code",
    [
        ("python alone", "pass"),
        ("import osbench", "import osbench"),
        (
            "osbench --help",
            "import sys; sys.argv = ['osbench', '--help']\nfrom osbench.cli import main\ntry: main()\nexcept SystemExit: pass",
        ),
    ],
)
def test_start_up(benchmark: pytest.FixtureRequest, what: str, code: str) -> None:
    benchmark.pedantic(fresh, args=(code,), rounds=5, iterations=1, warmup_rounds=1)  # type: ignore[attr-defined]


def numpy_zipf(n_keys: int, alpha: float, length: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    cdf = np.cumsum(np.arange(1, n_keys + 1, dtype=np.float64) ** -alpha)
    cdf /= cdf[-1]
    return np.minimum(np.searchsorted(cdf, rng.random(length), side="right"), n_keys - 1)


@pytest.mark.benchmark(group="zipf trace: 1M keys")
@pytest.mark.parametrize("engine", ["native", "numpy"])
def test_zipf_generation(benchmark: pytest.FixtureRequest, engine: str, full_size: bool) -> None:
    # numpy at a tenth of the length: at 50M it alone would take half a minute.
    length = (50_000_000 if engine == "native" else 5_000_000) if full_size else 100_000
    make = (
        (lambda: ob.traces.zipf(1_000_000, 1.0, length, seed=1).keys)
        if engine == "native"
        else (lambda: numpy_zipf(1_000_000, 1.0, length, 1))
    )
    keys = benchmark.pedantic(make, rounds=3 if full_size else 1, iterations=1, warmup_rounds=0)  # type: ignore[attr-defined]
    benchmark.extra_info["accesses"] = length  # type: ignore[attr-defined]
    assert len(keys) == length


def numpy_drift(n_keys: int, length: int, n_hot: int, phases: int, p_hot: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    phase = np.minimum(np.arange(length) * phases // max(length, 1), phases - 1)
    hot_keys = phase * n_hot + rng.integers(0, n_hot, size=length)
    any_keys = rng.integers(0, n_keys, size=length)
    return np.where(rng.random(length) < p_hot, hot_keys, any_keys)


@pytest.mark.benchmark(group="drift trace: 1M keys, 10 phases")
@pytest.mark.parametrize("engine", ["native", "numpy"])
def test_drift_generation(benchmark: pytest.FixtureRequest, engine: str, full_size: bool) -> None:
    length = 20_000_000 if full_size else 100_000
    make = (
        (lambda: ob.traces.drift(1_000_000, length, 10_000, 10, seed=1).keys)
        if engine == "native"
        else (lambda: numpy_drift(1_000_000, length, 10_000, 10, 0.9, 1))
    )
    keys = benchmark.pedantic(make, rounds=3 if full_size else 1, iterations=1, warmup_rounds=0)  # type: ignore[attr-defined]
    benchmark.extra_info["accesses"] = length  # type: ignore[attr-defined]
    assert len(keys) == length
