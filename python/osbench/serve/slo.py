"""Whether latencies meet a service-level objective: the one rule every caller reads.

A run meets the SLO at a percentile when that percentile of its TTFTs is at most ``slo_ttft``
and that percentile of its TPOTs at most ``slo_tpot`` (an SLO left out, None, constrains
nothing; a latency nothing measured, NaN, as the TPOT of one-token outputs, misses nothing).
Records are rows by column name (``"requests/s"``, ``"TTFT p99"``, ``"TPOT p99"``), as the
lecture's rate sweep, the report's findings and the capacity planner
(:mod:`osbench.serve.plan`) keep them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Callable, Optional

RATE = "requests/s"
"""The column of a record's request rate."""


def label(percentile: float) -> str:
    """The column suffix of a percentile: ``p99``, ``p99.9``, ``p50``."""
    return f"p{percentile:g}"


def within_slo(
    record: Mapping[str, Any],
    slo_ttft: Optional[float],
    slo_tpot: Optional[float],
    percentile: float = 99,
    value: Callable[[Any], float] = float,
) -> bool:
    """Whether the record's TTFT and TPOT at ``percentile`` meet the SLO. ``value`` reads a cell
    as a number (the report's findings pass one that refuses damaged cells)."""
    p = label(percentile)
    for slo, column in ((slo_ttft, f"TTFT {p}"), (slo_tpot, f"TPOT {p}")):
        if slo is not None and value(record[column]) > slo:  # NaN compares False: it misses nothing
            return False
    return True


def highest_within_slo(
    records: Sequence[Mapping[str, Any]],
    slo_ttft: Optional[float],
    slo_tpot: Optional[float],
    value: Callable[[Any], float] = float,
    percentile: float = 99,
) -> Optional[Mapping[str, Any]]:
    """The record of the highest rate (:data:`RATE`) whose latencies at ``percentile`` meet
    the SLO (:func:`within_slo`); None if none does."""
    ok = [r for r in records if within_slo(r, slo_ttft, slo_tpot, percentile, value)]
    return max(ok, key=lambda r: value(r[RATE])) if ok else None


__all__ = ["RATE", "highest_within_slo", "label", "within_slo"]
