"""The table of engine semantics (declared once in the core, ``serve::ENGINES``) and choosing
one by name; the configuration's fields declared once across the boundary."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from runs import assert_same_runs

import osbench as ob
from osbench import _native
from osbench.errors import ArgumentError, ArgumentTypeError
from osbench.serve import engines
from osbench.serve.config import POLICIES, EngineConfig
from osbench.serve.run import STEP_FIELDS, EngineRun, StepRecord
from osbench.serve.steptime import StepTime

STEP = StepTime.linear(0.004, 5e-5, 1e-4, 1e-7)


def test_the_table_is_the_cores() -> None:
    assert list(ob.serve.ENGINES) == [row[0] for row in _native.SERVE_ENGINES] == ["vllm", "sglang"]
    vllm = ob.serve.ENGINES["vllm"]
    assert vllm.follows.startswith("vLLM 0.33.0") and vllm.policies == POLICIES


def test_every_semantics_config_has_the_cores_fields_in_order() -> None:
    for row in ob.serve.ENGINES.values():
        config = row.module().Config
        assert tuple(f.name for f in dataclasses.fields(config)) == row.config_fields
    assert EngineConfig is ob.serve.ENGINES["vllm"].module().Config is ob.serve.EngineConfig


def test_a_runs_columns_are_the_cores() -> None:
    """The binding packs a run by the core's column list: ``EngineRun``'s fields in order, with
    ``Steps``' for ``steps`` and ``record`` (``StepRecord``'s columns) apart."""
    expected: list[str] = []
    for f in dataclasses.fields(EngineRun):
        if f.name == "steps":
            expected += STEP_FIELDS
        elif f.name != "record":
            expected.append(f.name)
    assert _native.SERVE_RUN_COLUMNS == expected
    assert _native.SERVE_RECORD_COLUMNS == [f.name for f in dataclasses.fields(StepRecord)]
    reqs = ob.serve.Requests.poisson(10, rate=20.0, seed=1)
    columns, detail, _ = _native.serve_simulate(
        {"arrival": reqs.arrival, "prompt_len": reqs.prompt_len, "output_len": reqs.output_len},
        {
            "settings": {
                name: getattr(EngineConfig(num_blocks=200), name) for name in ob.serve.ENGINES["vllm"].config_fields
            },
            "step_kind": "linear",
            "step_coefficients": list(STEP.spec()[1]),
        },
        {"record": True, "jump": True},
    )
    assert list(columns) == _native.SERVE_RUN_COLUMNS
    assert detail is not None and list(detail) == _native.SERVE_RECORD_COLUMNS


@pytest.mark.parametrize("engine", ["native", "reference"])
def test_semantics_vllm_is_the_default(engine: str) -> None:
    reqs = ob.serve.Requests.poisson(40, rate=20.0, seed=2)
    kwargs = {"engine": engine, "step_time": STEP, "num_blocks": 200, "block_size": 16, "record": True}
    named, default = ob.serve.simulate(reqs, semantics="vllm", **kwargs), ob.serve.simulate(reqs, **kwargs)
    np.testing.assert_array_equal(named.ttft, default.ttft)
    np.testing.assert_array_equal(named.steps.duration, default.steps.duration)


def test_an_unknown_semantics_is_refused_with_the_table() -> None:
    reqs = ob.serve.Requests.poisson(5, rate=1.0, seed=0)
    with pytest.raises(
        ArgumentError, match=r"semantics='tgi' is not accepted: it must be one of 'vllm' \(vLLM 0\.33\.0"
    ):
        ob.serve.simulate(reqs, semantics="tgi", step_time=STEP, num_blocks=100)
    with pytest.raises(ArgumentTypeError, match="semantics=3"):
        engines.semantics(3)


def test_the_vllm_runs_are_the_engines_runs() -> None:
    reqs = ob.serve.Requests.poisson(30, rate=30.0, seed=4)
    cfg = EngineConfig(num_blocks=400, block_size=8)
    module = ob.serve.ENGINES["vllm"].module()
    ours = module.run(reqs, cfg, STEP, engine="reference", record=True)
    assert_same_runs(ours, module.run(reqs, cfg, STEP, engine="native", record=True))
    assert_same_runs(ours, ob.serve.reference.run(reqs, cfg, STEP, record=True))
