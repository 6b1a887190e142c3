"""Long native loops release the GIL and stop on Ctrl-C."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Optional

import numpy as np
import pytest
from interrupts import assert_stops

import osbench as ob
from osbench import _native
from osbench.errors import ArgumentTypeError


def test_ctrl_c_stops_a_long_native_run() -> None:
    assert_stops(
        """
        t = ob.traces.Trace(np.arange(3_000_000, dtype=np.int64) % 1_000_003)
        t.dense()
        for _ in range(1000):  # minutes of work if nothing stops it
            ob.cache.curve(t, "arc", [10, 100, 1000, 10000])
        """,
        setup="import numpy as np, osbench as ob",
        settle=0.5,
    )


def test_native_runs_release_the_gil() -> None:
    t = ob.traces.zipf(100_000, 1.0, 2_000_000, seed=1)
    t.dense()
    ticks = 0
    done = threading.Event()

    def count() -> None:
        nonlocal ticks
        while not done.is_set():
            ticks += 1
            time.sleep(0)

    worker = threading.Thread(target=count)
    worker.start()
    try:
        before = ticks
        ob.cache.curve(t, "lfu", [10, 100, 1000, 10_000])  # long enough for the counter to run
        during = ticks - before
    finally:
        done.set()
        worker.join()
    # Holding the GIL through the call would let the counter advance only at its edges.
    assert during > 10


def test_ctrl_c_stops_a_small_input_that_runs_long() -> None:
    # One job, about 2e15 turns: a small input is no short call.
    assert_stops(
        """
        import osbench as ob
        ob.sched.simulate(ob.sched.Workload.batch([1.0]), "rr", quantum=5e-16)
        """,
        settle=0.5,
    )


def test_ctrl_c_stops_adaptsize_inside_its_reconfiguration() -> None:
    # Each replay reconfigures AdaptSize twice over a million objects, seconds of work apiece
    # in one access; Ctrl-C lands in one (cargo test shows the replay stopping inside it).
    assert_stops(
        """
        import numpy as np, osbench as ob
        n = 1_000_000
        keys = np.concatenate([np.arange(n), np.arange(n)])
        t, sizes = ob.traces.Trace(keys), (1 + (keys * 7919) % 3000).astype(np.uint64)
        for _ in range(1000):
            ob.cache.replay(t, "lru", 10_000_000, sizes=sizes, admission="adaptsize",
                            admission_params={"reconf_interval": n})
        """,
        settle=1.5,
    )


def test_ctrl_c_stops_interning_many_keys() -> None:
    # 30M distinct keys: the key map grows to a 1 GiB table, filled and rehashed in pieces.
    assert_stops(
        """
        import numpy as np, osbench as ob
        keys = np.arange(30_000_000, dtype=np.int64)
        for _ in range(1000):
            ob.traces.Trace(keys).dense()
        """,
        settle=1.5,
    )


def test_the_progress_hook_sees_each_native_call_and_its_total() -> None:
    t = ob.traces.Trace(np.arange(4_000_000, dtype=np.int64) % 1_000_003)
    seen: list[tuple[str, int, Optional[int]]] = []
    with ob.progress.reporting(lambda *report: seen.append(report), every=0.0):  # at every poll
        t.dense()  # on the calling thread
        ob.cache.curve(t, "arc", [10, 1000], threads=2)  # on a worker thread
    for task, total in (("cache.dense_ids", len(t)), ("cache.curve", 2 * len(t))):
        reports = [(done, tot) for name, done, tot in seen if name == task]
        assert reports, (task, seen)
        assert all(tot in (None, total) for _, tot in reports), reports  # None: not planned yet
        assert [done for done, _ in reports] == sorted(done for done, _ in reports)
        assert reports[-1] == (total, total), "the last report is the end"
    assert _native.progress_hook(None) is None, "the block put back the hook before it (none)"


def test_an_exception_of_the_progress_hook_stops_the_call() -> None:
    class Stop(Exception):
        pass

    def hook(task: str, done: int, total: Optional[int]) -> None:
        assert (task, done, total) == ("sched.simulate", 0, 1)
        raise Stop

    with ob.progress.reporting(hook), pytest.raises(Stop):
        ob.sched.simulate(ob.sched.Workload.batch([1.0]), "rr", quantum=5e-16)  # hours if not stopped


def test_a_progress_hook_must_be_callable() -> None:
    with pytest.raises(ArgumentTypeError, match="hook=5 is not accepted"):
        _native.progress_hook(5)  # type: ignore[arg-type]


def test_ctrl_c_of_a_sweep_alone_does_not_wait_for_its_cells_in_flight(tmp_path: Path) -> None:
    # SIGINT reaches the sweep's process only (a terminal would signal its workers too): the
    # workers, each in the middle of a minute-long cell, are ended, not waited for.
    started = time.perf_counter()
    assert_stops(
        f"""
        import multiprocessing, time
        from osbench import _sweep
        multiprocessing.set_start_method("fork")
        def slow(cell):
            time.sleep(60)
            return cell
        _sweep.run([{{"key": "a"}}, {{"key": "b"}}], slow, {str(tmp_path / "r.jsonl")!r}, "process", workers=2)
        """,
        settle=1.0,
    )
    assert time.perf_counter() - started < 30


def test_work_set_aside_returns_its_result_and_raises_its_error() -> None:
    from osbench import _steps

    where: list[str] = []

    def work() -> int:
        where.append(threading.current_thread().name)
        return 7

    assert _steps.aside(_steps.CHUNK, work) == 7 and _steps.aside(_steps.CHUNK + 1, work) == 7
    assert where == [threading.current_thread().name, "osbench-aside"], "inline up to CHUNK elements"
    with pytest.raises(ArgumentTypeError, match="raised aside"):
        _steps.aside(_steps.CHUNK + 1, lambda: (_ for _ in ()).throw(ArgumentTypeError("raised aside")))


def test_ctrl_c_stops_work_set_aside_while_it_runs() -> None:
    # A whole-array numpy call (here: a minute of one call releasing the GIL) on the worker.
    assert_stops(
        """
        import time
        from osbench import _steps
        _steps.aside(_steps.CHUNK + 1, lambda: time.sleep(60))
        """,
        settle=0.5,
    )
