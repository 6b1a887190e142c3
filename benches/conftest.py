"""Benchmarks: pytest-benchmark, one group per workload, one row per engine or peer.

`make test` runs them once with ``--benchmark-disable`` as correctness checks on small inputs;
`make bench` runs them for real at full size. A debug build is refused: its timings would
say nothing about the engine.
"""

from __future__ import annotations

import pytest

from osbench import _native


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    enabled = not config.getoption("benchmark_disable", default=False)
    benches = [i for i in items if "benchmark" in getattr(i, "fixturenames", ())]
    if enabled and benches and _native.BUILD_PROFILE != "release":
        pytest.exit(
            f"refusing to benchmark a {_native.BUILD_PROFILE} build of osbench._native: build with --release",
            returncode=2,
        )


@pytest.fixture(scope="session")
def full_size(request: pytest.FixtureRequest) -> bool:
    """True when benchmarks run for real; False for the quick correctness pass."""
    return not request.config.getoption("benchmark_disable", default=False)
