from __future__ import annotations

from pathlib import Path

import pytest

from osbench import traces


@pytest.fixture(scope="session")
def shared_traces() -> Path:
    """The folder of real traces beside the checkout; tests that need it skip without it."""
    folder = traces.shared_traces()
    if folder is None:
        pytest.skip("../shared/traces is not present")
    return folder
