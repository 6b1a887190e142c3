"""What the section modules share: matplotlib, loaded when a figure is drawn, and a timer."""

from __future__ import annotations

import time
from typing import Any, Callable


def pyplot() -> Any:
    """matplotlib's pyplot on the Agg backend (no display), imported on first use."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    """``fn()``'s wall time in seconds, and its result."""
    started = time.perf_counter()
    out = fn()
    return time.perf_counter() - started, out
