"""Cache replay and curves: native vs reference vs libCacheSim and cachetools.

Every row of a group replays the same trace, and the miss counts are asserted equal.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import osbench as ob
from osbench.cache import LIBCACHESIM_NAMES, POLICIES

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
        if policy not in LIBCACHESIM_NAMES:
            pytest.skip(f"libCacheSim has no class that agrees with {policy}")

        def run() -> int:
            reader = lcs.TraceReader(str(path), lcs.TraceType.ORACLE_GENERAL_TRACE)
            miss_ratio, _ = getattr(lcs, LIBCACHESIM_NAMES[policy])(capacity).process_trace(reader)
            return round(miss_ratio * len(trace))

        misses = once(benchmark, run)
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
