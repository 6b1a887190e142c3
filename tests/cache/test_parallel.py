"""Replays spread over threads give the numbers of one replay at a time: replay_grid, curve and
sweeps on any number of threads, with sizes and costs; their arguments are checked."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import osbench as ob
from osbench.cache import MIN_CAPACITY, POLICIES, sweep
from osbench.errors import ArgumentError


@st.composite
def traces(draw: st.DrawFn) -> ob.traces.Trace:
    pool = draw(st.lists(st.integers(-(2**63), 2**63 - 1), min_size=1, max_size=60, unique=True))
    keys = draw(st.lists(st.sampled_from(pool), max_size=600))
    return ob.traces.Trace(np.array(keys, dtype=np.int64))


@settings(max_examples=40, deadline=None)
@given(
    trace=traces(),
    policies=st.lists(st.sampled_from(POLICIES), min_size=1, max_size=5),
    capacities=st.lists(st.integers(1, 70), min_size=1, max_size=6),
    threads=st.integers(1, 5),
)
def test_grid_equals_one_replay_per_cell(
    trace: ob.traces.Trace, policies: list[str], capacities: list[int], threads: int
) -> None:
    capacities = [max(c, max(MIN_CAPACITY.get(p, 1) for p in policies)) for c in capacities]
    got = ob.cache.replay_grid(trace, policies, capacities, threads=threads)
    want = [ob.cache.replay(trace, p, c) for p in policies for c in capacities]
    assert got == want


@settings(max_examples=25, deadline=None)
@given(trace=traces(), capacities=st.lists(st.integers(2, 70), min_size=1, max_size=6), threads=st.integers(1, 5))
def test_curves_on_any_number_of_threads_equal_serial_replays(
    trace: ob.traces.Trace, capacities: list[int], threads: int
) -> None:
    for policy in POLICIES:
        caps = [max(c, MIN_CAPACITY.get(policy, 1)) for c in capacities]
        want = [ob.cache.replay(trace, policy, c).hit_ratio for c in caps]
        assert ob.cache.curve(trace, policy, caps, threads=threads).tolist() == want, policy
        assert ob.cache.curve(trace, policy, caps, threads=1).tolist() == want, policy


def test_grid_with_sizes_costs_and_bit_on_insert() -> None:
    t = ob.traces.zipf(300, 1.0, 20_000, seed=4)
    sizes = (t.keys % 7 + 1).astype(np.uint64)
    costs = (t.keys % 5 + 1).astype(np.float64) * 1e5
    caps = [50, 200, 900]
    sized = ob.cache.replay_grid(t, ["lru", "arc", "opt", "gdsf"], caps, sizes=sizes, threads=2)
    assert sized == [ob.cache.replay(t, p, c, sizes=sizes) for p in ["lru", "arc", "opt", "gdsf"] for c in caps]
    costed = ob.cache.replay_grid(t, "gdsf", caps, costs=costs, threads=2)
    assert costed == [ob.cache.replay(t, "gdsf", c, costs=costs) for c in caps]
    clock = ob.cache.replay_grid(t.keys, ["clock"], caps, bit_on_insert=True)
    assert clock == [ob.cache.replay(t, "clock", c, bit_on_insert=True) for c in caps]
    assert ob.cache.replay_grid(t, [], caps) == [] and ob.cache.replay_grid(t, ["lru"], []) == []


def test_grid_arguments_are_checked() -> None:
    t = ob.traces.zipf(100, 1.0, 1000, seed=1)
    with pytest.raises(ArgumentError, match="threads=0 is not accepted"):
        ob.cache.replay_grid(t, ["lru"], [10], threads=0)
    with pytest.raises(ArgumentError, match="policy"):
        ob.cache.replay_grid(t, ["lru", "nope"], [10])
    with pytest.raises(ArgumentError, match="capacities"):
        ob.cache.replay_grid(t, ["lru"], [10, 0])
    with pytest.raises(ArgumentError, match="bit_on_insert"):
        ob.cache.replay_grid(t, ["clock", "lru"], [10], bit_on_insert=True)
    with pytest.raises(ArgumentError, match="costs is not accepted for policy='lru'"):
        ob.cache.replay_grid(t, ["gdsf", "lru"], [10], costs=np.ones(len(t)))
    with pytest.raises(ArgumentError, match="not accepted as a path"):
        ob.cache.replay_grid(os.fspath("trace.bin"), ["lru"], [10])


def test_native_grid_checks_what_python_does_not_see() -> None:
    ids, n = ob.traces.zipf(100, 1.0, 1000, seed=1).dense()
    with pytest.raises(ValueError, match="capacities"):
        ob._native.cache_replay_grid(["lru", "fifo"], np.array([5], dtype=np.uint64), ids, n)
    with pytest.raises(ValueError, match="next_use"):
        ob._native.cache_replay_grid(["lru", "opt"], np.array([5, 5], dtype=np.uint64), ids, n)
    with pytest.raises(ValueError, match="threads=2000"):
        ob._native.cache_replay_grid(["lru"], np.array([5], dtype=np.uint64), ids, n, threads=2000)


def test_sweep_in_threads_equals_the_streaming_process_pool(tmp_path: Path) -> None:
    a = ob.traces.zipf(800, 0.9, 20_000, seed=1)
    b = ob.traces.zipf(500, 1.1, 15_000, seed=2)
    ob.traces.write(a, tmp_path / "a.oracleGeneral.bin")
    ob.traces.write(b, tmp_path / "b.csv.zst")
    spec = {
        "traces": [str(tmp_path / "a.oracleGeneral.bin"), {"path": str(tmp_path / "b.csv.zst"), "format": "csv"}],
        "policies": ["lru", "arc", "gdsf"],
        "capacities": [20, 100, 400],
    }
    streamed = sweep.run(spec, tmp_path / "p.jsonl", executor="process", workers=2)
    seen: list[tuple[int, int]] = []
    threaded = sweep.run(spec, tmp_path / "t.jsonl", workers=2, progress=lambda d, t: seen.append((d, t)))
    assert threaded == streamed and seen[0] == (0, 18) and seen[-1] == (18, 18)
    assert [r["hits"] for r in threaded[:9]] == [
        ob.cache.replay(a, p, c).hits for p in spec["policies"] for c in [20, 100, 400]
    ]
    # resumed from a partial file, the threads run only the missing cells
    lines = (tmp_path / "t.jsonl").read_text().splitlines()
    (tmp_path / "r.jsonl").write_text("\n".join(lines[:7]) + "\n")
    assert sweep.run(spec, tmp_path / "r.jsonl", executor="threads") == streamed
    assert len((tmp_path / "r.jsonl").read_text().splitlines()) == 18
    with pytest.raises(ArgumentError, match="workers=0"):
        sweep.run(spec, tmp_path / "x.jsonl", workers=0)
