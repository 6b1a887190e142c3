"""Sweeps: process pool and Dask give the same results as direct replays; resume after a kill."""

from __future__ import annotations

import concurrent.futures as cf
import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import osbench as ob
from osbench.cache import sweep


@pytest.fixture(scope="module")
def spec(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    d = tmp_path_factory.mktemp("sweep")
    a = ob.traces.zipf(800, 0.9, 20_000, seed=1)
    b = ob.traces.Trace(ob.traces.zipf(500, 1.1, 15_000, seed=2).keys, sizes=None)
    ob.traces.write(a, d / "a.oracleGeneral.bin")
    ob.traces.write(b, d / "b.csv.zst")
    return {
        "traces": [str(d / "a.oracleGeneral.bin"), {"path": str(d / "b.csv.zst"), "format": "csv"}],
        "policies": ["lru", "sieve", "s3fifo"],
        "capacities": [20, 100, 400],
        "chunk_size": 4096,
    }


def direct(spec: dict[str, Any]) -> list[int]:
    out = []
    for t in spec["traces"]:
        path = t if isinstance(t, str) else t["path"]
        trace = ob.traces.read(path)
        out.extend(ob.cache.replay(trace, p, c).hits for p in spec["policies"] for c in spec["capacities"])
    return out


class CountingPool(cf.ThreadPoolExecutor):
    def __init__(self) -> None:
        super().__init__(max_workers=2)
        self.submitted = 0

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> cf.Future:  # type: ignore[override]
        self.submitted += 1
        return super().submit(fn, *args, **kwargs)


def test_process_pool_sweep_equals_direct_replays(spec: dict[str, Any], tmp_path: Path) -> None:
    seen = []
    results = sweep.run(spec, tmp_path / "r.jsonl", workers=2, progress=lambda done, total: seen.append((done, total)))
    assert [r["hits"] for r in results] == direct(spec)
    assert seen[0] == (0, 18) and seen[-1] == (18, 18)
    assert len((tmp_path / "r.jsonl").read_text().splitlines()) == 18
    pytest.importorskip("matplotlib")
    sweep.figure(results, tmp_path / "curves.png")
    assert (tmp_path / "curves.png").read_bytes()[:4] == b"\x89PNG"
    # a rerun finds everything done and runs nothing
    pool = CountingPool()
    assert sweep.run(spec, tmp_path / "r.jsonl", executor=pool) == results and pool.submitted == 0


def test_dask_local_cluster_gives_the_same_results(spec: dict[str, Any], tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    results = sweep.run(spec, tmp_path / "d.jsonl", executor="dask", workers=2)
    assert [r["hits"] for r in results] == direct(spec)


def test_resume_runs_only_the_missing_cells(spec: dict[str, Any], tmp_path: Path) -> None:
    full = sweep.run(spec, tmp_path / "full.jsonl", executor=cf.ThreadPoolExecutor(2))
    lines = (tmp_path / "full.jsonl").read_text().splitlines()
    partial = tmp_path / "partial.jsonl"
    partial.write_text("\n".join(lines[:5]) + "\n" + lines[5][: len(lines[5]) // 2])  # killed mid-write
    pool = CountingPool()
    assert sweep.run(spec, partial, executor=pool) == full
    assert pool.submitted == 13
    assert all(json.loads(x) for x in partial.read_text().splitlines())


def test_killed_sweep_resumes_losing_nothing(spec: dict[str, Any], tmp_path: Path) -> None:
    big = dict(spec, capacities=list(range(20, 420, 20)))
    (tmp_path / "spec.json").write_text(json.dumps(big))
    out = tmp_path / "k.jsonl"
    code = (
        "import concurrent.futures as cf, sys\n"
        "from osbench.cache import sweep\n"
        f"sweep.run({str(tmp_path / 'spec.json')!r}, {str(out)!r}, executor=cf.ThreadPoolExecutor(1))\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code])
    deadline = time.time() + 60
    while time.time() < deadline and (not out.exists() or len(out.read_text().splitlines()) < 3):
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    n_before = len(out.read_text().splitlines())
    assert 3 <= n_before < 120
    results = sweep.run(tmp_path / "spec.json", out, executor=cf.ThreadPoolExecutor(2))
    assert [r["hits"] for r in results] == direct(big)


def test_toml_spec_and_bad_specs(spec: dict[str, Any], tmp_path: Path) -> None:
    a = spec["traces"][0]
    (tmp_path / "s.toml").write_text(f'traces = ["{a}"]\npolicies = ["gdsf"]\ncapacities = [50]\nsizes = true\n')
    (r,) = sweep.run(tmp_path / "s.toml", tmp_path / "t.jsonl", executor=cf.ThreadPoolExecutor(1))
    assert r["hits"] == ob.cache.replay(ob.traces.read(a), "gdsf", 50, sizes=True).hits and r["sizes"] is True
    with pytest.raises(ValueError, match="needs non-empty policies"):
        sweep.load_spec({"traces": [a], "capacities": [3]})
    with pytest.raises(ValueError, match="policies='nope'"):
        sweep.load_spec({"traces": [a], "policies": ["nope"], "capacities": [3]})
    with pytest.raises(ValueError, match="at least 10"):
        sweep.load_spec({"traces": [a], "policies": ["s3fifo"], "capacities": [3]})
    with pytest.raises(ValueError, match="no path"):
        sweep.load_spec({"traces": [{"format": "csv"}], "policies": ["lru"], "capacities": [3]})
    (tmp_path / "bad.toml").write_text("traces = [")
    with pytest.raises(ValueError, match=r"bad.toml: not a valid sweep spec"):
        sweep.load_spec(tmp_path / "bad.toml")
    (tmp_path / "junk.jsonl").write_text("not json\n{}\n")
    with pytest.raises(ValueError, match=r"junk.jsonl: line 1: not a sweep result"):
        sweep.run({"traces": [a], "policies": ["lru"], "capacities": [5]}, tmp_path / "junk.jsonl")
    with pytest.raises(TypeError, match="executor"):
        sweep.run({"traces": [a], "policies": ["lru"], "capacities": [5]}, tmp_path / "x.jsonl", executor=42)
    assert np.isfinite(r["hit_ratio"])
