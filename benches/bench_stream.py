"""Streaming replay of a trace file larger than one wants in memory: 100M accesses.

Each row runs in a fresh process so its peak memory (ru_maxrss) is its own: "stream" replays
the oracleGeneral file in chunks; "in-memory" loads every key first (the read is not timed) and
replays the array. Both report their hits, asserted equal, and their peak resident memory.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import osbench as ob

CAPACITY = 100_000
HITS: dict[str, int] = {}

CHILD = """
import json, resource, sys, time
import numpy as np
import osbench as ob
mode, path, capacity = sys.argv[1], sys.argv[2], int(sys.argv[3])
if mode == "stream":
    started = time.perf_counter()
    r = ob.cache.replay(path, "lru", capacity)
else:
    keys = np.fromfile(path, dtype=ob.traces.ORACLE_GENERAL)["id"]
    started = time.perf_counter()
    r = ob.cache.replay(keys, "lru", capacity)
seconds = time.perf_counter() - started
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({"hits": r.hits, "accesses": r.accesses, "seconds": seconds, "peak_bytes": peak}))
"""


@pytest.fixture(scope="module")
def big_file(full_size: bool, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A Zipf(1.0) oracleGeneral file over 1M keys, written 10M accesses at a time."""
    total, step = (100_000_000, 10_000_000) if full_size else (400_000, 100_000)
    path = tmp_path_factory.mktemp("stream") / "zipf-100M.oracleGeneral.bin"
    with open(path, "wb") as f:
        for k in range(total // step):
            keys = ob.traces.zipf(1_000_000, 1.0, step, seed=100 + k).keys
            records = np.zeros(step, dtype=ob.traces.ORACLE_GENERAL)
            records["id"] = keys
            records["size"] = 1
            records["next_access"] = -1  # LRU does not read it
            f.write(records.tobytes())
    return path


def run_child(mode: str, path: Path) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, mode, str(path), str(CAPACITY)], capture_output=True, text=True, check=True
    )
    return dict(json.loads(out.stdout))


@pytest.mark.parametrize("row", ["stream", "in-memory"])
def test_streaming_replay(benchmark: Any, row: str, big_file: Path, full_size: bool) -> None:
    n = big_file.stat().st_size // ob.traces.ORACLE_GENERAL.itemsize
    benchmark.group = f"LRU replay of a {n:,}-access file, capacity {CAPACITY:,}"
    result = benchmark.pedantic(run_child, args=(row, big_file), rounds=1, iterations=1)
    benchmark.extra_info.update(result)
    assert result["accesses"] == n
    HITS[row] = result["hits"]
    assert len(set(HITS.values())) == 1, HITS  # both rows, same hits
    if not full_size:
        keys = np.fromfile(big_file, dtype=ob.traces.ORACLE_GENERAL)["id"]
        assert result["hits"] == ob.cache.replay(keys, "lru", CAPACITY).hits
