"""Round trips: a message goes to the other side and comes back (lecture section 1.2, demo 3).

One registry, :data:`MECHANISMS`, names every way to make a round trip:

- ``call``: a plain Python function call (the yardstick every other figure is divided by);
- between two threads of this process: ``thread-queue`` (a pair of :class:`queue.Queue`),
  ``thread-event`` (a pair of :class:`threading.Event`), ``thread-pipe`` (two :func:`os.pipe`);
- between this process and a forked child: ``process-mp-pipe`` (:func:`multiprocessing.Pipe`),
  ``process-pipe`` (two :func:`os.pipe` and :func:`os.fork`), ``process-socketpair``
  (:func:`socket.socketpair`), ``process-mp-queue`` (a pair of :class:`multiprocessing.Queue`);
- the same hops from Rust with no Python in the loop: ``native-thread-pipe``,
  ``native-thread-eventfd``, ``native-thread-futex``, ``native-process-pipe``,
  ``native-process-eventfd``, ``native-process-futex``;
- ``perf-sched-pipe`` and ``perf-sched-pipe-threads``: ``perf bench sched pipe`` where installed,
  as a cross-check of the native pipe figure.

Placement (:data:`PLACEMENTS`): ``same`` pins both ends to one CPU (each wake-up is a context
switch on that CPU), ``cross`` pins them to two different CPUs (each wake-up crosses CPUs),
``unpinned`` leaves them to the scheduler: such runs are bimodal, and the result keeps the two
modes apart instead of averaging them.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import queue
import re
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import numpy as np

from osbench import _checks, _native
from osbench._record import Record
from osbench.host.info import usable_cpus
from osbench.host.stats import Mode, Spread, modes, split_by_placement

PLACEMENTS: tuple[str, ...] = ("same", "cross", "unpinned")
PLACEMENT_LABELS = {"same": "same CPU", "cross": "different CPUs", "unpinned": "as scheduled"}


class Unavailable(Exception):
    """A probe that cannot run on this host; the message says why."""


@dataclass(frozen=True)
class RoundTrip(Record):
    """One round-trip figure: nanoseconds per round trip and where its two ends ran.

    ``spread`` is None when the probe is not available here (``reason`` says why). ``modes``
    splits an unpinned run: by the CPUs the two ends reported (native probes) or into a fast and
    a slow cluster (Python probes); a single mode ``all`` means the run was not bimodal.
    ``checks`` holds the native probes' message counts (both sides count what they received).
    """

    mechanism: str
    label: str
    between: str  # "call", "threads", "processes"
    engine: str  # "python", "native", "perf"
    placement: str  # "same CPU", "different CPUs", "as scheduled"
    cpus: str  # "0 & 0", "0 & 1", "any"
    spread: Optional[Spread]
    modes: tuple[Mode, ...] = ()
    reason: str = ""
    checks: dict[str, int] = field(default_factory=dict)

    @property
    def available(self) -> bool:
        return self.spread is not None

    def to_dict(self) -> dict[str, Any]:
        d = super().to_dict()
        d["spread"] = None if self.spread is None else self.spread.to_dict()
        d["modes"] = [m.to_dict() for m in self.modes]
        d["available"] = self.available
        return d


# --- placement -------------------------------------------------------------------------------


def _pin_self(cpu: Optional[int]) -> None:
    """Pin the calling thread (pid 0 is the calling thread for sched_setaffinity)."""
    if cpu is not None:
        os.sched_setaffinity(0, {cpu})


@contextmanager
def pinned(cpu: Optional[int]) -> Iterator[None]:
    """Pin the calling thread to ``cpu`` for the block, then give it back its CPU set."""
    if cpu is None:
        yield
        return
    saved = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {cpu})
    try:
        yield
    finally:
        os.sched_setaffinity(0, saved)


def placement_cpus(placement: str) -> tuple[Optional[int], Optional[int]]:
    """The CPUs of side A and side B for a placement; raises :class:`Unavailable`."""
    _checks.choice("placement", placement, PLACEMENTS)
    if placement == "unpinned":
        return None, None
    if not hasattr(os, "sched_setaffinity"):
        raise Unavailable("this platform cannot pin threads to CPUs")
    cpus = usable_cpus()
    try:
        os.sched_setaffinity(0, os.sched_getaffinity(0))
    except OSError as exc:
        raise Unavailable(f"CPU affinity cannot be set here ({exc.strerror})") from None
    if placement == "same":
        return cpus[0], cpus[0]
    if len(cpus) < 2:
        raise Unavailable(f"only one usable CPU ({cpus[0]}): no cross-CPU placement")
    return cpus[0], cpus[1]


# --- Python probes ---------------------------------------------------------------------------
# Each starter launches side B (a thread or a child) that echoes `total` messages, and returns
# (ping, finish): ping() makes one round trip from side A; finish() joins and cleans up.

Starter = Callable[[int, Optional[int]], tuple[Callable[[], Any], Callable[[], None]]]


def _thread_queue(total: int, cpu_b: Optional[int]) -> tuple[Callable[[], Any], Callable[[], None]]:
    to_b: queue.Queue[int] = queue.Queue()
    to_a: queue.Queue[int] = queue.Queue()

    def echo() -> None:
        _pin_self(cpu_b)
        for _ in range(total):
            to_a.put(to_b.get())

    t = threading.Thread(target=echo, daemon=True)
    t.start()

    def ping() -> Any:
        to_b.put(1)
        return to_a.get()

    return ping, lambda: t.join(10)


def _thread_event(total: int, cpu_b: Optional[int]) -> tuple[Callable[[], Any], Callable[[], None]]:
    to_b, to_a = threading.Event(), threading.Event()

    def echo() -> None:
        _pin_self(cpu_b)
        for _ in range(total):
            to_b.wait()
            to_b.clear()  # clear before answering, so the next ping cannot be lost
            to_a.set()

    t = threading.Thread(target=echo, daemon=True)
    t.start()

    def ping() -> Any:
        to_b.set()
        to_a.wait()
        to_a.clear()

    return ping, lambda: t.join(10)


def _thread_pipe(total: int, cpu_b: Optional[int]) -> tuple[Callable[[], Any], Callable[[], None]]:
    b_read, a_write = os.pipe()
    a_read, b_write = os.pipe()

    def echo() -> None:
        _pin_self(cpu_b)
        for _ in range(total):
            os.write(b_write, os.read(b_read, 1))

    t = threading.Thread(target=echo, daemon=True)
    t.start()

    def ping() -> Any:
        os.write(a_write, b"x")
        return os.read(a_read, 1)

    def finish() -> None:
        t.join(10)
        for fd in (b_read, a_write, a_read, b_write):
            os.close(fd)

    return ping, finish


def _mp_pipe_echo(conn: Any, total: int, cpu_b: Optional[int]) -> None:
    _pin_self(cpu_b)
    for _ in range(total):
        conn.send(conn.recv())


def _mp_queue_echo(to_b: Any, to_a: Any, total: int, cpu_b: Optional[int]) -> None:
    _pin_self(cpu_b)
    for _ in range(total):
        to_a.put(to_b.get())


def _answer(data: bytes) -> bytes:
    if not data:
        raise RuntimeError("the echo child ended before the round trips did")
    return data


def _fork_echo(total: int, cpu_b: Optional[int], echo_once: Callable[[], object]) -> int:
    """Fork a child that echoes `total` messages and leaves with os._exit (never returns)."""
    pid = os.fork()
    if pid == 0:  # the child
        code = 1
        try:
            _pin_self(cpu_b)
            for _ in range(total):
                echo_once()
            code = 0
        finally:
            os._exit(code)
    return pid


def _process_mp_pipe(total: int, cpu_b: Optional[int]) -> tuple[Callable[[], Any], Callable[[], None]]:
    ctx = mp.get_context("fork")
    mine, theirs = ctx.Pipe()
    p = ctx.Process(target=_mp_pipe_echo, args=(theirs, total, cpu_b), daemon=True)
    p.start()
    theirs.close()  # the child's end: its death then raises EOFError here instead of hanging

    def ping() -> Any:
        mine.send(1)
        return mine.recv()

    def finish() -> None:
        p.join(10)
        mine.close()

    return ping, finish


def _process_mp_queue(total: int, cpu_b: Optional[int]) -> tuple[Callable[[], Any], Callable[[], None]]:
    ctx = mp.get_context("fork")
    to_b, to_a = ctx.Queue(), ctx.Queue()
    p = ctx.Process(target=_mp_queue_echo, args=(to_b, to_a, total, cpu_b), daemon=True)
    p.start()

    def ping() -> Any:
        to_b.put(1)
        return to_a.get()

    def finish() -> None:
        p.join(10)
        for q in (to_b, to_a):
            q.close()
            q.join_thread()

    return ping, finish


def _process_pipe(total: int, cpu_b: Optional[int]) -> tuple[Callable[[], Any], Callable[[], None]]:
    b_read, a_write = os.pipe()
    a_read, b_write = os.pipe()
    pid = _fork_echo(total, cpu_b, lambda: os.write(b_write, os.read(b_read, 1)))
    os.close(b_read)  # the child's ends: closed here, so the child's death reads as end of file
    os.close(b_write)

    def ping() -> Any:
        os.write(a_write, b"x")
        return _answer(os.read(a_read, 1))

    def finish() -> None:
        os.waitpid(pid, 0)
        os.close(a_write)
        os.close(a_read)

    return ping, finish


def _process_socketpair(total: int, cpu_b: Optional[int]) -> tuple[Callable[[], Any], Callable[[], None]]:
    mine, theirs = socket.socketpair()
    pid = _fork_echo(total, cpu_b, lambda: theirs.sendall(theirs.recv(1)))
    theirs.close()  # the child's end: closed here, so the child's death reads as end of file

    def ping() -> Any:
        mine.sendall(b"x")
        return _answer(mine.recv(1))

    def finish() -> None:
        os.waitpid(pid, 0)
        mine.close()

    return ping, finish


def _python_round_trips(
    start: Starter, rounds: int, warmup: int, cpu_a: Optional[int], cpu_b: Optional[int]
) -> np.ndarray:
    """Start side B, then (pinned) time each of `rounds` round trips after `warmup` untimed ones.

    Side B is started before side A is pinned, so an unpinned B keeps the process's CPU set."""
    ping, finish = start(warmup + rounds, cpu_b)
    out = np.empty(rounds)
    clock = time.perf_counter_ns
    try:
        with pinned(cpu_a):
            for _ in range(warmup):
                ping()
            for i in range(rounds):
                t0 = clock()
                ping()
                out[i] = clock() - t0
    finally:
        finish()
    return out


def _identity(x: int) -> int:
    return x


CALL_BATCH = 1000


def _calls(rounds: int, warmup: int, cpu: Optional[int]) -> np.ndarray:
    """Nanoseconds per call of a one-line function, timed in batches of CALL_BATCH (loop included)."""
    f = _identity
    clock = time.perf_counter_ns
    out = np.empty(rounds)
    batch = range(CALL_BATCH)
    with pinned(cpu):
        for _ in range(warmup):
            f(0)
        for i in range(rounds):
            t0 = clock()
            for _ in batch:
                f(i)
            out[i] = (clock() - t0) / CALL_BATCH
    return out


# --- perf bench sched pipe -------------------------------------------------------------------

PERF_RUNS = 3


def perf_available() -> Optional[str]:
    """The path of ``perf`` if ``perf bench sched pipe`` runs here, else None."""
    path = shutil.which("perf")
    if path is None:
        return None
    try:
        r = subprocess.run([path, "bench", "sched", "pipe", "-l", "10"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return None
    return path if r.returncode == 0 and "usecs/op" in r.stdout else None


def _perf(threads: bool, loops: int, cpu: Optional[int]) -> np.ndarray:
    path = perf_available()
    if path is None:
        raise Unavailable("perf is not installed here (or perf bench is not allowed)")
    args = [path, "bench", "sched", "pipe", "-l", str(loops)] + (["-T"] if threads else [])
    out = []
    for _ in range(PERF_RUNS):
        pin = (lambda: os.sched_setaffinity(0, {cpu})) if cpu is not None else None
        r = subprocess.run(args, capture_output=True, text=True, timeout=300, preexec_fn=pin)
        m = re.search(r"([0-9.]+)\s+usecs/op", r.stdout)
        if r.returncode != 0 or m is None:
            raise Unavailable(f"perf bench sched pipe failed: {r.stderr.strip()[:200]}")
        out.append(float(m.group(1)) * 1e3)
    return np.asarray(out)


# --- the registry ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Mechanism:
    """A way to make a round trip: its label, what its two ends are, and which engine runs it."""

    name: str
    label: str
    between: str
    engine: str


MECHANISMS: dict[str, Mechanism] = {
    m.name: m
    for m in [
        Mechanism("call", "function call", "call", "python"),
        Mechanism("thread-queue", "queue.Queue pair", "threads", "python"),
        Mechanism("thread-event", "threading.Event pair", "threads", "python"),
        Mechanism("thread-pipe", "os.pipe pair", "threads", "python"),
        Mechanism("process-mp-pipe", "multiprocessing.Pipe", "processes", "python"),
        Mechanism("process-pipe", "os.pipe pair + fork", "processes", "python"),
        Mechanism("process-socketpair", "socket.socketpair + fork", "processes", "python"),
        Mechanism("process-mp-queue", "multiprocessing.Queue pair", "processes", "python"),
        Mechanism("native-thread-pipe", "pipe (Rust)", "threads", "native"),
        Mechanism("native-thread-eventfd", "eventfd (Rust)", "threads", "native"),
        Mechanism("native-thread-futex", "futex (Rust)", "threads", "native"),
        Mechanism("native-process-pipe", "pipe + fork (Rust)", "processes", "native"),
        Mechanism("native-process-eventfd", "eventfd + fork (Rust)", "processes", "native"),
        Mechanism("native-process-futex", "futex in shared memory + fork (Rust)", "processes", "native"),
        Mechanism("perf-sched-pipe", "perf bench sched pipe", "processes", "perf"),
        Mechanism("perf-sched-pipe-threads", "perf bench sched pipe -T", "threads", "perf"),
    ]
}
"""Every round-trip mechanism by name (see the module docstring)."""

_STARTERS: dict[str, Starter] = {
    "thread-queue": _thread_queue,
    "thread-event": _thread_event,
    "thread-pipe": _thread_pipe,
    "process-mp-pipe": _process_mp_pipe,
    "process-pipe": _process_pipe,
    "process-socketpair": _process_socketpair,
    "process-mp-queue": _process_mp_queue,
}


def _cpus_text(cpu_a: Optional[int], cpu_b: Optional[int]) -> str:
    return "any" if cpu_a is None else f"{cpu_a} & {cpu_b}"


def round_trip(mechanism: str, placement: str = "same", rounds: int = 2000, warmup: int = 200) -> RoundTrip:
    """Measure one mechanism at one placement: ``rounds`` timed round trips after ``warmup``.

    A probe that cannot run here (no CPU affinity, one CPU, no perf, a refused system call) is
    returned with ``spread=None`` and the reason, rather than raising. For ``call`` each sample
    is the mean of 1,000 calls; for ``perf-*`` the figure is ``usecs/op`` of 3 runs of
    ``max(1000, rounds * 5)`` loops (perf pins both ends together or neither: no ``cross``).
    """
    m = MECHANISMS[_checks.choice("mechanism", mechanism, MECHANISMS)]
    _checks.choice("placement", placement, PLACEMENTS)
    rounds = _checks.positive_int("rounds", rounds, 10_000_000)
    warmup = _checks.non_negative_int("warmup", warmup)
    where = PLACEMENT_LABELS[placement]

    def result(
        cpus: str,
        spread: Optional[Spread],
        found: tuple[Mode, ...] = (),
        reason: str = "",
        checks: Optional[dict[str, int]] = None,
    ) -> RoundTrip:
        return RoundTrip(m.name, m.label, m.between, m.engine, where, cpus, spread, found, reason, checks or {})

    try:
        cpu_a, cpu_b = placement_cpus(placement)
        if m.between == "call" and placement == "cross":
            raise Unavailable("a function call has one end")
        if m.engine == "perf" and placement == "cross":
            raise Unavailable("perf bench pins both ends together or not at all")
        cpus = "same thread" if m.between == "call" else _cpus_text(cpu_a, cpu_b)
        checks: dict[str, int] = {}
        found: list[Mode] = []
        if m.name == "call":
            samples = _calls(rounds, warmup, cpu_a)
            found = modes(samples) if placement == "unpinned" else []
        elif m.engine == "perf":
            samples = _perf(m.name.endswith("threads"), max(1000, rounds * 5), cpu_a)
        elif m.engine == "native":
            _, mode, mech = m.name.split("-")
            r = _native.host_pingpong(
                mech, "threads" if mode == "thread" else "processes", rounds, warmup, 1, cpu_a, cpu_b
            )
            samples = r["samples_ns"]
            checks = {k: int(r[k]) for k in ("round_trips", "received_a", "received_b", "mismatched")}
            found = split_by_placement(samples, r["cpu_a"], r["cpu_b"]) if placement == "unpinned" else []
        else:
            samples = _python_round_trips(_STARTERS[m.name], rounds, warmup, cpu_a, cpu_b)
            found = modes(samples) if placement == "unpinned" else []
        return result(cpus, Spread.of(samples), tuple(found), checks=checks)
    except Unavailable as exc:
        return result("-", None, reason=str(exc))
    except OSError as exc:  # the OS refused a probe (affinity, fork, a mapping...)
        return result("-", None, reason=f"not available: {exc}")
