"""Serving runs that must end, and end clearly, whatever the input: each case runs in a child
process with a memory limit and a time limit, so that a run that would abort the process,
exhaust memory or never end fails its case instead of the suite. (Bad arguments of the serving
API are in test_bad_inputs.py's table.)"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from interrupts import assert_stops

SETUP = """
import resource
resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
import osbench as ob
from osbench.errors import ArgumentError
STEP = ob.serve.StepTime.linear(1e-3, 0.0, 0.0, 0.0)
TIED = dict(num_blocks=4, block_size=2, max_num_batched_tokens=16, max_num_seqs=4, max_model_len=32,
            long_prefill_token_threshold=1, enable_prefix_caching=False, policy="priority",
            scheduler_reserve_full_isl=False)
"""

# id -> (statements, the error class the run must end with, or None for a clean result)
RUNS: dict[str, tuple[str, str | None]] = {
    "livelock": (
        "ob.serve.simulate(ob.serve.Requests([0, 0], [3, 3], [3, 3]), step_time=STEP, **TIED)",
        "ArgumentError",
    ),
    "livelock-one-arrival-to-come": (
        "ob.serve.simulate(ob.serve.Requests([0, 0, 1e5], [3, 3, 3], [3, 3, 3]), step_time=STEP, **TIED)",
        "ArgumentError",
    ),
    "livelock-tiny-steps": (
        "ob.serve.simulate(ob.serve.Requests([0, 0, 1e5], [3, 3, 3], [3, 3, 3]),"
        " step_time=ob.serve.StepTime.linear(1e-12, 0, 0, 0), **TIED)",
        "ArgumentError",
    ),
    "prompt-of-2**31-1": (
        "ob.serve.simulate(ob.serve.Requests([0.0], [2**31 - 1], [1]), step_time=STEP, num_blocks=2**40,"
        " max_model_len=2**32, max_num_batched_tokens=2**32, enable_prefix_caching=False)",
        "MemoryError",
    ),
    "output-of-2**31-1": (
        "ob.serve.simulate(ob.serve.Requests([0.0], [1], [2**31 - 1]), step_time=STEP, num_blocks=2**40,"
        " max_model_len=2**32, record=True)",
        "MemoryError",
    ),
    "reference-with-10**8-blocks": (
        "ob.serve.simulate(ob.serve.Requests([0.0], [10], [3]), engine='reference', step_time=STEP, num_blocks=10**8)",
        None,
    ),
    "arrivals-far-from-zero": (
        "ob.serve.simulate(ob.serve.Requests([1e17], [100], [10]), step_time=STEP, num_blocks=64)",
        "ArgumentError",
    ),
}

TIME_LIMIT = 5.0
"""Seconds a case may take (each ends in well under one once fixed)."""


@pytest.mark.parametrize("id", sorted(RUNS))
def test_a_serving_run_ends_clearly_in_bounded_memory_and_time(id: str) -> None:
    body, error = RUNS[id]
    script = SETUP + "try:\n" + textwrap.indent(body, "    ") + "\nexcept Exception as exc:\n"
    script += "    print('raised', type(exc).__name__, str(exc)[:200])\nelse:\n    print('ended')\n"
    try:
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=TIME_LIMIT)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"{id}: still running after {TIME_LIMIT:.0f} s") from None
    assert done.returncode == 0, f"{id}: the process died ({done.returncode}): {done.stderr[-500:]}"
    want = "ended" if error is None else f"raised {error}"
    assert done.stdout.startswith(want), f"{id}: {done.stdout.strip()}, expected {want}"


def test_ctrl_c_stops_a_long_serving_run() -> None:
    # Three million requests: about half a minute of engine steps here.
    assert_stops(
        SETUP
        + """
import numpy as np
n = 3_000_000
reqs = ob.serve.Requests(np.linspace(0.0, 3000.0, n), np.full(n, 64), np.full(n, 64))
ob.serve.simulate(reqs, step_time=ob.serve.StepTime.linear(1e-3, 1e-6, 1e-6, 0), num_blocks=10_000, max_num_seqs=256)
""",
        settle=2.0,
    )
