"""Native key arrays from any sequence of ints: lists, tuples and buffers give the ids and hits of
the int64 array, by the binding's one conversion path; other things are refused whole."""

from __future__ import annotations

import array
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import osbench as ob
from osbench import _native

FORMS: list[Callable[[list[int]], Any]] = [
    list,
    tuple,
    lambda k: array.array("q", k),
    lambda k: memoryview(array.array("q", k)),
]


@settings(max_examples=50, deadline=None)
@given(keys=st.lists(st.integers(-(2**63), 2**63 - 1) | st.integers(0, 9), max_size=300))
def test_every_form_maps_and_streams_like_the_array(keys: list[int]) -> None:
    arr = np.array(keys, dtype=np.int64)
    ids, n = _native.dense_ids(arr)
    hits = ob.cache.stream("arc", 10).feed(arr)
    for form in FORMS:
        got_ids, got_n = _native.dense_ids(form(keys))
        assert got_ids.tolist() == ids.tolist() and got_n == n
        assert ob.cache.stream("arc", 10).feed(form(keys)) == hits  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", [[1.5], [1, None], [2**63], ["a"], "abc", 5, np.zeros(3)])
def test_what_is_not_ints_is_refused(bad: object) -> None:
    with pytest.raises(TypeError, match="keys"):
        _native.dense_ids(bad)  # type: ignore[arg-type]
    s = ob.cache.stream("lru", 5)
    with pytest.raises(TypeError, match="keys"):
        s.feed(bad)  # type: ignore[arg-type]
    assert s.accesses == 0
