"""The request generators work in bounded steps: the requests do not depend on the step size,
equal the one-call generation they replaced (digests of its outputs, recorded before it was
replaced), and stop on Ctrl-C."""

from __future__ import annotations

import hashlib
from typing import Any, Callable

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from interrupts import assert_stops

from osbench import _steps
from osbench.serve import Requests, workloads
from osbench.serve.columns import Columns


def digest(c: Columns) -> str:
    """sha256 (first 32 hex digits) of the generated columns: dtype, shape and bytes of each."""
    h = hashlib.sha256()
    for a in (c.arrival, c.prompt_len, c.output_len, c.block_ids, c.block_offsets):
        if a is None:
            h.update(b"none")
        else:
            a = np.ascontiguousarray(a)
            h.update(str(a.dtype).encode())
            h.update(str(a.shape).encode())
            h.update(a.tobytes())
    h.update(str(c.source_block).encode())
    return h.hexdigest()[:32]


W = workloads
EMPIRICAL = np.arange(1, 5000, 7, dtype=np.int64)

CASES: dict[str, tuple[Callable[[], Columns], str]] = {
    # name: (generation, digest of what the one-call generation gave for it)
    "poisson": (lambda: W.poisson(1000, 5.0, seed=0), "e8ed61fd718ade7f501906c276bea19e"),
    "poisson-lognormal": (
        lambda: W.poisson(
            30_000, 100.0, prompt_len=W.Lognormal(512, 1.0, 2000), output_len=W.Lognormal(128, 0.5), seed=1
        ),
        "20a4de32494fcd14e5b9b8d2b77536df",
    ),
    "poisson-empirical-system": (
        lambda: W.poisson(
            13_000,
            30.0,
            prompt_len=W.Empirical(EMPIRICAL),
            output_len=W.Empirical(EMPIRICAL),
            system_prompts=W.SystemPrompts(7, 300, 0.6),
            seed=2,
        ),
        "ca05a0ffb547073a091f68e33c806228",
    ),
    "gamma-system": (
        lambda: W.gamma(
            21_000,
            10.0,
            2.0,
            prompt_len=W.Lognormal(900, 1.2),
            output_len=64,
            system_prompts=W.SystemPrompts(3, 1000, 1.0),
            source_block=32,
            seed=3,
        ),
        "5cdcc237ae68685421a319503a54cf06",
    ),
    "gamma-one": (lambda: W.gamma(1, 10.0, 0.5, seed=4), "2f6e7b7f275b9ffbd57b67a4b85e7cd3"),
    "gamma-none": (lambda: W.gamma(0, 10.0, 0.5, seed=5), "6639da5355eeb9124a979ac81a913e17"),
    "conversations": (lambda: W.conversations(500, 1.0, seed=0), "0997db520b5ff1b52ddbf5299718ac34"),
    "conversations-system": (
        lambda: W.conversations(
            4000,
            3.0,
            turns=(1, 8),
            message_len=W.Lognormal(200, 1.0),
            answer_len=W.Empirical(EMPIRICAL),
            system_prompts=W.SystemPrompts(5, 400, 0.5),
            seed=6,
        ),
        "bc59ad4ddc70ae68936d019db24912ed",
    ),
    "conversations-at-once": (  # no think time: a conversation's turns tie on arrival
        lambda: W.conversations(3000, 300.0, turns=4, think_time=0.0, source_block=8, seed=7),
        "f9a0f17d4d175eae5da2380e1b471944",
    ),
    "conversations-none": (lambda: W.conversations(0, 3.0, seed=8), "725c1a1429061c0ff7dd6cac47697f66"),
}


SMALL = ("poisson", "conversations", "gamma-one", "gamma-none")  # also one element a step


@pytest.mark.parametrize(
    ("case", "chunk"),
    [(case, chunk) for case in sorted(CASES) for chunk in (7, 1000, _steps.CHUNK)] + [(case, 1) for case in SMALL],
)
def test_the_requests_are_those_of_the_one_call_generation(
    case: str, chunk: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_steps, "CHUNK", chunk)
    generate, expected = CASES[case]
    assert digest(generate()) == expected


def large() -> tuple[Columns, Columns]:
    sp = W.SystemPrompts(7, 30, 0.6)
    short = W.Lognormal(20, 1.0)
    poisson = W.poisson(1_300_000, 30.0, prompt_len=short, output_len=W.Empirical(EMPIRICAL), system_prompts=sp, seed=2)
    conv = W.conversations(
        400_000, 3.0, turns=(1, 8), message_len=short, answer_len=short, system_prompts=sp, source_block=8, seed=6
    )
    return poisson, conv


def test_large_generations_are_those_of_the_one_call_generation() -> None:
    """Sizes that cross the default step (the arrival sort's buckets included), as one call
    generated them."""
    poisson, conv = large()
    assert len(poisson.arrival) > _steps.CHUNK and len(conv.arrival) > _steps.CHUNK  # two sort buckets, at least
    assert digest(poisson) == "9cd9658e867e3266e3edc246f87d3c7e"
    assert digest(conv) == "895c1b2fc8f25aecf9c76e9177e05717"


LENGTHS = st.one_of(
    st.integers(1, 300),
    st.builds(workloads.Lognormal, st.floats(1, 500), st.floats(0, 2), st.one_of(st.none(), st.integers(1, 1000))),
    st.builds(workloads.Empirical, st.lists(st.integers(1, 2000), min_size=1, max_size=20).map(lambda v: np.array(v))),
)
SYSTEM = st.one_of(
    st.none(), st.builds(workloads.SystemPrompts, st.integers(1, 9), st.integers(1, 200), st.floats(0, 1))
)


def generations(draw: Any) -> Callable[[], Columns]:
    kind = draw(st.sampled_from(["poisson", "gamma", "conversations"]))
    seed = draw(st.integers(0, 2**32))
    common: dict[str, Any] = {
        "system_prompts": draw(SYSTEM),
        "source_block": draw(st.sampled_from([1, 3, 16, 64])),
        "seed": seed,
    }
    n = draw(st.integers(0, 60))
    rate = draw(st.floats(0.1, 1e4))
    if kind == "conversations":
        lo = draw(st.integers(1, 5))
        turns = (lo, draw(st.integers(lo, 6)))
        think = draw(st.sampled_from([0.0, 0.01, 30.0]))
        m, a = draw(LENGTHS), draw(LENGTHS)
        return lambda: workloads.conversations(
            n, rate, turns=turns, message_len=m, answer_len=a, think_time=think, **common
        )
    p, o = draw(LENGTHS), draw(LENGTHS)
    if kind == "gamma":
        cv = draw(st.floats(0.1, 5))
        return lambda: workloads.gamma(n, rate, cv, prompt_len=p, output_len=o, **common)
    return lambda: workloads.poisson(n, rate, prompt_len=p, output_len=o, **common)


@settings(max_examples=150, deadline=None)
@given(data=st.data(), chunk=st.integers(1, 50))
def test_the_requests_do_not_depend_on_the_step(data: st.DataObject, chunk: int) -> None:
    generate = generations(data.draw)
    whole = generate()  # every array in one step
    original = _steps.CHUNK
    _steps.CHUNK = chunk
    try:
        stepped = generate()
    finally:
        _steps.CHUNK = original
    assert digest(stepped) == digest(whole)


@settings(max_examples=100, deadline=None)
@given(
    keys=st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.0, 1e9]) | st.floats(0, 100), max_size=200),
    chunk=st.integers(1, 40),
)
def test_the_stepped_stable_sort_is_numpys(keys: list[float], chunk: int) -> None:
    arr = np.array(keys, dtype=np.float64)
    original = _steps.CHUNK
    _steps.CHUNK = chunk
    try:
        order = workloads._stable_order(arr)
    finally:
        _steps.CHUNK = original
    np.testing.assert_array_equal(order, np.argsort(arr, kind="stable"))


@settings(max_examples=50, deadline=None)
@given(seed=st.integers(0, 2**32), chunk=st.integers(1, 20), data=st.data())
def test_slicing_in_steps_keeps_each_request_whole(seed: int, chunk: int, data: st.DataObject) -> None:
    r = Requests.conversations(30, 2.0, turns=(1, 4), message_len=20, answer_len=10, source_block=8, seed=seed)
    mask = np.array(data.draw(st.lists(st.booleans(), min_size=len(r), max_size=len(r))), dtype=bool)
    original = _steps.CHUNK
    _steps.CHUNK = chunk
    try:
        part = r[mask]
    finally:
        _steps.CHUNK = original
    kept = np.flatnonzero(mask)
    assert r.blocks is not None and part.blocks is not None and len(part.blocks) == len(kept)
    for i, ids in zip(kept, part.blocks):
        np.testing.assert_array_equal(ids, r.blocks[i])


def test_generated_content_is_read_only_and_not_shared_with_a_copy() -> None:
    r = Requests.poisson(100, 5.0, system_prompts=workloads.SystemPrompts(2, 64), seed=1)
    assert r.block_ids is not None and not r.block_ids.flags.writeable
    faster = r.at_rate(10.0)
    np.testing.assert_array_equal(faster.block_ids, r.block_ids)
    assert faster.block_ids is not None and not faster.block_ids.flags.writeable


def test_ctrl_c_stops_a_long_generation() -> None:
    assert_stops(
        """
        for _ in range(1000):  # minutes of work if nothing stops it
            ob.serve.Requests.gamma(
                3_000_000, 100.0, 2.0, prompt_len=ob.serve.Lognormal(512, 1.0),
                system_prompts=ob.serve.SystemPrompts(8, 256, 0.5), seed=1,
            )
            ob.serve.Requests.conversations(1_000_000, 100.0, seed=1)
        """,
        setup="import osbench as ob",
        settle=0.5,
    )


def test_content_that_cannot_fit_in_memory_is_refused_at_once() -> None:
    long = 2**30  # tokens: a billion ids a prompt, in one-token blocks
    with pytest.raises(ValueError, match=r"^n=100000 is not accepted: the prompts' content ids would need about"):
        Requests.poisson(100_000, 1.0, prompt_len=long, system_prompts=workloads.SystemPrompts(1, 16), source_block=1)
    with pytest.raises(ValueError, match=r"^n_conversations=10000 is not accepted: the prompts' content ids"):
        Requests.conversations(10_000, 1.0, turns=2, message_len=long // 4, answer_len=1, source_block=1)
