"""Long native loops release the GIL and stop on Ctrl-C."""

from __future__ import annotations

import threading
import time

from interrupts import assert_stops

import osbench as ob


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
