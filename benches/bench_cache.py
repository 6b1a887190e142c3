"""Cache replay and curves: native vs reference vs libCacheSim and cachetools.

Every row of a group replays the same trace, and the miss counts are asserted equal.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import osbench as ob
from osbench.cache import LIBCACHESIM_NAMES, LIBCACHESIM_STATISTICAL, POLICIES

CACHETOOLS = {"fifo": "FIFOCache", "lru": "LRUCache"}


def sizes(full: bool) -> dict[str, Any]:
    if full:
        return {
            "mid": (100_000, 1_000_000),
            "large": (1_000_000, 10_000_000),
            "capacity": 10_000,
            "large_capacity": 100_000,
        }
    return {"mid": (2_000, 20_000), "large": (5_000, 50_000), "capacity": 200, "large_capacity": 1_000}


@pytest.fixture(scope="module")
def mid_trace(full_size: bool) -> ob.traces.Trace:
    n_keys, length = sizes(full_size)["mid"]
    t = ob.traces.zipf(n_keys, 1.0, length, seed=42)
    t.next_use()
    return t


@pytest.fixture(scope="module")
def large_trace(full_size: bool, tmp_path_factory: pytest.TempPathFactory) -> tuple[ob.traces.Trace, Path]:
    n_keys, length = sizes(full_size)["large"]
    t = ob.traces.zipf(n_keys, 1.0, length, seed=43)
    path = tmp_path_factory.mktemp("traces") / "zipf.oracleGeneral.bin"
    ob.traces.write_oracle_general(t, path)
    return t, path


def once(benchmark: Any, fn: Any, rounds: int = 3) -> Any:
    return benchmark.pedantic(fn, rounds=rounds, iterations=1, warmup_rounds=0)


# ------------------------------------------------------------------ native vs reference (1M accesses)


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("row", ["native", "native-end-to-end", "reference", "cachetools"])
def test_replay_mid(benchmark: Any, policy: str, row: str, mid_trace: ob.traces.Trace, full_size: bool) -> None:
    benchmark.group = f"replay 1M Zipf(1.0) 100k keys: {policy}"
    capacity = sizes(full_size)["capacity"]
    expected = ob.cache.replay(mid_trace, policy, capacity).misses
    keys = mid_trace.keys
    if row == "native":
        result = once(benchmark, lambda: ob.cache.replay(mid_trace, policy, capacity), rounds=5)
        misses = result.misses
    elif row == "native-end-to-end":
        # from a plain array: the key -> dense id mapping (and next-use pass for OPT) included
        result = once(benchmark, lambda: ob.cache.replay(keys, policy, capacity), rounds=5)
        misses = result.misses
    elif row == "reference":
        result = once(benchmark, lambda: ob.cache.replay(mid_trace, policy, capacity, engine="reference"), rounds=1)
        misses = result.misses
    else:
        cachetools = pytest.importorskip("cachetools")
        if policy not in CACHETOOLS:
            pytest.skip(f"cachetools has no {policy} with the same definition")
        cls = getattr(cachetools, CACHETOOLS[policy])
        key_list = keys.tolist()

        def run() -> int:
            cache = cls(maxsize=capacity)
            hits = 0
            for k in key_list:
                if k in cache:
                    cache[k]
                    hits += 1
                else:
                    cache[k] = True
            return len(key_list) - hits

        misses = once(benchmark, run, rounds=1)
    assert misses == expected


# ------------------------------------------------------------------ native vs libCacheSim (10M accesses)


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("row", ["native", "native-end-to-end", "native-stream-file", "libcachesim"])
def test_replay_large(
    benchmark: Any, policy: str, row: str, large_trace: tuple[ob.traces.Trace, Path], full_size: bool
) -> None:
    trace, path = large_trace
    benchmark.group = f"replay 10M Zipf(1.0) 1M keys: {policy}"
    capacity = sizes(full_size)["large_capacity"]
    expected = ob.cache.replay(trace, policy, capacity).misses
    if row == "native":
        misses = once(benchmark, lambda: ob.cache.replay(trace, policy, capacity)).misses
    elif row == "native-end-to-end":
        misses = once(benchmark, lambda: ob.cache.replay(trace.keys, policy, capacity)).misses
    elif row == "native-stream-file":
        # the oracleGeneral file, read in 1M-access chunks (OPT from its next_access field)
        misses = once(benchmark, lambda: ob.cache.replay(path, policy, capacity)).misses
    else:
        lcs = pytest.importorskip("libcachesim")
        peer = LIBCACHESIM_NAMES.get(policy) or LIBCACHESIM_STATISTICAL.get(policy)
        if peer is None:
            pytest.skip(f"libCacheSim has no class that agrees with {policy}")

        def run() -> int:
            reader = lcs.TraceReader(str(path), lcs.TraceType.ORACLE_GENERAL_TRACE)
            miss_ratio, _ = getattr(lcs, peer)(capacity).process_trace(reader)
            return round(miss_ratio * len(trace))

        misses = once(benchmark, run)
        if policy in LIBCACHESIM_STATISTICAL:
            # Another generator: equal in distribution (tests/cache/test_randomised.py), so one
            # run is held to a point of the hit ratio.
            assert abs(misses - expected) <= 0.01 * len(trace), (misses, expected)
            return
    assert misses == expected


# ------------------------------------------------------------------ admission filters (10M accesses)


@pytest.mark.parametrize("policy", ["lru", "arc", "s3fifo"])
@pytest.mark.parametrize("admission", ["bloom", "size", "prob", "adaptsize"])
@pytest.mark.parametrize("row", ["native", "native-no-filter", "libcachesim"])
def test_replay_admitted_large(
    benchmark: Any, policy: str, admission: str, row: str, large_trace: tuple[ob.traces.Trace, Path], full_size: bool
) -> None:
    """A filter in front of the cache: native against libCacheSim's admissioner (the same miss
    counts for the deterministic filters; within a point of hit ratio for the seeded ones, one
    run each), and against the same replay without a filter (the gated loop's price)."""
    trace, path = large_trace
    benchmark.group = f"replay 10M Zipf(1.0) 1M keys, admission {admission}: {policy}"
    capacity = sizes(full_size)["large_capacity"]
    # Unit sizes: the size filter refuses everything below its threshold 2, i.e. nothing, at 1.
    params: dict[str, Any] = {"size": {"size": 1}, "prob": {"prob": 0.5}}.get(admission, {})
    kw = {"admission": admission, "admission_params": params}
    expected = ob.cache.replay(trace, policy, capacity, **kw).misses
    if row == "native":
        misses = once(benchmark, lambda: ob.cache.replay(trace, policy, capacity, **kw)).misses
    elif row == "native-no-filter":
        once(benchmark, lambda: ob.cache.replay(trace, policy, capacity))
        return
    else:
        lcs = pytest.importorskip("libcachesim")
        cls = getattr(lcs, ob.cache.ADMISSION_LIBCACHESIM_NAMES[admission])

        def run() -> int:
            gate = cls(*params.values())
            reader = lcs.TraceReader(str(path), lcs.TraceType.ORACLE_GENERAL_TRACE)
            miss_ratio, _ = getattr(lcs, LIBCACHESIM_NAMES[policy])(capacity, admissioner=gate).process_trace(reader)
            return round(miss_ratio * len(trace))

        misses = once(benchmark, run)
        if ob.cache.ADMISSION_TABLE[admission].seeded:
            assert abs(misses - expected) <= 0.01 * len(trace), (misses, expected)
            return
    assert misses == expected


# ------------------------------------------------------------------ GDSF with costs


@pytest.mark.parametrize("row", ["native", "native-costs", "reference-costs"])
def test_gdsf_costs(benchmark: Any, row: str, mid_trace: ob.traces.Trace, full_size: bool) -> None:
    """GDSF without costs (libCacheSim's fixed 1e6) vs with one cost per access (a cost per
    key, 1e5 to 1e7: e.g. the prefill recompute cost of a KV block), on the 1M trace."""
    benchmark.group = "gdsf 1M Zipf(1.0) 100k keys: with vs without costs"
    capacity = sizes(full_size)["capacity"]
    costs = (mid_trace.keys % 100 + 1).astype(np.float64) * 1e5
    expected = ob.cache.replay(mid_trace, "gdsf", capacity, costs=costs).misses
    if row == "native":
        misses = once(benchmark, lambda: ob.cache.replay(mid_trace, "gdsf", capacity), rounds=5).misses
        assert misses == ob.cache.replay(mid_trace, "gdsf", capacity, costs=np.full(len(costs), 1e6)).misses
        return
    engine = "native" if row == "native-costs" else "reference"
    result = once(
        benchmark,
        lambda: ob.cache.replay(mid_trace, "gdsf", capacity, costs=costs, engine=engine),
        rounds=5 if engine == "native" else 1,
    )
    assert result.misses == expected


# ------------------------------------------------------------------ curves


def curve_capacities(n_keys: int) -> np.ndarray:
    return np.unique(np.geomspace(10, n_keys, 100).astype(np.int64))


@pytest.mark.parametrize(
    "row", ["curve-100-capacities", "curve-from-file", "one-replay", "100-replays", "libcachesim-100-replays"]
)
def test_lru_curve(
    benchmark: Any, row: str, large_trace: tuple[ob.traces.Trace, Path], mid_trace: ob.traces.Trace
) -> None:
    """The exact LRU curve at 100 capacities: one pass on a prepared trace, and end to end
    from the oracleGeneral file (read, id mapping, curve) against libCacheSim replaying the
    same file once per capacity (it has no one-pass curve)."""
    trace, path = large_trace
    caps = curve_capacities(trace.n_distinct)
    benchmark.group = "LRU curve, 100 capacities, 10M accesses"
    if row == "curve-100-capacities":
        ratios = once(benchmark, lambda: ob.cache.curve(trace, "lru", caps))
        assert ratios[-1] == ob.cache.replay(trace, "lru", int(caps[-1])).hit_ratio
    elif row == "curve-from-file":
        ratios = once(benchmark, lambda: ob.cache.curve(ob.traces.read(path), "lru", caps), rounds=1)
        assert ratios.tolist() == ob.cache.curve(trace, "lru", caps).tolist()
    elif row == "libcachesim-100-replays":
        lcs = pytest.importorskip("libcachesim")

        def run() -> list[int]:
            return [
                round(
                    lcs.LRU(int(c)).process_trace(lcs.TraceReader(str(path), lcs.TraceType.ORACLE_GENERAL_TRACE))[0]
                    * len(trace)
                )
                for c in caps
            ]

        misses = once(benchmark, run, rounds=1)
        assert misses == [round((1 - h) * len(trace)) for h in ob.cache.curve(trace, "lru", caps)]
    elif row == "one-replay":
        middle = int(caps[len(caps) // 2])
        result = once(benchmark, lambda: ob.cache.replay(trace, "lru", middle))
        assert result.hit_ratio == ob.cache.curve(trace, "lru", [middle])[0]
    else:
        # 100 separate replays (the way a non-stack tool draws the curve), timed on the 1M trace
        benchmark.group = "LRU curve, 100 capacities, 1M accesses"
        mid_caps = curve_capacities(mid_trace.n_distinct)
        ratios = once(
            benchmark,
            lambda: np.array([ob.cache.replay(mid_trace, "lru", int(c)).hit_ratio for c in mid_caps]),
            rounds=1,
        )
        assert ratios.tolist() == ob.cache.curve(mid_trace, "lru", mid_caps).tolist()


def test_lru_curve_mid(benchmark: Any, mid_trace: ob.traces.Trace) -> None:
    benchmark.group = "LRU curve, 100 capacities, 1M accesses"
    caps = curve_capacities(mid_trace.n_distinct)
    ratios = once(benchmark, lambda: ob.cache.curve(mid_trace, "lru", caps), rounds=5)
    assert ratios.tolist() == [ob.cache.replay(mid_trace, "lru", int(c)).hit_ratio for c in caps]


# ------------------------------------------------------------------ sampled curves (SHARDS)


README_MEAN_ERROR = {
    ("lru", "sample-0.01"): 0.16,
    ("lru", "sample-0.01-large-only"): 0.40,
    ("sieve", "sample-0.01"): 0.27,
    ("sieve", "sample-0.01-large-only"): 0.39,
}
"""SHARDS' mean absolute error in hit-ratio points as the README states it for these rows at
full size; the same seeds give the same curves on any machine, so a full run reproduces it."""
ONE_POINT = 1.0
"""The other rows at full size: under one point."""
QUICK_MEAN_ERROR = 2.0
"""The quick pass (``make test``): traces 50 and 200 times smaller, so fewer keys in each
sample; its rows measure 0 to 1.2 points."""


@pytest.mark.parametrize("row", ["exact", "exact-from-keys", "sample-0.1", "sample-0.01", "sample-0.01-large-only"])
@pytest.mark.parametrize("policy", ["lru", "sieve"])
def test_sampled_curve(
    benchmark: Any,
    policy: str,
    row: str,
    large_trace: tuple[ob.traces.Trace, Path],
    mid_trace: ob.traces.Trace,
    full_size: bool,
) -> None:
    """Error of SHARDS against the exact curve (mean absolute error in hit-ratio points,
    in extra_info) and its speed. LRU on the 10M trace; SIEVE (no stack property: one
    replay per capacity) on the 1M trace. "exact" reuses the trace's dense ids;
    "exact-from-keys" maps the raw keys first, as the sampled rows start from raw keys.
    Capacities under 100 / rate are counted exactly (LRU) or on a larger sample (others);
    "large-only" asks only for capacities of at least 100 / rate, all from the 1% sample."""
    trace = large_trace[0] if policy == "lru" else mid_trace
    caps = curve_capacities(trace.n_distinct)
    benchmark.group = f"{policy} curve, 100 capacities, {'10M' if policy == 'lru' else '1M'} accesses: exact vs SHARDS"
    exact = ob.cache.curve(trace, policy, caps)
    if row.startswith("exact"):
        fresh = (lambda: ob.traces.Trace(trace.keys)) if row == "exact-from-keys" else (lambda: trace)
        ratios = once(benchmark, lambda: ob.cache.curve(fresh(), policy, caps), rounds=1)
        assert ratios.tolist() == exact.tolist()
        return
    rate = float(row.split("-")[1])
    if row.endswith("large-only"):
        keep = caps * rate >= ob.cache.SHARDS_MIN_OBJECTS
        caps, exact = caps[keep], exact[keep]
        if not len(caps):
            pytest.skip("the check-sized trace has no capacity of 100 / rate objects")
    est = once(benchmark, lambda: ob.cache.curve(trace, policy, caps, sample=rate))
    error = np.abs(est - exact) * 100
    benchmark.extra_info["mae_points"] = round(float(error.mean()), 3)
    benchmark.extra_info["max_error_points"] = round(float(error.max()), 3)
    sampled = caps * rate >= ob.cache.SHARDS_MIN_OBJECTS
    if sampled.any():
        benchmark.extra_info["mae_points_sampled_capacities"] = round(float(error[sampled].mean()), 3)
    assert np.all((est >= 0) & (est <= 1))
    limit = README_MEAN_ERROR.get((policy, row), ONE_POINT) if full_size else QUICK_MEAN_ERROR
    assert error.mean() <= limit + 0.005, (policy, row, error.mean(), limit)


# ------------------------------------------------------------------ interning (keys to dense ids)


@pytest.fixture(scope="module")
def random_keys(full_size: bool) -> np.ndarray:
    """The Zipf(1.0) trace's ranks renamed to random 64-bit keys (the key map cannot lean on
    small, dense key values)."""
    n_keys, length = sizes(full_size)["large"]
    ranks = ob.traces.zipf(n_keys, 1.0, length, seed=43).keys
    names = np.random.default_rng(5).integers(-(2**63), 2**63 - 1, size=n_keys, dtype=np.int64)
    return names[ranks]


@pytest.mark.parametrize("row", ["native", "random-slot-ceiling", "numpy-unique"])
def test_interning(benchmark: Any, row: str, random_keys: np.ndarray) -> None:
    """Keys to dense ids in first-appearance order (what a Trace does once), against the
    ceiling of memory: a gather of one random slot per key (by the same hash) from a table the
    size of the key map (16-byte slots, as many as the native map takes for this many keys: a
    quarter of the keys, rounded up to a power of two), the same misses without probing,
    comparing or writing. numpy's unique (sorted ids, not first-appearance) for scale."""
    benchmark.group = "interning 10M random 64-bit keys, Zipf(1.0), 1M names"
    n = len(random_keys)
    benchmark.extra_info["keys"] = n
    if row == "native":
        ids, n_ids = once(benchmark, lambda: ob._native.dense_ids(random_keys), rounds=5)
        first = np.unique(random_keys, return_index=True)[1]
        assert n_ids == len(first) and ids[np.sort(first)].tolist() == list(range(n_ids))
    elif row == "random-slot-ceiling":
        slots = 1 << (n // 4 - 1).bit_length()
        table = np.zeros((slots, 2), dtype=np.uint64)
        at = (random_keys.view(np.uint64) * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(64 - slots.bit_length() + 1)
        at = at.astype(np.intp)
        once(benchmark, lambda: np.take(table, at, axis=0), rounds=5)
    else:
        once(benchmark, lambda: np.unique(random_keys, return_inverse=True), rounds=1)


# ------------------------------------------------------------------ every core


@pytest.mark.parametrize("row", ["native", "threads-1", "libcachesim-10-replays"])
def test_arc_curve_threads(benchmark: Any, row: str, large_trace: tuple[ob.traces.Trace, Path]) -> None:
    """A 10-capacity ARC curve (ARC has no stack property: one replay per capacity) on every
    usable CPU against one thread, and libCacheSim replaying the file once per capacity."""
    trace, path = large_trace
    caps = np.unique(np.geomspace(100, trace.n_distinct, 10).astype(np.int64))
    benchmark.group = f"ARC curve, {len(caps)} capacities, 10M accesses: threads"
    benchmark.extra_info["threads"] = (
        len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    )
    serial = ob.cache.curve(trace, "arc", caps, threads=1)
    if row == "libcachesim-10-replays":
        lcs = pytest.importorskip("libcachesim")

        def run() -> list[float]:
            reader = lambda: lcs.TraceReader(str(path), lcs.TraceType.ORACLE_GENERAL_TRACE)  # noqa: E731
            arc = getattr(lcs, LIBCACHESIM_NAMES["arc"])
            return [1 - arc(int(c)).process_trace(reader())[0] for c in caps]

        ratios = once(benchmark, run, rounds=1)
        assert [round((1 - r) * len(trace)) for r in ratios] == [round((1 - h) * len(trace)) for h in serial]
        return
    threads = 1 if row == "threads-1" else None
    used: list[float] = []

    def run() -> np.ndarray:
        # CPU time over wall time: how many CPUs the curve got (the speedup's ceiling on a
        # machine other jobs share).
        wall, cpu = time.perf_counter(), time.process_time()
        ratios = ob.cache.curve(trace, "arc", caps, threads=threads)
        used.append((time.process_time() - cpu) / (time.perf_counter() - wall))
        return ratios

    got = once(benchmark, run)
    benchmark.extra_info["cpus_used"] = round(max(used), 2)
    assert got.tolist() == serial.tolist()
