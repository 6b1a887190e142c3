"""Serving runs in the tests: comparing two array for array (the one check every engine comparison
makes), and the case of two requests that preempt each other forever."""

from __future__ import annotations

from dataclasses import fields
from typing import Any, Callable, Optional

import numpy as np
import pytest

from osbench import _native
from osbench.errors import ArgumentError
from osbench.serve import native
from osbench.serve.config import EngineConfig
from osbench.serve.requests import Requests
from osbench.serve.run import EngineRun, StepRecord, Steps, engine_run

# Two requests that tie on (priority, arrival) under policy="priority": vLLM 0.33.0 preempts the
# first running one of them, which keeps resetting the other's progress, for ever.
TIED = Requests([0, 0], [3, 3], [3, 3])
TIED_CONFIG = EngineConfig(
    num_blocks=4,
    block_size=2,
    max_num_batched_tokens=16,
    max_num_seqs=4,
    max_model_len=32,
    long_prefill_token_threshold=1,
    enable_prefix_caching=False,  # with it, a recomputation finds its own blocks and gets on
    policy="priority",
    scheduler_reserve_full_isl=False,
)


def native_counted(
    requests: Requests, config: EngineConfig, step_time: Any, *, record: bool = False, jump: bool = True
) -> tuple[EngineRun, int]:
    """:func:`osbench.serve.native.run`'s run, and how many of its steps the decode jump took
    (the binding returns both; the run keeps no count)."""
    inputs = native._inputs(requests, config, step_time, record, jump, None)
    columns, detail, jumped = _native.serve_simulate(**inputs)
    return engine_run(columns, detail), jumped


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


def run_or_same_livelock(
    first: Callable[..., EngineRun], second: Callable[..., EngineRun], *args: Any, **kw: Any
) -> Optional[EngineRun]:
    """``first(*args, record=True, **kw)``, or None when that run cannot end (requests tied under
    priority preempt one another forever) and ``second(*args, **kw)`` refuses it with the same
    error."""
    try:
        return first(*args, record=True, **kw)
    except ArgumentError as livelock:
        with pytest.raises(ArgumentError) as caught:
            second(*args, **kw)
        assert str(caught.value) == str(livelock)
        return None
