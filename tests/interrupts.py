"""Ctrl-C in a child process: the one harness the interrupt tests share."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time

SETUP = "import osbench, osbench.cli"
"""What a child imports before it says it is ready, unless told otherwise: settle counts from
the start of the work, not of the imports (seconds on a loaded machine)."""


def interrupted(body: str, *, setup: str = SETUP, settle: float = 1.0) -> subprocess.CompletedProcess[str]:
    """Run ``setup`` then ``body`` (Python statements, indented or not) in a child process, send
    it SIGINT ``settle`` seconds after it says it is ready (after ``setup``: the imports, however
    long a busy machine takes over them), and return how it ended. The child prints
    ``interrupted`` and exits 0 when a KeyboardInterrupt reaches it; exit 3 means the work ended
    without one."""
    script = (
        "import sys\n"
        + textwrap.dedent(setup).strip()
        + "\nprint('ready', flush=True)\ntry:\n"
        + textwrap.indent(textwrap.dedent(body).strip(), "    ")
        + "\nexcept KeyboardInterrupt:\n    print('interrupted', flush=True)\n    sys.exit(0)\nsys.exit(3)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "ready"
    time.sleep(settle)  # into the native loop
    proc.send_signal(signal.SIGINT)
    try:
        out, err = proc.communicate(timeout=60)  # the work would take many minutes if nothing stopped it
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise AssertionError("Ctrl-C did not stop the child within 60 s") from None
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def assert_stops(body: str, *, setup: str = SETUP, settle: float = 1.0) -> None:
    """``body`` stops on Ctrl-C with a KeyboardInterrupt, not a crash and not after the work."""
    done = interrupted(body, setup=setup, settle=settle)
    assert done.returncode == 0 and "interrupted" in done.stdout, done.stderr
