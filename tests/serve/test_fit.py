"""StepTime.corrected and StepTime.fit: the corrected roofline by hand, native equal to the
reference, the NNLS fit on the operator tables with its held-out error, points and the
benchmark_serving reader, and errors."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from osbench.serve import Requests, StepTime, native, reference
from osbench.serve import fit as fitting
from osbench.serve.config import EngineConfig
from osbench.serve.fit import BenchmarkPoint, fit_points, read_benchmark
from osbench.serve.steptime import CORRECTIONS, StepWork


def test_corrected_roofline_by_hand() -> None:
    t = StepTime.corrected("llama-3.1-8b", "h100", per_step=1e-4, per_request=5e-6, weight_factor=1.3, kv_factor=2.0)
    w = StepWork.of([(1, 1000, 1)] * 4)
    weights = (8_030_261_248 - 128_256 * 4096) * 2 / 3.35e12
    kv = 131_072 * (4000 + 4) / 3.35e12
    assert math.isclose(t(w), 1e-4 + 4 * 5e-6 + 1.3 * weights + 2.0 * kv, rel_tol=1e-12)
    assert t.terms(w)[:2] == (1.0, 4.0) and t.kind == "corrected" and len(t.coefficients) == 13 + len(CORRECTIONS)
    with pytest.raises(ValueError, match="gpu_factor=1 is not accepted: the corrections are per_step"):
        StepTime.corrected("llama-3.1-8b", "h100", gpu_factor=1)
    with pytest.raises(ValueError, match="kv_factor=-1 is not accepted"):
        StepTime.corrected("llama-3.1-8b", "h100", kv_factor=-1)
    with pytest.raises(ValueError, match="terms\\(\\) are a corrected roofline's"):
        StepTime.roofline("llama-3.1-8b", "h100").terms(w)


def test_corrected_runs_natively_with_the_same_times() -> None:
    t = StepTime.corrected(
        "qwen3-32b",
        "h100",
        per_step=2e-4,
        per_request=4e-6,
        weight_factor=1.4,
        kv_factor=1.9,
        compute_factor=1.6,
        allreduce_factor=1.1,
    )
    reqs = Requests.poisson(60, rate=20.0, seed=3)
    cfg = EngineConfig(num_blocks=4000)
    a, b = native.run(reqs, cfg, t), reference.run(reqs, cfg, t)
    assert np.array_equal(a.steps.duration, b.steps.duration) and np.array_equal(a.finish, b.finish)


def test_fit_on_points_recovers_known_corrections() -> None:
    truth = StepTime.corrected(
        "llama-3.1-8b", "h100", per_step=2e-4, kv_factor=1.8, compute_factor=1.5, weight_factor=1.2
    )
    points = []
    for c in (1, 4, 16, 64):
        for isl, osl in ((128, 128), (1024, 256), (4096, 512)):
            decode = StepWork.of([(1, isl + osl // 2, 1)] * c)
            prefill = StepWork.of([(isl, 0, isl + 1)] + [(1, isl + osl // 2, 1)] * (c - 1))
            points.append(BenchmarkPoint(c, isl, osl, truth(prefill), truth(decode)))
    f = fit_points("llama-3.1-8b", "h100", None, points, lambda p: p.concurrency == 16)
    assert f.held_out == 6 and f.fitted == 18 and f.mape < 1e-6  # exact data: found again


def test_fit_on_tables_reports_its_held_out_error(dataset: object, missing: object) -> None:
    pytest.importorskip("scipy")
    from osbench.serve import kernels

    try:
        f = fitting.fit("llama-3.1-8b", "h100")
    except kernels.TablesMissing as exc:
        missing(str(exc))  # type: ignore[operator]
        return
    assert f.source == "tables" and f.held_out > 10 and f.fitted > 3 * f.held_out - 10
    assert 0 <= f.mape < 50 and all(v >= 0 for v in f.corrections.values())  # a held-out error, not asserted tight


def test_read_benchmark(tmp_path: Path) -> None:
    result = {
        "max_concurrency": 8,
        "input_lens": [1000] * 8,
        "output_lens": [100] * 8,
        "ttfts": [0.1, 0.2] * 4,
        "itls": [[0.01] * 99, [0.03] * 99] * 4,
    }
    path = tmp_path / "bench.json"
    path.write_text(json.dumps(result))
    points = read_benchmark(path, groups=2)
    assert points == [BenchmarkPoint(8, 1000, 100, 0.15, 0.02)] * 2 or all(
        math.isclose(p.ttft, 0.15) and math.isclose(p.tpot, 0.02) and p.concurrency == 8 for p in points
    )
    path.write_text(json.dumps({"ttfts": [1.0]}))
    with pytest.raises(ValueError, match="a benchmark_serving result with per-request input_lens"):
        read_benchmark(path)
    path.write_text("{")
    with pytest.raises(ValueError, match="not a readable JSON file"):
        read_benchmark(path)
    for field, value in (("ttfts", ["soon"] * 8), ("itls", [[0.01, None]] * 8), ("input_lens", [-1] * 8)):
        path.write_text(json.dumps({**result, field: value}))
        with pytest.raises(ValueError, match=f"its {field} must be lists of finite numbers >= 0"):
            read_benchmark(path)
    path.write_text(json.dumps({**result, "max_concurrency": 2.5}))
    with pytest.raises(ValueError, match="its max_concurrency must be an integer >= 1"):
        read_benchmark(path)
    with pytest.raises(ValueError, match="source='nope' is not accepted"):
        fitting.fit("llama-3.1-8b", "h100", source="nope")
    with pytest.raises(ValueError, match="seconds is not accepted: one finite time > 0 per step"):
        StepTime.fit("llama-3.1-8b", "h100", steps=[StepWork.of([(1, 5, 1)])], seconds=[0.01])


def test_native_step_seconds_equal_the_reference_for_every_kind() -> None:
    from osbench import _native
    from osbench.serve.measured import step_columns

    rng = np.random.default_rng(5)
    steps = []
    for _ in range(200):
        work = [(1, int(c), 1) for c in rng.integers(1, 50_000, int(rng.integers(1, 64)))]
        if rng.random() < 0.3:
            work.append((int(rng.integers(2, 8000)), int(rng.integers(0, 9000)), 9000))
        steps.append(StepWork.of(work))
    models = [
        StepTime.linear(1e-3, 2e-5, 3e-4, 1e-8),
        StepTime.roofline("qwen3-30b-a3b", "h200"),
        StepTime.roofline("llama-3.1-70b-fp8", "h100", 8),
        StepTime.corrected(
            "qwen3-32b", "b200", 2, per_step=1e-4, kv_factor=1.9, compute_factor=1.4, allreduce_factor=1.2
        ),
    ]
    for model in models:
        kind, coefficients = model.spec()
        native = _native.serve_step_seconds(kind, list(coefficients), **step_columns(steps))
        assert native.tolist() == [model(s) for s in steps], kind
