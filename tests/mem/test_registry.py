"""The strategy table: declared once in the core, derived in Python, held to the reference.

A strategy lives in four places: its ``.rs`` file, its row in the core's table
(``rust/osbench-core/src/mem/mod.rs``), its class in ``osbench/mem/reference.py`` and its row
in the reference registry (``reference.STRATEGIES``). These tests fail when one is missing.
"""

from __future__ import annotations

import pytest

import osbench as ob
from osbench import _native
from osbench.errors import ArgumentError
from osbench.mem import reference


def test_python_derives_the_names_from_the_core_table() -> None:
    assert ob.mem.STRATEGIES == tuple(name for name, _ in _native.MEM_STRATEGIES)
    assert set(ob.mem.PARAMETERS) == set(ob.mem.STRATEGIES)
    assert set().union(*ob.mem.PARAMETERS.values()) == {"page_size", "bound"}


def test_the_reference_registry_holds_the_same_strategies() -> None:
    assert tuple(reference.STRATEGIES) == ob.mem.STRATEGIES
    for name in ob.mem.STRATEGIES:
        assert reference.make(name, 100, 4, 10).name == name


@pytest.mark.parametrize("engine", ["native", "reference"])
@pytest.mark.parametrize("strategy", ob.mem.STRATEGIES)
def test_only_what_a_strategy_reads_changes_its_run(strategy: str, engine: str) -> None:
    w = ob.mem.workload(300, capacity=1000, prompt_fraction=0.5, seed=3)
    base = ob.mem.simulate(w, strategy, 1000, page_size=4, bound=40, engine=engine)
    for name, other in (("page_size", {"page_size": 8}), ("bound", {"bound": 80})):
        changed = ob.mem.simulate(w, strategy, 1000, **{"page_size": 4, "bound": 40, **other}, engine=engine)
        if name not in ob.mem.PARAMETERS[strategy]:
            assert changed.to_dict(arrays=True) == {**base.to_dict(arrays=True), **other}, name


@pytest.mark.parametrize("strategy", ob.mem.STRATEGIES)
def test_a_page_larger_than_memory_is_refused_where_pages_are_read(strategy: str) -> None:
    w = ob.mem.workload(10, capacity=100, seed=1)
    if "page_size" in ob.mem.PARAMETERS[strategy]:
        with pytest.raises(ArgumentError, match="page_size"):
            ob.mem.simulate(w, strategy, 100, page_size=200)
    else:
        assert ob.mem.simulate(w, strategy, 100, page_size=200).requests == 10
