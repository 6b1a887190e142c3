"""Host probes: native (Rust) against the Python engine and perf, one group per workload.

Timings here are whole calls (setup included) of a fixed amount of work; the per-hop figures
with their spread are what ``osbench host`` reports."""

from __future__ import annotations

import os

import numpy as np
import pytest

import osbench as ob
from osbench import _native
from osbench.host import reference, roundtrip

CPU = min(os.sched_getaffinity(0))


def _full(request: pytest.FixtureRequest) -> bool:
    return not request.config.getoption("benchmark_disable", default=False)


@pytest.mark.parametrize("engine", ["native", "reference"])
def test_chase_cycle(benchmark, request: pytest.FixtureRequest, engine: str) -> None:
    lines = 200_000 if _full(request) else 2_000
    benchmark.group = f"host: build the pointer-chase cycle, {lines:,} lines"
    out = benchmark.pedantic(ob.host.chase_cycle, args=(lines, 1, engine), rounds=3, iterations=1)
    other = "reference" if engine == "native" else "native"
    assert out.tolist() == ob.host.chase_cycle(lines, 1, other).tolist()


@pytest.mark.parametrize("engine", ["native", "reference"])
def test_pointer_chase(benchmark, request: pytest.FixtureRequest, engine: str) -> None:
    loads = 1_000_000 if _full(request) else 2_000
    benchmark.group = f"host: pointer chase over 256 KiB, {loads:,} loads"
    if engine == "native":
        fn = lambda: _native.host_chase(256 << 10, loads, 1, 0)  # noqa: E731
    else:
        fn = lambda: reference.chase_latency(256 << 10, loads, 1, 0)  # noqa: E731
    out = benchmark.pedantic(fn, rounds=3, iterations=1)
    # Timings only: both rows walk the same cycle, one figure per repeat.
    assert len(out) == 1 and np.all(np.isfinite(out) & (out > 0))


PEERS = ["native", "python", "perf"]


def _pipe_round_trips(between: str, engine: str, n: int) -> int:
    """Make ``n`` round trips; returns how many were timed (perf: runs of ``n`` times ``n``)."""
    if engine == "native":
        r = _native.host_pingpong("pipe", between, n, 0, 1, CPU, CPU)
        assert r["received_a"] == r["received_b"] == n and r["mismatched"] == 0
        return len(r["samples_ns"])
    if engine == "python":
        start = roundtrip._STARTERS["thread-pipe" if between == "threads" else "process-pipe"]
        samples = roundtrip._python_round_trips(start, n, 0, CPU, CPU)
        assert np.all(samples > 0)
        return len(samples)
    runs = roundtrip._perf(between == "threads", n, CPU)
    assert np.all(runs > 0)
    return len(runs) * n


@pytest.mark.parametrize("engine", PEERS)
@pytest.mark.parametrize("between", ["threads", "processes"])
def test_pipe_round_trips(benchmark, request: pytest.FixtureRequest, between: str, engine: str) -> None:
    n = 5_000 if _full(request) else 50
    if engine == "perf":
        if ob.host.perf_available() is None:
            pytest.skip("perf is not installed here")
        roundtrip.PERF_RUNS = 1  # one perf run per benchmark round
        n = max(n, 1000)
    benchmark.group = f"host: {n:,} pipe round trips between two {between}, same CPU"
    done = benchmark.pedantic(_pipe_round_trips, args=(between, engine, n), rounds=5, iterations=1)
    assert done == n  # every row makes the same n round trips
