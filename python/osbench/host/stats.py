"""Summaries of timing samples: medians with their spread, and bimodal runs kept apart.

A shared virtual machine is noisy, so every figure is a median with its quartiles, p99 and
extremes, never a bare mean. A run whose two ends were left to the scheduler lands sometimes on
one CPU, sometimes on two, and the two cases differ by an order of magnitude: averaging them
gives a number that never happened. :func:`modes` splits such a run into its two modes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from osbench._format import duration_ns
from osbench._record import Record
from osbench.errors import ArgumentError, ArgumentTypeError


@dataclass(frozen=True)
class Spread(Record):
    """Order statistics of ``n`` samples (nanoseconds unless stated otherwise)."""

    n: int
    median: float
    p25: float
    p75: float
    p99: float
    min: float
    max: float

    @classmethod
    def of(cls, samples: Sequence[float] | np.ndarray) -> Spread:
        a = _samples(samples)
        if a.size == 0:
            raise ArgumentError("samples is empty: a spread needs at least one sample")
        p25, med, p75, p99 = np.percentile(a, [25, 50, 75, 99])
        return cls(int(a.size), float(med), float(p25), float(p75), float(p99), float(a.min()), float(a.max()))

    def text(self, unit: str = "ns") -> str:
        """``median [p25-p75] p99`` in a readable unit."""
        return (
            f"{human_ns(self.median)} [{human_ns(self.p25)}-{human_ns(self.p75)}] p99 {human_ns(self.p99)}"
            if unit == "ns"
            else (f"{self.median:.4g} [{self.p25:.4g}-{self.p75:.4g}] p99 {self.p99:.4g} {unit}")
        )


@dataclass(frozen=True)
class Mode:
    """One mode of a bimodal run: its share of the samples and their spread."""

    label: str
    fraction: float
    spread: Spread

    def to_dict(self) -> dict[str, Any]:
        return {"label": self.label, "fraction": self.fraction, "spread": self.spread.to_dict()}


def _samples(samples: Sequence[float] | np.ndarray) -> np.ndarray:
    """Timing samples as a 1-D float64 array: finite numbers (a NaN has no rank, and would make
    every order statistic NaN)."""
    try:
        a = np.asarray(samples, dtype=np.float64)
    except (TypeError, ValueError):
        raise ArgumentTypeError(
            f"samples={_excerpt(samples)} is not accepted: a 1-D sequence of numbers (timings)"
        ) from None
    if a.ndim != 1:
        raise ArgumentError(f"samples is not accepted: a 1-D sequence of numbers, got an array of shape {a.shape}")
    bad = ~np.isfinite(a)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ArgumentError(f"samples is not accepted: {float(a[i])!r} at index {i}: timings are finite numbers")
    return a


def _excerpt(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:40] + "..."


def human_ns(ns: float) -> str:
    """``850 ns``, ``12.3 us``, ``4.56 ms``: the report's formatter (:func:`osbench._format.duration_ns`)."""
    return duration_ns(ns)


def modes(samples: Sequence[float] | np.ndarray, min_fraction: float = 0.05, min_ratio: float = 2.0) -> list[Mode]:
    """Split samples into a fast and a slow mode when they form two clusters.

    Two-means on the logarithm of the samples (start: the 10th and 90th percentiles; iterate
    until the split stops moving). The split is kept only if each mode holds at least
    ``min_fraction`` of the samples and the two medians differ by ``min_ratio`` or more;
    otherwise one mode ("all") is returned. Ties at the boundary go to the fast mode.
    """
    a = np.sort(_samples(samples))
    if a.size == 0:
        return []
    whole = [Mode("all", 1.0, Spread.of(a))]
    if a.size < 20 or a[0] <= 0:
        return whole
    x = np.log(a)
    lo, hi = np.percentile(x, [10, 90])
    if hi - lo < 1e-12:
        return whole
    cut = a.size
    for _ in range(50):
        boundary = (lo + hi) / 2
        new_cut = int(np.searchsorted(x, boundary, side="right"))
        if new_cut in (0, a.size):
            return whole
        lo, hi = x[:new_cut].mean(), x[new_cut:].mean()
        if new_cut == cut:
            break
        cut = new_cut
    fast, slow = a[:cut], a[cut:]
    if min(fast.size, slow.size) < min_fraction * a.size or np.median(slow) < min_ratio * np.median(fast):
        return whole
    return [Mode("fast", fast.size / a.size, Spread.of(fast)), Mode("slow", slow.size / a.size, Spread.of(slow))]


def split_by_placement(samples: np.ndarray, cpu_a: np.ndarray, cpu_b: np.ndarray) -> list[Mode]:
    """Split native samples by where their two ends actually ran (the CPUs each side reported)."""
    out = []
    same = cpu_a == cpu_b
    for label, mask in (("same CPU", same), ("different CPUs", ~same)):
        if mask.any():
            out.append(Mode(label, float(mask.mean()), Spread.of(samples[mask])))
    return out


def ratio(a: Optional[Spread], b: Optional[Spread]) -> Optional[float]:
    """Median of ``a`` over median of ``b`` (None when either is missing)."""
    if a is None or b is None or b.median <= 0:
        return None
    return a.median / b.median
