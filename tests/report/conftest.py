"""Two quick reports made on this machine, once per session, for the report's tests."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest


def make_report(out: Path) -> Path:
    done = subprocess.run(
        [sys.executable, "-m", "osbench", "report", "--quick", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    return out


@pytest.fixture(scope="session")
def quick_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A report folder written by ``osbench report --quick``."""
    return make_report(tmp_path_factory.mktemp("report") / "a")


@pytest.fixture(scope="session")
def second_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Another quick report of this machine, made after the first."""
    return make_report(tmp_path_factory.mktemp("report") / "b")
