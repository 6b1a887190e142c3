"""Comparing two serving runs array for array: the one check every engine comparison makes."""

from __future__ import annotations

from dataclasses import fields

import numpy as np

from osbench.serve.run import EngineRun, StepRecord, Steps


def assert_same_runs(a: EngineRun, b: EngineRun) -> None:
    """Every array equal (times bit for bit, dtypes too); with both records, the first
    differing step is named before the arrays are compared."""
    if a.record is not None and b.record is not None:
        if a.num_steps != b.num_steps or not np.array_equal(a.record.free_blocks, b.record.free_blocks):
            for j in range(min(a.num_steps, b.num_steps)):
                assert a.record.step(j) == b.record.step(j), f"first difference at step {j}"
        for f in fields(StepRecord):
            np.testing.assert_array_equal(getattr(a.record, f.name), getattr(b.record, f.name), err_msg=f.name)
    per_request = [(a, b, f.name) for f in fields(EngineRun) if f.name not in ("steps", "record")]
    for x_of, y_of, name in per_request + [(a.steps, b.steps, f.name) for f in fields(Steps)]:
        x, y = getattr(x_of, name), getattr(y_of, name)
        assert x.dtype == y.dtype, name
        np.testing.assert_array_equal(x, y, err_msg=name)
