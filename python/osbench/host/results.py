"""What :func:`osbench.host.measure` found: :class:`HostReport`, data only (measuring is in
:mod:`osbench.host.report`, the tables in :mod:`osbench.host.tables`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from osbench._table import Table
from osbench.host.faults import CopyOnWrite, LatencyPoint, PageFaults
from osbench.host.gil import GilScaling, Isolation
from osbench.host.info import HostInfo
from osbench.host.roundtrip import RoundTrip
from osbench.host.tables import report_tables


@dataclass(frozen=True)
class HostReport:
    """Everything :func:`measure` found. ``notes`` lists what could not run here, and why."""

    quick: bool
    info: HostInfo
    isolation: Isolation
    gil: GilScaling
    round_trips: tuple[RoundTrip, ...]
    page_faults: tuple[PageFaults, ...]
    cow: tuple[CopyOnWrite, ...]
    memory_latency: tuple[LatencyPoint, ...]
    notes: tuple[str, ...]
    seconds: float
    load_average: tuple[float, float]  # 1-minute load average before and after measuring

    def find(self, mechanism: str, placement: str = "same CPU") -> Optional[RoundTrip]:
        """The round trip of ``mechanism`` at ``placement`` (a label: "same CPU", ...)."""
        for r in self.round_trips:
            if r.mechanism == mechanism and r.placement == placement:
                return r
        return None

    @property
    def call_ns(self) -> Optional[float]:
        """Nanoseconds of a function call, the yardstick of every ratio: the lower median of
        the two call runs (pinned and as scheduled), i.e. the call when nothing disturbs it."""
        medians = [r.spread.median for r in self.round_trips if r.mechanism == "call" and r.spread is not None]
        return min(medians) if medians else None

    def ratio_to_call(self, r: RoundTrip) -> Optional[float]:
        call = self.call_ns
        return None if r.spread is None or not call else r.spread.median / call

    def figures(self) -> dict[str, Any]:
        """The data behind the two figures: round-trip latencies (bars on a log axis, unpinned
        runs as their modes) and the memory latency curve with the cache sizes."""
        bars = []
        for r in self.round_trips:
            if r.spread is None:
                continue
            bars.append(
                {
                    "mechanism": r.mechanism,
                    "label": r.label,
                    "between": r.between,
                    "engine": r.engine,
                    "placement": r.placement,
                    "cpus": r.cpus,
                    "median_ns": r.spread.median,
                    "p25_ns": r.spread.p25,
                    "p75_ns": r.spread.p75,
                    "p99_ns": r.spread.p99,
                    "ratio_to_call": self.ratio_to_call(r),
                    "modes": [
                        {"label": m.label, "fraction": m.fraction, "median_ns": m.spread.median} for m in r.modes
                    ],
                }
            )
        curves = []
        for pages in dict.fromkeys(p.pages for p in self.memory_latency):
            spreads = [(p.bytes, p.ns) for p in self.memory_latency if p.pages == pages and p.ns is not None]
            curves.append(
                {
                    "pages": pages,
                    "bytes": [b for b, _ in spreads],
                    "median_ns": [s.median for _, s in spreads],
                    "p25_ns": [s.p25 for _, s in spreads],
                    "p75_ns": [s.p75 for _, s in spreads],
                }
            )
        return {
            "round_trips": bars,
            "memory_latency": {
                "curves": curves,
                "caches": {c.name: c.size_bytes for c in self.info.caches if c.kind != "Instruction"},
            },
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "quick": self.quick,
            "seconds": self.seconds,
            "info": self.info.to_dict(),
            "isolation": self.isolation.to_dict(),
            "gil": self.gil.to_dict(),
            "round_trips": [{**r.to_dict(), "ratio_to_call": self.ratio_to_call(r)} for r in self.round_trips],
            "page_faults": [p.to_dict() for p in self.page_faults],
            "cow": [c.to_dict() for c in self.cow],
            "memory_latency": [p.to_dict() for p in self.memory_latency],
            "notes": list(self.notes),
            "load_average": list(self.load_average),
            "figures": self.figures(),
        }

    def tables(self) -> list[Table]:
        """The report as tables: demo 01's three (isolation, GIL, round trips) and the rest."""
        return report_tables(self)


__all__ = ["HostReport"]
