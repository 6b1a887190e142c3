"""The native RadixCache takes tokens as any sequence of ints, by one conversion path: lists,
tuples, buffers (array('q'), memoryview) and numpy arrays of any integer dtype give the same
tree as an int64 array; anything that is not integers in [-2**63, 2**63) is refused whole."""

from __future__ import annotations

import array

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from osbench.radix import RadixCache

FORMS = {
    "list": lambda x: x,
    "tuple": tuple,
    "numpy": lambda x: np.array(x, dtype=np.int64),
    "array-q": lambda x: array.array("q", x),
    "memoryview": lambda x: memoryview(array.array("q", x)),
    "numpy-strided": lambda x: np.repeat(np.array(x, dtype=np.int64), 2)[::2],
    "list-of-numpy-scalars": lambda x: [np.int64(v) for v in x],
}

sequences = st.lists(st.lists(st.integers(-(2**63), 2**63 - 1) | st.integers(0, 5), max_size=12), max_size=12)


@settings(max_examples=60, deadline=None)
@given(seqs=sequences, page_size=st.sampled_from([1, 2]))
def test_every_form_gives_the_same_answers_and_tree(seqs: list[list[int]], page_size: int) -> None:
    want = RadixCache(page_size)
    answers = [
        (want.insert(np.array(s, dtype=np.int64)), want.match_prefix(np.array(s, dtype=np.int64)).length) for s in seqs
    ]
    for name, form in FORMS.items():
        got = RadixCache(page_size)
        assert [(got.insert(form(s)), got.match_prefix(form(s)).length) for s in seqs] == answers, name
        assert [n.tokens for n in got.nodes()] == [n.tokens for n in want.nodes()], name


@pytest.mark.parametrize("dtype", ["b", "B", "h", "H", "i", "I", "l", "L", "q", "Q"])
def test_any_integer_buffer_and_other_sequences(dtype: str) -> None:
    t = RadixCache()
    t.insert(range(1, 5))
    assert t.match_prefix(array.array(dtype, [1, 2, 3, 9])).length == 3
    assert t.match_prefix(np.array([1, 2, 3, 4], dtype=np.dtype(dtype))).length == 4


@pytest.mark.parametrize(
    "bad",
    [
        [1, 2.5],
        [1, None],
        [2**63],
        (1, -(2**63) - 1),
        [1, "a"],
        array.array("d", [1.0]),
        memoryview(b"ab").cast("B", (1, 2)),
        b"abc",
        7,
        [[1, 2]],
        np.zeros((2, 2), dtype=np.int64),
        np.array([1.0]),
    ],
)
def test_what_is_not_integer_tokens_is_refused_whole(bad: object) -> None:
    t = RadixCache()
    t.insert([1, 2])
    with pytest.raises((TypeError, ValueError), match="tokens"):
        t.insert(bad)
    with pytest.raises((TypeError, ValueError), match="tokens"):
        t.match_prefix(bad)
    assert t.total_size == 2 and t.num_nodes == 1


def test_a_list_changed_by_an_items_index_is_read_safely() -> None:
    seq: list[object] = []

    class Shrinks:
        def __index__(self) -> int:
            seq.clear()
            return 1

    seq.extend([Shrinks(), 2, 3])
    with pytest.raises(TypeError, match="tokens"):
        RadixCache().insert(seq)
