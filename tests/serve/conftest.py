"""Fixtures of the serving tests."""

from __future__ import annotations

from typing import Callable

import pytest

MEASURED_TABLES = ("gemm", "context-attention", "generation-attention", "custom-allreduce", "nccl", "moe")
"""AIConfigurator's operator tables the measured step time reads, per GPU."""


@pytest.fixture(scope="session")
def measured_tables(missing: Callable[[str], None], dataset: Callable[[str], object]) -> None:
    """The measured step time can be built for H100 and H200 (pyarrow and their tables), or the
    test skips saying why (fails in CI)."""
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        missing("pyarrow is not installed (the 'measured' extra)")
    for gpu in ("h100_sxm", "h200_sxm"):
        for table in MEASURED_TABLES:
            dataset(f"aic-{gpu}-{table}")
