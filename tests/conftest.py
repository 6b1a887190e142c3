from __future__ import annotations

import os
import re
import signal
from pathlib import Path
from typing import Callable

import pytest

from osbench import datasets

REPO = Path(__file__).resolve().parents[1]

# A test runner started with Ctrl-C ignored (a background job of a script, as CI may start it)
# passes that on to every child process, and the tests that send a child Ctrl-C would find it
# ignored. Handled instead, it reaches the children as a terminal's shell gives it: the default.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def _missing(what: str) -> None:
    """Something a test needs is missing: it skips saying why, or fails in CI (``CI`` set, as
    ``.ci/run`` does), where the strongest checks (the peers the Makefile installs, the public
    datasets) must never disappear silently."""
    if os.environ.get("CI"):
        pytest.fail(f"{what} (a skip is not accepted in CI)")
    pytest.skip(what)


@pytest.fixture(scope="session")
def missing() -> Callable[[str], None]:
    """``missing("libcachesim is not installed")``: skip, or fail in CI."""
    return _missing


_found: dict[str, tuple[Path | None, str]] = {}


def _get(name: str) -> Path:
    """The dataset's local path; without it (no network and no copy in OSBENCH_DATA_DIR or the
    cache) the test skips saying why, or fails in CI. One attempt per dataset and session."""
    if name not in _found:
        _found[name] = datasets.try_fetch(name)
    path, reason = _found[name]
    if path is None:
        _missing(f"dataset {name} not available: {reason}")
    assert path is not None
    return path


@pytest.fixture(scope="session")
def dataset() -> Callable[[str], Path]:
    """``dataset("cloudphysics")``: the path of a dataset, or the test skips with the reason
    (fails in CI)."""
    return _get


def _core_table(path: str, name: str) -> str:
    """The rows of the array ``name`` in ``rust/osbench-core/src/path``: the lines between its
    opening ``[`` and its closing ``]``."""
    source = (REPO / "rust/osbench-core/src" / path).read_text()
    found = re.search(rf"\b{name}\b[^=]*=[^\[]*\[\n(.*?)\n\s*\][;\n]", source, re.S)
    assert found, f"no table {name} in {path}"
    return found.group(1)


@pytest.fixture(scope="session")
def core_table() -> Callable[[str, str], str]:
    """``core_table("cache/golden.rs", "UNIT_MISSES")``: the rows of a golden table of the core's
    tests, as text, for the tests that check its numbers against an independent engine."""
    return _core_table
