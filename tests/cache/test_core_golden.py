"""The core's golden miss counts (``rust/osbench-core/src/cache/golden.rs``) held to libCacheSim
(the reference engine for a policy libCacheSim does not have): the same seeded traces,
regenerated here, replayed through the peer. A changed count in the core's table, or a
generator that drifted from its twin below, fails here; so does a policy without its rows,
and the failure gives the row to add."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Callable

import numpy as np
import pytest

import osbench as ob
from osbench.cache import LIBCACHESIM_NAMES, POLICIES
from osbench.host.reference import SplitMix64


def golden_trace(seed: int, length: int, n: int) -> list[int]:
    """The twin of the core's ``golden_trace``: 3 in 4 accesses to ``n`` hot keys with a cubic
    skew, 1 in 8 to a new key, 1 in 8 to a loop over 300 keys."""
    rng, scan, keys = SplitMix64(seed), 0, []
    for i in range(length):
        x = rng.next_u64()
        if x >> 61 == 0:
            scan += 1
            keys.append((1 << 40) | scan)
        elif x >> 61 == 1:
            keys.append((1 << 41) | (i % 300))
        else:
            u = (x & 0xFFFF_FFFF) % n
            keys.append(u * u * u // (n * n))
    return keys


def golden_size(key: int, largest: int) -> int:
    return 1 + SplitMix64(key).next_u64() % largest


def rows(text: str) -> dict[str, list[tuple[int, int]]]:
    table = {}
    for policy, pairs in re.findall(r'\("([\w-]+)", \[(.*?)\]\)', text):
        table[policy] = [(int(c), int(m)) for c, m in re.findall(r"\((\d+), (\d+)\)", pairs)]
    return table


CASES = {"UNIT_MISSES": (1, False), "SIZED_MISSES": (2, True)}


def count_misses(policy: str, capacity: int, path: Path, trace: ob.traces.Trace, sizes: list[int]) -> int:
    """libCacheSim's misses for a policy it has; the reference engine's for the others."""
    if policy not in LIBCACHESIM_NAMES:
        return ob.cache.replay(trace, policy, capacity, sizes=sizes, engine="reference").misses
    lcs = pytest.importorskip("libcachesim")
    reader = lcs.TraceReader(str(path), lcs.TraceType.ORACLE_GENERAL_TRACE)
    miss_ratio, _ = getattr(lcs, LIBCACHESIM_NAMES[policy])(capacity).process_trace(reader)
    return round(miss_ratio * len(trace))


@pytest.mark.parametrize("table", list(CASES))
def test_core_golden_counts_are_libcachesims(table: str, core_table: Callable[[str, str], str], tmp_path: Path) -> None:
    seed, sized = CASES[table]
    keys = golden_trace(seed, 20_000, 1_000)
    sizes = [golden_size(k, 100) if sized else 1 for k in keys]
    trace = ob.traces.Trace(np.array(keys, dtype=np.uint64))
    path = tmp_path / "golden.oracleGeneral.bin"
    ob.traces.write_oracle_general(trace, path, sizes=np.array(sizes, dtype=np.uint32))
    golden = rows(core_table("cache/golden.rs", table))
    for policy in POLICIES:
        capacities = [c for c, _ in golden.get(policy, [])] or ([1000, 5000, 25000] if sized else [20, 100, 500])
        want = [(c, count_misses(policy, c, path, trace, sizes)) for c in capacities]
        row = f'("{policy}", [{", ".join(f"({c}, {m})" for c, m in want)}]),'
        assert golden.get(policy) == want, f"{table} in rust/osbench-core/src/cache/golden.rs needs the row {row}"
    assert list(golden) == list(POLICIES)
    # The first keys, as the core's own test states them.
    assert golden_trace(1, 6, 1_000) == [68, 89, 658, 15, 8, 0]
