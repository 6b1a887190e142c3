"""The policy table: declared once in the core, derived in Python, held to the reference.

A policy lives in four places: its ``.rs`` file, its row in the core's table
(``rust/osbench-core/src/sched/mod.rs``), its class in ``osbench/sched/reference.py`` and its
row in the reference registry (``reference.POLICIES``). These tests fail when one is missing.
"""

from __future__ import annotations

import inspect
from typing import Any

import pytest

import osbench as ob
from osbench import _native
from osbench.errors import ArgumentError
from osbench.sched import reference

#: simulate()'s defaults, and a value off its default for every parameter.
DEFAULTS: dict[str, Any] = {
    n: p.default for n, p in inspect.signature(ob.sched.simulate).parameters.items() if p.kind is p.KEYWORD_ONLY
}
del DEFAULTS["engine"]
OFF: dict[str, Any] = {
    "quantum": 0.5,
    "switch_cost": 0.25,
    "levels": 2,
    "boost": 5.0,
    "use_predictions": True,
    "aging": 0.5,
}


def test_python_derives_the_names_from_the_core_table() -> None:
    assert ob.sched.POLICIES == tuple(name for name, _, _ in _native.SCHED_POLICIES)
    assert set(ob.sched.PARAMETERS) == set(ob.sched.POLICIES) == set(ob.sched.PREEMPTIVE)
    assert len(set(ob.sched.POLICIES)) == len(ob.sched.POLICIES)


def test_the_reference_registry_holds_the_same_policies() -> None:
    assert tuple(reference.POLICIES) == ob.sched.POLICIES


def test_reference_policies_preempt_as_the_table_says() -> None:
    jobs, _ = reference.make_jobs([0.0], [1.0], [1.0], [0], 0.0)
    params = reference.Params(quantum=0.1, switch_cost=0.0, levels=None, boost=None, use_predictions=False, aging=0.0)
    for name, make in reference.POLICIES.items():
        if make is None:  # its own loop (processor sharing): every arrival changes the rates
            assert ob.sched.PREEMPTIVE[name], name
        else:
            assert make(jobs, params).preemptive == ob.sched.PREEMPTIVE[name], name


def test_every_parameter_read_is_one_simulate_takes() -> None:
    keywords = {n for n, p in inspect.signature(ob.sched.simulate).parameters.items() if p.kind is p.KEYWORD_ONLY} - {
        "engine"
    }
    assert set(OFF) == keywords
    assert set().union(*ob.sched.PARAMETERS.values()) == keywords


@pytest.mark.parametrize("engine", ["native", "reference"])
@pytest.mark.parametrize("policy", ob.sched.POLICIES)
def test_a_parameter_off_its_default_is_refused_unless_read(policy: str, engine: str) -> None:
    w = ob.sched.workload(20, seed=1, prediction_sigma=0.5)
    for name, value in OFF.items():
        if name in ob.sched.PARAMETERS[policy]:
            assert ob.sched.simulate(w, policy, engine=engine, **{name: value}).params[name] == value
        else:
            with pytest.raises(ArgumentError, match=f"{name}={value!r} is not accepted for policy={policy!r}"):
                ob.sched.simulate(w, policy, engine=engine, **{name: value})


@pytest.mark.parametrize("policy", ob.sched.POLICIES)
def test_the_core_refuses_an_unread_parameter_too(policy: str) -> None:
    w = ob.sched.workload(5, seed=1)
    for name, value in OFF.items():
        if name not in ob.sched.PARAMETERS[policy] and name != "use_predictions":
            with pytest.raises(ArgumentError, match=f"{name}=.* is not accepted: its default for policy"):
                _native.sched_simulate(policy, w.arrival, w.size, None, None, **{**DEFAULTS, name: value})
