"""Section 01: processes, threads and the host, measured here (not simulated)."""

from __future__ import annotations

from typing import Optional

import numpy as np

from osbench import host
from osbench._files import figure_png
from osbench._format import duration_ns, ratio
from osbench.host.report import memory_latency_figure, round_trip_figure
from osbench.report.model import Figure, Progress, Section

KEY = "01-host"
ORDER = 10


def _cross_cpu_cost(report: host.HostReport) -> Optional[float]:
    """The median, over mechanisms, of a round trip across CPUs over the same on one CPU."""
    ratios = []
    for rt in report.round_trips:
        cross = report.find(rt.mechanism, "different CPUs")
        if rt.placement == "same CPU" and rt.spread and cross and cross.spread:
            ratios.append(cross.spread.median / rt.spread.median)
    return float(np.median(ratios)) if ratios else None


def build(quick: bool, seed: int, progress: Optional[Progress] = None) -> Section:
    report = host.measure(quick=quick, progress=progress)
    setup = f"{'quick' if quick else 'full'} run on {len(report.info.usable_cpus)} usable CPUs"
    section = Section(
        "01-host",
        "01 Processes, threads and the host",
        "Measured on this host, not simulated: isolation, the GIL, round trips between threads and "
        "processes (as multiples of a function call, with where both ends ran), page faults, "
        "copy-on-write and memory latency. Every figure is a median with its spread. The host's own "
        "facts are in the run manifest at the end.",
        # The host facts table is the manifest's machine table: shown once, at the end.
        tables=[t for t in report.tables() if t.key != "host"],
        results={"report": report.to_dict()},
    )
    section.figures.append(
        Figure(
            "host-round-trips",
            f"Crossing CPUs makes a round trip {ratio(_cross_cpu_cost(report))} as long as on one CPU (median over "
            "mechanisms); every hop costs many function calls",
            figure_png(round_trip_figure(report)),
            setup + "; bars: both ends pinned, diamonds: as scheduled (each mode); log axis",
        )
    )
    latency = [p for p in report.memory_latency if p.ns is not None and p.pages == "4 KiB"]
    section.figures.append(
        Figure(
            "host-memory-latency",
            (
                f"A dependent load takes {duration_ns(latency[0].ns.median)} in the smallest working set and "
                f"{duration_ns(latency[-1].ns.median)} in the largest: each cache level outgrown is a step"
                if latency and latency[0].ns and latency[-1].ns
                else "Memory latency by working-set size"
            ),
            figure_png(memory_latency_figure(report)),
            setup + "; pointer chasing in random order, median and p25-p75 band",
        )
    )
    return section
