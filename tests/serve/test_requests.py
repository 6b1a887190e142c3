"""Requests: validation, prompt block keys (against a plain statement of their property),
slicing and rescaling, the trace readers, and the generators."""

from __future__ import annotations

import json
import math
import pickle
from pathlib import Path
from typing import Any, Callable, Optional

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import osbench as ob
from osbench.serve import Empirical, Lognormal, Requests, SystemPrompts
from osbench.serve import requests as requests_module
from osbench.serve.requests import MAX_TOKENS

# ---------------------------------------------------------------------------- construction

ONE = {"arrival": [0.0], "prompt_len": [10], "output_len": [5]}

BAD: list[tuple[dict[str, Any], type, str]] = [
    ({"arrival": [0.0, float("nan")]}, ValueError, "arrival[1]=nan is not accepted"),
    ({"arrival": [0.0, float("inf")]}, ValueError, "arrival[1]=inf is not accepted"),
    ({"arrival": [-1.0]}, ValueError, "arrival[0]=-1.0 is not accepted"),
    ({"arrival": [2.0, 1.0]}, ValueError, "arrival[1]=1.0 is not accepted: arrivals must be non-decreasing"),
    ({"arrival": [[0.0]]}, ValueError, "arrival is not accepted: it must be 1-D"),
    ({"arrival": ["a"]}, TypeError, "arrival is not accepted: it must hold numbers"),
    ({"arrival": [True]}, TypeError, "arrival is not accepted: it must hold numbers"),
    ({"prompt_len": [0]}, ValueError, "prompt_len[0]=0 is not accepted"),
    ({"prompt_len": [-3]}, ValueError, "prompt_len[0]=-3 is not accepted"),
    ({"prompt_len": [MAX_TOKENS + 1]}, ValueError, f"from 1 to {MAX_TOKENS}"),
    ({"prompt_len": [1.5]}, TypeError, "prompt_len is not accepted: it must hold integers"),
    ({"prompt_len": [1, 2]}, ValueError, "prompt_len is not accepted: it has 2 entries, one per request is 1"),
    ({"output_len": [0]}, ValueError, "output_len[0]=0 is not accepted"),
    ({"output_len": []}, ValueError, "output_len is not accepted: it has 0 entries"),
    ({"blocks": [[1, 2]]}, ValueError, "blocks[0] is not accepted: it has 2 ids, but prompt_len[0]=10 needs"),
    ({"blocks": [[1], [2]]}, ValueError, "blocks is not accepted: it has 2 sequences, one per request is 1"),
    ({"blocks": [[2**63]]}, ValueError, "blocks[0][0]=9223372036854775808 is not accepted"),
    ({"blocks": [[2**64]]}, TypeError, "blocks[0] is not accepted: content ids must be integers within int64"),
    ({"blocks": [[1.0]]}, TypeError, "blocks[0] is not accepted: content ids must be integers"),
    ({"blocks": 7}, TypeError, "blocks is not accepted: it must be a sequence of id sequences"),
    ({"blocks": [1], "block_offsets": [0, 1, 1]}, ValueError, "block_offsets is not accepted: it must be 2"),
    ({"blocks": [1], "block_offsets": [0, 2]}, ValueError, "block_offsets is not accepted: it must be 2"),
    ({"blocks": [1, 2], "block_offsets": [0, 2]}, ValueError, "blocks[0] is not accepted: it has 2 ids"),
    ({"block_offsets": [0, 1]}, ValueError, "block_offsets is not accepted without blocks"),
    ({"priority": [1, 2]}, ValueError, "priority is not accepted: it has 2 entries"),
    ({"priority": [0.5]}, TypeError, "priority is not accepted: it must hold integers"),
    ({"source_block": 0}, ValueError, "source_block=0 is not accepted"),
    ({"source_block": True}, TypeError, "source_block=True is not accepted"),
    ({"source_block": 2**31}, ValueError, "source_block=2147483648 is not accepted"),
    ({"name": 3}, TypeError, "name=3 is not accepted"),
]


@pytest.mark.parametrize(("change", "error", "message"), BAD)
def test_bad_arguments_are_refused_clearly(change: dict[str, Any], error: type, message: str) -> None:
    args = {**ONE, **change}
    if "arrival" in change and "prompt_len" not in change:
        n = len(np.asarray(change["arrival"]).ravel()) if np.asarray(change["arrival"]).ndim == 1 else 1
        args["prompt_len"] = [10] * n
        args["output_len"] = [5] * n
    with pytest.raises(error) as info:
        Requests(**args)
    assert message in str(info.value)


def test_valid_requests_keep_their_values_read_only() -> None:
    r = Requests([0, 1, 1], [3, 600, 512], [1, 2, 3], blocks=[[7], [7, 8], [9]], priority=[2, 0, 1], name="x")
    assert r.arrival.dtype == np.float64 and r.prompt_len.dtype == np.int64
    assert r.blocks is not None and [b.tolist() for b in r.blocks] == [[7], [7, 8], [9]]
    assert r.block_ids is not None and r.block_offsets is not None
    assert r.block_ids.tolist() == [7, 7, 8, 9] and r.block_offsets.tolist() == [0, 1, 3, 4]
    for arr in (r.arrival, r.prompt_len, r.output_len, r.block_ids, r.priority):
        assert arr is not None
        with pytest.raises(ValueError, match="read-only"):
            arr[0] = 1
    packed = Requests([0, 1, 1], [3, 600, 512], [1, 2, 3], blocks=[7, 7, 8, 9], block_offsets=[0, 1, 3, 4])
    assert packed.blocks is not None and [b.tolist() for b in packed.blocks] == [[7], [7, 8], [9]]
    assert len(Requests([], [], [])) == 0


# ---------------------------------------------------------------------------- prompt block keys


def descriptor(r: Requests, i: int, k: int, block_size: int) -> Any:
    """Plainly: what block k of prompt i holds, as far as the content ids tell (None: nothing
    is known, the block is its own)."""
    if r.blocks is None:
        return ("unique", i, k)
    start, end = k * block_size, (k + 1) * block_size
    parts = []
    for s in range(start // r.source_block, (end - 1) // r.source_block + 1):
        lo = max(start, s * r.source_block) - s * r.source_block
        hi = min(end, (s + 1) * r.source_block) - s * r.source_block
        parts.append((int(r.blocks[i][s]), lo, hi))
    return tuple(parts)


@st.composite
def requests_with_content(draw: st.DrawFn) -> Requests:
    source_block = draw(st.sampled_from([1, 3, 4, 8, 16, 512]))
    n = draw(st.integers(1, 8))
    lengths = draw(st.lists(st.integers(1, 6 * source_block + 20), min_size=n, max_size=n))
    ids = draw(st.sampled_from([[0, 1], [0, 1, 2, 3], [-(2**63), 2**63 - 1, 5]]))  # few ids: equal content is common
    blocks = [
        draw(st.lists(st.sampled_from(ids), min_size=-(-p // source_block), max_size=-(-p // source_block)))
        for p in lengths
    ]
    with_content = draw(st.booleans())
    return Requests(np.zeros(n), lengths, [1] * n, blocks=blocks if with_content else None, source_block=source_block)


def check_keys(r: Requests, block_size: int) -> None:
    keys, offsets = r.prompt_block_keys(block_size)
    assert keys.dtype == np.uint64
    assert offsets.tolist() == [0, *np.cumsum(r.prompt_len // block_size).tolist()]
    seen: dict[Any, int] = {}
    by_key: dict[int, Any] = {}
    for i in range(len(r)):
        for k in range(int(r.prompt_len[i]) // block_size):
            d, key = descriptor(r, i, k, block_size), int(keys[offsets[i] + k])
            assert seen.setdefault(d, key) == key, "equal content, different keys"
            assert by_key.setdefault(key, d) == d, "different content, equal keys"


@settings(max_examples=200, deadline=None)
@given(r=requests_with_content(), block_size=st.sampled_from([1, 2, 3, 5, 8, 16, 32, 1000]))
def test_block_keys_are_equal_exactly_when_the_content_is(r: Requests, block_size: int) -> None:
    check_keys(r, block_size)


@settings(max_examples=50, deadline=None)
@given(r=requests_with_content(), block_size=st.sampled_from([1, 3, 16, 32]))
def test_block_keys_do_not_depend_on_chunking_or_on_the_other_requests(r: Requests, block_size: int) -> None:
    keys, offsets = r.prompt_block_keys(block_size)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(requests_module, "_CHUNK", 3)  # many small chunks
        mp.setattr(requests_module, "_PHASE_TABLE_MAX", 0)  # range hashes computed per block
        assert np.array_equal(r.prompt_block_keys(block_size)[0], keys)
    if r.blocks is not None:  # content keys are the content's, wherever the request is
        for i in range(len(r)):
            assert np.array_equal(r[i : i + 1].prompt_block_keys(block_size)[0], keys[offsets[i] : offsets[i + 1]])


def test_block_keys_of_a_shared_prefix_golden() -> None:
    # Two prompts share their first 512-token source block and differ in the second.
    r = Requests([0, 0], [1024, 1000], [1, 1], blocks=[[11, 12], [11, 13]])
    keys, offsets = r.prompt_block_keys(16)
    assert offsets.tolist() == [0, 64, 126]
    a, b = keys[:64], keys[64:]
    assert np.array_equal(a[:32], b[:32]) and not np.intersect1d(a[32:], b[32:]).size
    assert len(np.unique(a)) == 64  # positions inside one source block differ
    # A 1024-token engine block spans both source blocks: it differs as soon as one does.
    big, _ = r.prompt_block_keys(1024)
    assert len(big) == 1  # the second prompt (1000 tokens) has no full 1024-token block
    r2 = Requests([0, 0], [1024, 1024], [1, 1], blocks=[[11, 12], [11, 13]])
    k2, _ = r2.prompt_block_keys(1024)
    assert k2[0] != k2[1]
    # Without content every key is unique.
    plain, _ = Requests([0, 0], [1024, 1024], [1, 1]).prompt_block_keys(16)
    assert len(np.unique(plain)) == 128


@settings(max_examples=50, deadline=None)
@given(values=st.lists(st.integers(0, 2**64 - 1), max_size=20))
def test_mix64_array_is_mix64_elementwise(values: list[int]) -> None:
    mixed = requests_module.mix64_array(np.array(values, dtype=np.uint64))
    assert mixed.tolist() == [requests_module.mix64(v) for v in values]


def test_block_keys_errors() -> None:
    r = Requests([0], [10], [1])
    for bad, error in ((0, ValueError), (2**31, ValueError), (1.5, TypeError), (True, TypeError)):
        with pytest.raises(error, match="block_size="):
            r.prompt_block_keys(bad)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------- slicing, rate, summary


def test_slicing_keeps_each_request_whole() -> None:
    r = Requests(
        [0, 1, 2, 3], [600, 10, 1100, 5], [1, 2, 3, 4], blocks=[[1, 2], [3], [4, 5, 6], [7]], priority=[3, 2, 1, 0]
    )
    head = r[:2]
    assert head.arrival.tolist() == [0, 1] and head.blocks is not None
    assert [b.tolist() for b in head.blocks] == [[1, 2], [3]]
    odd = r[np.array([False, True, False, True])]
    assert odd.prompt_len.tolist() == [10, 5] and odd.priority is not None and odd.priority.tolist() == [2, 0]
    assert odd.blocks is not None and [b.tolist() for b in odd.blocks] == [[3], [7]]
    picked = r[[0, 2, -1]]
    assert picked.blocks is not None and [b.tolist() for b in picked.blocks] == [[1, 2], [4, 5, 6], [7]]
    assert len(r[3:1]) == 0
    with pytest.raises(ValueError, match="non-decreasing"):
        r[::-1]
    with pytest.raises(TypeError, match="index=1 is not accepted"):
        r[1]
    with pytest.raises(IndexError, match="indices must be in"):
        r[[4]]
    with pytest.raises(ValueError, match="a mask needs 4 entries"):
        r[np.array([True])]


def test_at_rate_rescales_arrivals_to_the_mean_rate() -> None:
    r = Requests([5.0, 6.0, 8.0, 9.0], [1] * 4, [1] * 4)
    assert r.rate == 3 / 4 and r.duration == 4.0
    fast = r.at_rate(3.0)
    assert fast.arrival.tolist() == [0.0, 0.25, 0.75, 1.0]
    assert math.isclose(fast.rate, 3.0)
    for bad in (Requests([1.0], [1], [1]), Requests([1.0, 1.0], [1, 1], [1, 1])):
        with pytest.raises(ValueError, match="rescaling needs at least two requests"):
            bad.at_rate(1.0)
    with pytest.raises(ValueError, match=r"qps=0\.0 is not accepted"):
        r.at_rate(0)
    assert math.isnan(Requests([1.0], [1], [1]).rate) and Requests([1.0, 1.0], [1, 1], [1, 1]).rate == math.inf


def test_summary_figures() -> None:
    r = Requests([0, 1, 2, 4], [10, 20, 30, 40], [1, 2, 3, 100], name="tiny")
    s = r.summary()
    assert (s.requests, s.duration, s.rate) == (4, 4.0, 0.75)
    assert (s.mean_prompt_len, s.mean_output_len, s.p50_prompt_len) == (25.0, 26.5, 25.0)
    assert (s.max_prompt_len, s.max_output_len, s.prompt_tokens, s.output_tokens) == (40, 100, 100, 106)
    assert not s.has_blocks
    assert r.to_dict() == s.to_dict() and json.dumps(r.to_dict())
    empty = Requests([], [], []).summary()
    assert empty.requests == 0 and math.isnan(empty.mean_prompt_len)


# ---------------------------------------------------------------------------- readers


def write_azure(path: Path, rows: list[tuple[str, int, int]]) -> Path:
    path.write_text("TIMESTAMP,ContextTokens,GeneratedTokens\n" + "".join(f"{t},{c},{g}\n" for t, c, g in rows))
    return path


def write_mooncake(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_read_azure(tmp_path: Path) -> None:
    p = write_azure(
        tmp_path / "a.csv",
        [
            ("2023-11-16 18:15:46.6805900", 374, 44),
            ("2023-11-16 18:15:50.9951690", 396, 109),
            ("2023-11-16 18:15:50.9951690", 5, 1),
        ],
    )
    r = Requests.read(p)
    assert r.name == "a.csv" and r.blocks is None
    assert r.prompt_len.tolist() == [374, 396, 5] and r.output_len.tolist() == [44, 109, 1]
    assert r.arrival.tolist() == [0.0, 4.314579, 4.314579]


def test_read_mooncake_sorts_by_time_stably(tmp_path: Path) -> None:
    records = [
        {"timestamp": 3000, "input_length": 600, "output_length": 7, "hash_ids": [0, 1]},
        {"timestamp": 1000, "input_length": 512, "output_length": 2, "hash_ids": [0]},
        {"timestamp": 1000, "input_length": 1, "output_length": 1, "hash_ids": [5]},
    ]
    r = Requests.read(write_mooncake(tmp_path / "m.jsonl", records))
    assert r.arrival.tolist() == [0.0, 0.0, 2.0]
    assert r.prompt_len.tolist() == [512, 1, 600] and r.output_len.tolist() == [2, 1, 7]
    assert r.source_block == 512 and r.blocks is not None
    assert [b.tolist() for b in r.blocks] == [[0], [5], [0, 1]]
    keys, offsets = r.prompt_block_keys(16)
    assert np.array_equal(keys[offsets[0] : offsets[1]], keys[offsets[2] : offsets[2] + 32])  # block 0 is shared


@pytest.mark.parametrize(
    ("records", "message"),
    [
        (
            [{"timestamp": 0, "input_length": 600, "output_length": 1, "hash_ids": [0]}],
            "blocks[0] is not accepted: it has 1 ids",
        ),
        (
            [{"timestamp": 0, "input_length": 600, "hash_ids": [0, 1]}],
            "line 1: not a Mooncake request with timestamp, input_length, output_length, hash_ids (KeyError: 'output_length')",
        ),
        (
            [{"timestamp": 0, "input_length": 10, "output_length": 0, "hash_ids": [0]}],
            "line 1: output_len[0]=0 is not accepted",
        ),
        (
            [
                {"timestamp": 0, "input_length": 10, "output_length": 1, "hash_ids": [0]},
                {"timestamp": 1, "input_length": 1, "output_length": 1, "hash_ids": []},
            ],
            "line 2: no hash_ids",
        ),
        (
            [{"timestamp": 0, "input_length": 10, "output_length": 1, "hash_ids": [2**63]}],
            "line 1: hash_ids is not accepted: ids must be within int64",
        ),
        (
            [{"timestamp": 0, "input_length": 10, "output_length": "x", "hash_ids": [1]}],
            "line 1: not a Mooncake request with timestamp, input_length, output_length, hash_ids (TypeError: timestamp, input_length and output_length must be numbers)",
        ),
    ],
)
def test_read_mooncake_errors_name_the_file_and_request(
    tmp_path: Path, records: list[dict[str, Any]], message: str
) -> None:
    p = write_mooncake(tmp_path / "bad.jsonl", records)
    with pytest.raises(ValueError) as info:
        Requests.read(p)
    assert message in str(info.value) and "bad.jsonl" in str(info.value)


def test_read_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValueError, match="output_len"):
        Requests.read(write_azure(tmp_path / "z.csv", [("2023-11-16 18:15:46.68", 3, 0)]))
    other = tmp_path / "keys.csv"
    other.write_text("1\n2\n")
    with pytest.raises(ValueError, match="not a request log"):
        Requests.read(other)
    with pytest.raises(ValueError, match="format='npy' is not accepted"):
        Requests.read(other, format="npy")
    with pytest.raises(FileNotFoundError, match=r"no such request log: no-such-dataset .*not a dataset name"):
        Requests.read("no-such-dataset")


@pytest.mark.parametrize(
    ("name", "n", "first"),
    [
        ("azure-conv-2023", 19366, (374, 44)),
        ("azure-code-2023", 8819, (4808, 10)),
        ("mooncake-conversation", 12031, (6758, 500)),
        ("mooncake-synthetic", 3993, None),
    ],
)
def test_real_traces(name: str, n: int, first: Optional[tuple[int, int]], dataset: Callable[[str], Path]) -> None:
    dataset(name)
    r = Requests.read(name)
    assert len(r) == n and r.arrival[0] == 0.0 and r.name == name
    assert 3400 < r.duration < 3600 or name == "mooncake-synthetic"
    if first is not None:
        assert (int(r.prompt_len[0]), int(r.output_len[0])) == first
    if name.startswith("mooncake"):
        assert r.blocks is not None and r.source_block == 512
        keys, offsets = r.prompt_block_keys(16)
        assert len(keys) == int((r.prompt_len // 16).sum())
        if name == "mooncake-conversation":  # the first three requests share hash id 0: one 512-token block
            assert r.blocks[0][0] == r.blocks[1][0] == r.blocks[2][0] == 0
            assert np.array_equal(keys[offsets[0] : offsets[0] + 32], keys[offsets[1] : offsets[1] + 32])
            assert keys[offsets[0] + 32] != keys[offsets[1] + 32]


# ---------------------------------------------------------------------------- generators


def test_poisson_arrivals_and_lengths() -> None:
    r = Requests.poisson(
        20_000, 4.0, prompt_len=Lognormal(1000, 1.0), output_len=Empirical(np.array([1, 10, 100])), seed=7
    )
    assert len(r) == 20_000 and r.arrival[0] == 0.0 and r.blocks is None
    gaps = np.diff(r.arrival)
    assert abs(r.rate / 4.0 - 1) < 0.03 and abs(gaps.std() / gaps.mean() - 1) < 0.03  # exponential: cv 1
    assert abs(r.prompt_len.mean() / 1000 - 1) < 0.05
    assert set(np.unique(r.output_len).tolist()) == {1, 10, 100}
    same = Requests.poisson(
        20_000, 4.0, prompt_len=Lognormal(1000, 1.0), output_len=Empirical(np.array([1, 10, 100])), seed=7
    )
    assert np.array_equal(r.arrival, same.arrival) and np.array_equal(r.prompt_len, same.prompt_len)
    other = Requests.poisson(20_000, 4.0, seed=8)
    assert not np.array_equal(r.arrival, other.arrival)
    assert (other.prompt_len == 1024).all() and (other.output_len == 128).all()


def test_gamma_arrivals_are_bursty() -> None:
    r = Requests.gamma(50_000, 10.0, 3.0, seed=1)
    gaps = np.diff(r.arrival)
    assert abs(gaps.mean() * 10 - 1) < 0.05 and abs(gaps.std() / gaps.mean() / 3 - 1) < 0.05
    regular = Requests.gamma(50_000, 10.0, 0.2, seed=1)
    g = np.diff(regular.arrival)
    assert abs(g.std() / g.mean() / 0.2 - 1) < 0.05


def test_lognormal_clips_to_max_and_sigma_zero_is_constant() -> None:
    rng = np.random.default_rng(0)
    x = Lognormal(1000, 2.0, max=4000).sample(rng, 10_000)
    assert x.max() == 4000 and x.min() >= 1
    assert (Lognormal(300, 0.0).sample(rng, 5) == 300).all()


def test_system_prompts_are_shared_through_block_keys() -> None:
    sp = SystemPrompts(count=3, length=100, fraction=0.5)
    r = Requests.poisson(2000, 1.0, prompt_len=Lognormal(200, 0.5), output_len=10, system_prompts=sp, seed=3)
    assert r.blocks is not None and r.source_block == 16
    keys, offsets = r.prompt_block_keys(16)
    first = np.array([int(keys[offsets[i]]) for i in range(len(r))])
    groups = np.unique(first, return_counts=True)[1]
    shared = np.sort(groups)[-3:]  # three system prompts, each on about a sixth of the requests
    assert (abs(shared / len(r) - 1 / 6) < 0.04).all()
    assert shared.sum() + (groups == 1).sum() == len(r)  # the others are unique
    # A system prompt of 100 tokens fills 6 full 16-token blocks; the 7th mixes in the request's own text.
    values, counts = np.unique(first, return_counts=True)
    a, b = np.flatnonzero(first == values[np.argmax(counts)])[:2]
    assert np.array_equal(keys[offsets[a] : offsets[a] + 6], keys[offsets[b] : offsets[b] + 6])
    assert keys[offsets[a] + 6] != keys[offsets[b] + 6]
    assert r.prompt_len[a] >= 101


def test_conversations_share_their_history() -> None:
    r = Requests.conversations(
        300,
        0.5,
        turns=(1, 5),
        message_len=Lognormal(100, 0.5),
        answer_len=Lognormal(150, 0.5),
        think_time=20.0,
        system_prompts=SystemPrompts(2, 64),
        seed=5,
    )
    assert (np.diff(r.arrival) >= 0).all() and r.blocks is not None
    blocks = r.blocks
    # Group turns by conversation through their first own block id (ids after the two system prompts' 8 blocks).
    own: dict[int, list[int]] = {}
    for i in range(len(r)):
        own.setdefault(int(blocks[i][4]), []).append(i)
    assert len(own) == 300 and sum(len(v) for v in own.values()) == len(r)
    for turns in own.values():
        for prev, nxt in zip(turns, turns[1:]):
            assert r.prompt_len[nxt] > r.prompt_len[prev] + r.output_len[prev]
            # The next prompt starts with the previous one: the same stream, the same ids.
            assert np.array_equal(blocks[nxt][: len(blocks[prev])], blocks[prev])
            keys_prev, _ = r[prev : prev + 1].prompt_block_keys(16)
            keys_next, _ = r[nxt : nxt + 1].prompt_block_keys(16)
            assert np.array_equal(keys_next[: len(keys_prev)], keys_prev)
    check_keys(r[:200], 16)


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: Requests.poisson(-1, 1.0), ValueError, "n=-1 is not accepted"),
        (lambda: Requests.poisson(10, 0.0), ValueError, "rate=0.0 is not accepted"),
        (lambda: Requests.poisson(10, 1.0, prompt_len=0), ValueError, "prompt_len=0 is not accepted"),
        (lambda: Requests.poisson(10, 1.0, output_len="long"), TypeError, "output_len='long' is not accepted"),  # type: ignore[arg-type]
        (lambda: Requests.poisson(10, 1.0, system_prompts=(1, 2)), TypeError, "system_prompts=(1, 2) is not accepted"),  # type: ignore[arg-type]
        (lambda: Requests.gamma(10, 1.0, 0.0), ValueError, "cv=0.0 is not accepted"),
        (lambda: Requests.conversations(10, 1.0, turns=(3, 1)), ValueError, "turns=(3, 1) is not accepted"),
        (lambda: Requests.conversations(10, 1.0, turns=0), ValueError, "turns=0 is not accepted"),
        (lambda: Requests.conversations(10, 1.0, think_time=-1.0), ValueError, "think_time=-1.0 is not accepted"),
        (lambda: Lognormal(0, 1.0), ValueError, "mean=0.0 is not accepted"),
        (lambda: Lognormal(10, float("nan")), ValueError, "sigma=nan is not accepted"),
        (lambda: Empirical(np.array([0, 3])), ValueError, "values is not accepted"),
        (lambda: Empirical(np.array([1.5])), ValueError, "values is not accepted"),
        (lambda: SystemPrompts(0, 10), ValueError, "count=0 is not accepted"),
        (lambda: SystemPrompts(1, 10, 1.5), ValueError, "fraction=1.5 is not accepted"),
    ],
)
def test_generator_errors(call: Any, error: type, message: str) -> None:
    with pytest.raises(error) as info:
        call()
    assert message in str(info.value)


def test_empty_generations() -> None:
    assert len(Requests.poisson(0, 1.0)) == 0
    assert len(Requests.conversations(0, 1.0)) == 0
    assert len(Requests.poisson(0, 1.0, system_prompts=SystemPrompts(1, 10)).prompt_block_keys(16)[0]) == 0


def test_serve_is_a_topic() -> None:
    assert ob.serve.Requests is Requests


def test_requests_unpickled_from_misaligned_buffers_are_aligned() -> None:
    """Pickle's out-of-band buffers (as Dask sends them) may land at any offset; the native
    engine reads arrays in place, so an unpickled Requests realigns its own."""
    r = ob.serve.Requests.conversations(20, rate=2.0, seed=1)
    buffers: list[pickle.PickleBuffer] = []
    data = pickle.dumps(r, protocol=5, buffer_callback=buffers.append)
    shifted = []
    for b in buffers:
        raw = b.raw()
        room = bytearray(len(raw) + 1)
        room[1:] = raw
        shifted.append(memoryview(room)[1:])
    back = pickle.loads(data, buffers=shifted)
    for name in ("arrival", "prompt_len", "output_len", "block_ids", "block_offsets"):
        arr = getattr(back, name)
        assert arr.flags.aligned and not arr.flags.writeable, name
        np.testing.assert_array_equal(arr, getattr(r, name))
    a = ob.serve.simulate(back, model="llama-3-8b", gpu="h100")
    np.testing.assert_array_equal(a.finish, ob.serve.simulate(r, model="llama-3-8b", gpu="h100").finish)
