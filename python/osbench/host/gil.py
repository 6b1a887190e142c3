"""Threads share memory, processes do not; the GIL lets only one thread run Python at a time
(lecture sections 1.1 and 1.3, demos 1 and 2)."""

from __future__ import annotations

import dataclasses
import multiprocessing as mp
import os
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from osbench import _checks
from osbench.host.info import usable_cpus
from osbench.host.stats import Spread


@dataclass(frozen=True)
class Isolation:
    """Demo 1: a list ``[0]``; a thread writes 1 into it, then a forked child writes 2.

    The main thread sees the thread's write (``seen_after_thread == 1``): threads share memory.
    The child saw its own write (``child_saw == 2``) but the parent still sees 1: the child
    wrote its own copy (copy-on-write after fork)."""

    thread_wrote: int
    seen_after_thread: int
    child_wrote: int
    child_saw: int
    seen_after_child: int

    @property
    def thread_write_seen(self) -> bool:
        return self.seen_after_thread == self.thread_wrote

    @property
    def child_write_seen(self) -> bool:
        return self.seen_after_child == self.child_wrote

    def to_dict(self) -> dict[str, Any]:
        return {
            **dataclasses.asdict(self),
            "thread_write_seen": self.thread_write_seen,
            "child_write_seen": self.child_write_seen,
        }


def isolation() -> Isolation:
    """Run demo 1 (a thread and a forked child each write into the same list)."""
    data = [0]

    def thread_body() -> None:
        data[0] = 1

    t = threading.Thread(target=thread_body)
    t.start()
    t.join()
    seen_after_thread = data[0]
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: write its copy, report what it sees, leave at once
        code = 1
        try:
            data[0] = 2
            os.write(write_fd, bytes([data[0]]))
            code = 0
        finally:
            os._exit(code)
    os.close(write_fd)
    child_saw = os.read(read_fd, 1)
    os.close(read_fd)
    os.waitpid(pid, 0)
    return Isolation(1, seen_after_thread, 2, child_saw[0] if child_saw else -1, data[0])


# --- GIL scaling -----------------------------------------------------------------------------


def python_work(n: int) -> int:
    """Pure-Python CPU work: holds the GIL the whole time."""
    s = 0
    for i in range(n):
        s += i * i
    return s


def numpy_work(n: int) -> float:
    """numpy work that releases the GIL: ``n`` passes of ``sin`` over 64k doubles (one thread,
    no BLAS, the array fits in L2)."""
    a = np.linspace(0.0, 1.0, 1 << 16)
    b = np.empty_like(a)
    for _ in range(n):
        np.sin(a, out=b)
    return float(b[-1])


WORKLOADS: dict[str, Callable[[int], Any]] = {"python": python_work, "numpy": numpy_work}
WAYS = ("sequential", "threads", "processes")


@dataclass(frozen=True)
class GilRow:
    """Wall-clock seconds for ``units`` equal units of one workload, done one way."""

    workload: str  # "python" or "numpy"
    way: str  # "sequential", "threads", "processes"
    units: int
    seconds: Spread  # over the repeats
    speedup: float  # sequential median / this median

    def to_dict(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "seconds": self.seconds.to_dict()}


@dataclass(frozen=True)
class GilScaling:
    """Demo 2. ``usable_cpus`` caps any speedup: with 2 CPUs, 4 units never go more than 2x faster."""

    rows: tuple[GilRow, ...]
    usable_cpus: int
    logical_cpus: int
    free_threaded: bool

    def to_dict(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "rows": [r.to_dict() for r in self.rows]}


def _run(way: str, fn: Callable[[int], Any], n: int, units: int) -> float:
    t0 = time.perf_counter()
    if way == "sequential":
        for _ in range(units):
            fn(n)
    elif way == "threads":
        threads = [threading.Thread(target=fn, args=(n,)) for _ in range(units)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    else:  # processes: fork start, so the cost of starting them is counted too
        ctx = mp.get_context("fork")
        procs = [ctx.Process(target=fn, args=(n,)) for _ in range(units)]
        for p in procs:
            p.start()
        for p in procs:
            p.join()
    return time.perf_counter() - t0


def gil_scaling(units: int = 4, python_n: int = 2_000_000, numpy_n: int = 300, repeats: int = 3) -> GilScaling:
    """Demo 2: ``units`` units of pure-Python work (``python_work(python_n)``) and of numpy work
    (``numpy_work(numpy_n)``), done sequentially, on ``units`` threads and on ``units`` forked
    processes; median seconds of ``repeats`` and the speedup over sequential."""
    import sys
    import sysconfig

    units = _checks.positive_int("units", units, 64)
    python_n = _checks.positive_int("python_n", python_n)
    numpy_n = _checks.positive_int("numpy_n", numpy_n)
    repeats = _checks.positive_int("repeats", repeats, 100)
    rows = []
    for workload, n in (("python", python_n), ("numpy", numpy_n)):
        fn = WORKLOADS[workload]
        fn(max(1, n // 20))  # warm up (imports, page faults, caches)
        base = None
        for way in WAYS:
            spread = Spread.of([_run(way, fn, n, units) for _ in range(repeats)])
            base = base or spread.median
            rows.append(GilRow(workload, way, units, spread, base / spread.median))
    gil_check = getattr(sys, "_is_gil_enabled", None)
    free = bool(sysconfig.get_config_var("Py_GIL_DISABLED")) and not (gil_check and gil_check())
    return GilScaling(tuple(rows), len(usable_cpus()), os.cpu_count() or 1, free)
