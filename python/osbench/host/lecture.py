"""Lecture demo 01 (section 1): measured on this host, not simulated.

Demo 1: a thread's write is seen, a child process's is not. Demo 2: the GIL (4 units of work on
threads and on processes). Demo 3: round trips, against a function call. The lecture's figures
come from a 12-core Apple M4 Pro under macOS; on a 2-CPU virtual machine the shape is the same
(thread and process hops cost hundreds of calls, pure-Python threads do not scale) but the
numbers are not, and cross-CPU wake-ups are far dearer.
"""

from __future__ import annotations

from typing import Callable, Optional

from osbench._table import Table
from osbench.host.report import measure


def tables(quick: bool = False, progress: Optional[Callable[[str], None]] = None) -> list[Table]:
    """Demo 01's tables (isolation, GIL scaling, round trips), then the host facts, the native
    ping-pong checks, page faults, copy-on-write and memory latency. ``progress`` receives a line
    per measurement (they take minutes at full size)."""
    report = measure(quick=quick, progress=progress)
    t = report.tables()
    by_key = {x.key: x for x in t}
    first = [by_key[k] for k in ("isolation", "gil", "round_trips")]
    return first + [x for x in t if x.key not in ("isolation", "gil", "round_trips")]
