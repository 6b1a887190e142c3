"""Host measurements: what threads, processes, the GIL, page faults and memory cost here.

Lecture section 1 and demo 01, measured on this machine (not simulated). Python-level probes
sit beside native ones (Rust, no Python in the loop), so that Python's own overhead can be told
apart from what the OS costs.

>>> import osbench as ob
>>> ob.host.info().python_build in ("with GIL", "free-threaded")
True

- :func:`info`: CPU, cores, caches, memory, kernel, Python build.
- :func:`measure`: everything, as a :class:`HostReport` (``quick=True`` for tests and CI);
  :func:`write` saves it as JSON, Markdown and PNG figures.
- :func:`round_trip` (one mechanism of :data:`MECHANISMS` at one placement of
  :data:`PLACEMENTS`), :func:`isolation`, :func:`gil_scaling`, :func:`page_faults`,
  :func:`cow_faults`, :func:`memory_latency`: the probes one by one.

Every timing is a median with its spread (:class:`Spread`) and says where its two ends ran;
a probe that cannot run here comes back "not available" with the reason.
"""

from __future__ import annotations

from osbench.host.faults import (
    PREFAULTS,
    CopyOnWrite,
    LatencyPoint,
    PageFaults,
    chase_cycle,
    cow_faults,
    latency_sizes,
    memory_latency,
    page_faults,
)
from osbench.host.gil import GilRow, GilScaling, Isolation, gil_scaling, isolation
from osbench.host.info import CacheLevel, HostInfo, info
from osbench.host.report import Plan, markdown, measure, write
from osbench.host.results import HostReport
from osbench.host.roundtrip import MECHANISMS, PLACEMENTS, Mechanism, RoundTrip, perf_available, round_trip
from osbench.host.stats import Mode, Spread, modes

__all__ = [
    "MECHANISMS",
    "PLACEMENTS",
    "PREFAULTS",
    "CacheLevel",
    "CopyOnWrite",
    "GilRow",
    "GilScaling",
    "HostInfo",
    "HostReport",
    "Isolation",
    "LatencyPoint",
    "Mechanism",
    "Mode",
    "PageFaults",
    "Plan",
    "RoundTrip",
    "Spread",
    "chase_cycle",
    "cow_faults",
    "gil_scaling",
    "info",
    "isolation",
    "latency_sizes",
    "markdown",
    "measure",
    "memory_latency",
    "modes",
    "page_faults",
    "perf_available",
    "round_trip",
    "write",
]
