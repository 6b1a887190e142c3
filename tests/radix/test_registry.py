"""The mode table: declared once in the core, derived in Python, held to the reference.

A mode lives in four places: its ``.rs`` file, its row in the core's table
(``rust/osbench-core/src/radix/mod.rs``), its function in ``osbench/radix/reference.py`` and
its row in the reference registry (``reference.MODES``). These tests fail when one is missing.
"""

from __future__ import annotations

import pytest

import osbench as ob
from osbench import _native
from osbench.radix import reference


def test_python_derives_the_names_from_the_core_table() -> None:
    assert ob.radix.MODES == tuple(name for name, _ in _native.RADIX_MODES)
    assert {p for _, reads in _native.RADIX_MODES for p in reads} <= {"page_size"}


def test_the_reference_registry_holds_the_same_modes() -> None:
    assert tuple(reference.MODES) == ob.radix.MODES


@pytest.mark.parametrize("mode", ob.radix.MODES)
def test_every_mode_replays_in_both_engines(mode: str) -> None:
    w = ob.radix.conversations(30, seed=2)
    native = ob.radix.replay(w, 300, mode=mode)
    assert native.to_dict() == ob.radix.replay(w, 300, mode=mode, engine="reference").to_dict()
    assert native.mode == mode and native.requests == len(w)
