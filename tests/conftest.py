from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest

from osbench import datasets

_found: dict[str, tuple[Path | None, str]] = {}


def _get(name: str) -> Path:
    """The dataset's local path; the test skips, saying why, when it cannot be had (no network
    and no copy in OSBENCH_DATA_DIR or the cache). One attempt per dataset and session."""
    if name not in _found:
        _found[name] = datasets.try_fetch(name)
    path, reason = _found[name]
    if path is None:
        pytest.skip(f"dataset {name} not available: {reason}")
    return path


@pytest.fixture(scope="session")
def dataset() -> Callable[[str], Path]:
    """``dataset("cloudphysics")``: the path of a dataset, or the test skips with the reason."""
    return _get
