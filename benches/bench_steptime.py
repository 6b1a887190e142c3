"""Step-time benchmarks: what one step's time costs to compute, per model, in Python and in the
native core. One group, 20,000 steps of a serving run's mix (mostly decode batches of 1 to 256
requests over 100 to 30,000 cached tokens; one step in eight carries a prefill chunk of up to
4,096 tokens over a cached prefix), Qwen3-32B on two H100s.

Rows: the roofline and the measured model (the kernel tables), each in Python (one call per
step) and native (one call for all the steps, its inputs converted beforehand, as the engine
holds them; the measured tables are copied into the core once per call). The target: the measured model at most twice the
roofline's cost per step, natively. Every native row's times are asserted equal to Python's.

Under ``--benchmark-disable`` (``make test``) everything runs once on 500 steps.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from osbench import _native
from osbench.serve import StepTime, kernels, measured
from osbench.serve.steptime import StepWork


@pytest.fixture(scope="module")
def steps(full_size: bool) -> list[StepWork]:
    rng = np.random.default_rng(11)
    out = []
    for _ in range(20_000 if full_size else 500):
        n = int(rng.integers(1, 257))
        work = [(1, int(c), 1) for c in rng.integers(100, 30_000, n)]
        if rng.random() < 1 / 8:
            chunk = int(rng.integers(16, 4097))
            work.append((chunk, int(rng.integers(0, 8192)), chunk + int(rng.integers(1, 100))))
        out.append(StepWork.of(work))
    return out


@pytest.fixture(scope="module")
def models() -> dict[str, StepTime]:
    try:
        return {
            "roofline": StepTime.roofline("qwen3-32b", "h100", 2),
            "measured": StepTime.measured("qwen3-32b", "h100", 2),
        }
    except kernels.TablesMissing as exc:
        pytest.skip(str(exc))


def _native_call(model: StepTime, steps: list[StepWork]) -> Any:
    """The native evaluation of all the steps, its inputs converted beforehand (as the engine
    holds them): the call alone is timed."""
    if model.tables is not None:
        a = model.tables.arrays()
        columns = measured.step_columns(steps, (*measured.STEP_COLUMNS, "prefill_context_tokens"))
        tables = [a[k] for k in ("tokens", "seqs", "context_rows", "context_cols", "context_values")]
        tables += [a[k] for k in ("generation_rows", "generation_cols", "generation_values")]
        return lambda: _native.serve_measured_seconds(model.tables.host_step, *tables, **columns)  # type: ignore[union-attr]
    kind, coefficients = model.spec()
    columns = measured.step_columns(steps)
    return lambda: _native.serve_step_seconds(kind, list(coefficients), **columns)


@pytest.mark.parametrize("row", ["roofline-python", "measured-python", "roofline-native", "measured-native"])
def test_step_time_cost(benchmark: Any, row: str, steps: list[StepWork], models: dict[str, StepTime]) -> None:
    benchmark.group = "step time: 20k steps of Qwen3-32B on 2 H100s"
    kind, engine = row.split("-")
    model = models[kind]
    if engine == "python":
        times = benchmark.pedantic(lambda: [model(s) for s in steps], rounds=3, iterations=1)
    else:
        times = benchmark.pedantic(_native_call(model, steps), rounds=5, iterations=1).tolist()
    assert times == [model(s) for s in steps]  # bit-equal to the reference
    benchmark.extra_info["steps"] = len(steps)
    if benchmark.stats:
        benchmark.extra_info["ns_per_step"] = benchmark.stats.stats.median / len(steps) * 1e9
