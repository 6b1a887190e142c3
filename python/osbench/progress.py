"""Progress of long native calls, for progress bars.

Every native loop reports the units of work it has done (accesses replayed, keys interned, jobs
finished, requests served...) and, where it knows it, how many it has to do. Within
``with osbench.progress.reporting(hook):`` every native call made by this thread calls
``hook(task, done, total)`` at most every ``every`` seconds (default ``EVERY``) while it runs: ``task`` names the
native work (``"cache.dense_ids"``, ``"cache.curve"``, ``"sched.simulate"``...), ``done`` and
``total`` count its units (``total`` is None when the work cannot tell ahead). A call shorter
than ``every`` reports nothing; one that reported is reported once more when it ends (with
``every=0``: at every poll, and at the end of every call, however short). The hook
runs on the calling thread, between two pieces of the work, as a signal handler would; an
exception it raises stops the work and is raised by the call (KeyboardInterrupt included).

One public call may make several native calls, each with its own task and count (a first replay
of a trace interns its keys, then replays them)::

    from tqdm import tqdm
    import osbench as ob

    bars = {}
    def hook(task, done, total):
        bar = bars.setdefault(task, tqdm(total=total, desc=task))
        bar.update(done - bar.n)

    with ob.progress.reporting(hook):
        ob.cache.curve(trace, "arc", capacities)
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Callable, Optional

from osbench import _native

Hook = Callable[[str, int, Optional[int]], object]
"""``hook(task, done, total)``; its return value is ignored."""

EVERY: float = _native.PROGRESS_EVERY
"""Seconds between two calls of the hook during one native call, at least, by default."""


@contextmanager
def reporting(hook: Hook, every: float = EVERY) -> Iterator[None]:
    """Call ``hook(task, done, total)`` from every native call this thread makes inside the
    block, at most every ``every`` seconds (see the module's docs); the hook set before comes
    back after it."""
    previous = _native.progress_hook(hook, every)
    try:
        yield
    finally:
        if previous is None:
            _native.progress_hook(None)
        else:
            _native.progress_hook(*previous)


__all__ = ["EVERY", "Hook", "reporting"]
