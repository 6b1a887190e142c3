"""The readable scheduling engine: one server, jobs arriving over time (lecture section 2).

This is the teaching code. The native engine (``rust/osbench-core/src/sched/``) runs the same
event loop with the same floating-point operations in the same order, so both engines give
bit-equal completion times.

Time and work are in the same unit (the server does one unit of work per unit of time).

The event loop (every policy but ``ps``)
----------------------------------------
Jobs are taken in *arrival order*: sorted by arrival time, ties by job id. A job's position in
that order is its ``rank``; every tie-break below ("arrival order, then job id") compares ranks.

At each decision point the policy picks a job and, optionally, a ``limit`` on how long it may
run before the policy wants to decide again (a quantum). The job then runs for::

    run = min(remaining, limit, next_arrival - t)     # the last term only for preemptive policies

ties going to the earlier term (a job that finishes exactly at a quantum's end finishes).
If the next arrival bounds the run, time jumps to that arrival exactly. Afterwards every job
that has arrived by the new time joins the policy (in arrival order), and only then is the
interrupted job handed back to the policy (so in RR a job arriving at the very instant a
quantum ends queues ahead of the preempted job).

Switches: whenever the server starts running a job other than the last job it ran (the very
first job excepted), it first spends ``switch_cost`` switching. A switch is atomic: jobs that
arrive during it join the queues and are considered at the next decision point.

``ps`` has its own loop, by virtual time (see :func:`simulate_ps`).
"""

from __future__ import annotations

import heapq
import math
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Optional

from osbench.errors import ArgumentError

INF = math.inf


@dataclass
class Jobs:
    """The jobs, shared by the loop and the policy: inputs and the state that changes."""

    arrival: list[float]
    size: list[float]
    predicted: list[float]
    key: list[float]  # priority: class + aging * arrival (smaller runs first)
    rank: list[int]
    remaining: list[float]
    attained: list[float]


class Policy(ABC):
    """What the event loop asks of a policy."""

    #: True when an arrival is a decision point (the running job may be preempted).
    preemptive = False

    @abstractmethod
    def arrive(self, j: int, t: float) -> None: ...

    @abstractmethod
    def empty(self) -> bool: ...

    @abstractmethod
    def pick(self, t: float) -> tuple[int, float]:
        """Remove and return the job to run now, and how long it may run at most."""

    @abstractmethod
    def put_back(self, j: int, ran: float, t: float) -> None:
        """Job ``j`` ran ``ran`` and was interrupted (not finished) at time ``t``."""


class _Heap(Policy):
    """A min-heap on (key, rank): smallest key first, ties by arrival order then job id."""

    def __init__(self, jobs: Jobs) -> None:
        self.jobs = jobs
        self.heap: list[tuple[float, int, int]] = []

    @abstractmethod
    def key(self, j: int) -> float:
        """The heap key of job ``j`` (its size, remaining time, ...)."""

    def arrive(self, j: int, t: float) -> None:
        heapq.heappush(self.heap, (self.key(j), self.jobs.rank[j], j))

    def empty(self) -> bool:
        return not self.heap

    def pick(self, t: float) -> tuple[int, float]:
        return heapq.heappop(self.heap)[2], INF

    def put_back(self, j: int, ran: float, t: float) -> None:
        self.arrive(j, t)


class Sjf(_Heap):
    """Shortest job first, non-preemptive: the smallest size (or predicted size) runs to
    completion. Ties: arrival order, then job id."""

    def __init__(self, jobs: Jobs, use_predictions: bool) -> None:
        super().__init__(jobs)
        self.by = jobs.predicted if use_predictions else jobs.size

    def key(self, j: int) -> float:
        return self.by[j]


class Srpt(_Heap):
    """Shortest remaining processing time, preemptive at every arrival. With predictions the
    rank is predicted - attained (which may go negative). Ties: arrival order, then job id
    (so an arrival with the same remaining time as the running job does not preempt it)."""

    preemptive = True

    def __init__(self, jobs: Jobs, use_predictions: bool) -> None:
        super().__init__(jobs)
        self.use_predictions = use_predictions

    def key(self, j: int) -> float:
        if self.use_predictions:
            return self.jobs.predicted[j] - self.jobs.attained[j]
        return self.jobs.remaining[j]


class Priority(_Heap):
    """Strict preemptive priority. A job's class is an integer, smaller = more important.
    Aging: a waiting job's priority improves at ``aging`` classes per unit of time since its
    arrival, so its effective class at time t is ``class - aging * (t - arrival)``. The order
    between two jobs never changes over time, so the heap key is ``class + aging * arrival``.
    Ties: arrival order, then job id. With aging > 0 a low class waits at most
    (class gap) / aging behind later high-class arrivals; as aging grows the policy tends to FCFS."""

    preemptive = True

    def key(self, j: int) -> float:
        return self.jobs.key[j]


class Rr(Policy):
    """Round robin: FIFO queue, each turn runs at most ``quantum``; an unfinished job goes to
    the tail, behind every job that arrived up to and including that instant."""

    def __init__(self, jobs: Jobs, quantum: float) -> None:
        self.quantum = quantum
        self.queue: deque[int] = deque()

    def arrive(self, j: int, t: float) -> None:
        self.queue.append(j)

    def empty(self) -> bool:
        return not self.queue

    def pick(self, t: float) -> tuple[int, float]:
        return self.queue.popleft(), self.quantum

    def put_back(self, j: int, ran: float, t: float) -> None:
        self.queue.append(j)


class Fcfs(Rr):
    """First come, first served: arrival order, never preempted. Round robin with an infinite
    quantum: every turn runs to completion, so no job ever goes back to the queue."""

    def __init__(self, jobs: Jobs) -> None:
        super().__init__(jobs, INF)


class Mlfq(Policy):
    """Multi-level feedback queue (lecture 2.5, OSTEP chapter 8).

    - Level 0 is the highest; the server runs the head of the highest non-empty level.
    - New jobs enter the tail of level 0; an arrival preempts a job running at a lower level.
    - At level i a job may attain ``quantum * 2**i`` of service; then it moves to the tail of
      level i + 1 with a fresh allotment. With ``levels`` set, a job that uses up the last
      level's allotment goes to the tail of that level with a fresh one. ``levels=None``:
      unbounded.
    - FCFS within a level: a job preempted by a higher level keeps its place (head of its
      level) and the rest of its allotment.
    - ``boost``: at every multiple of ``boost`` all jobs move to level 0 (levels concatenated
      from highest to lowest, order kept) with fresh allotments. Boosts stop if the period
      falls below the floating-point resolution of the clock.
    """

    preemptive = True

    def __init__(self, jobs: Jobs, quantum: float, levels: Optional[int], boost: Optional[float]) -> None:
        n = len(jobs.size)
        self.quantum = quantum
        self.max_levels = levels
        self.boost = boost
        self.queues: list[deque[int]] = [deque()]
        self.level = [0] * n
        self.left = [0.0] * n  # service the job may still attain at its level
        self.count = 0
        self.boosts = 1.0  # the next boost happens at boosts * boost
        self.next_boost = boost if boost is not None else INF

    def allotment(self, level: int) -> float:
        return self.quantum * 2.0**level

    def arrive(self, j: int, t: float) -> None:
        self.level[j] = 0
        self.left[j] = self.quantum
        self.queues[0].append(j)
        self.count += 1

    def empty(self) -> bool:
        return self.count == 0

    def _boost(self, t: float) -> None:
        assert self.boost is not None
        # Catch up with every boost time passed (idle periods pass several at once).
        self.boosts = max(self.boosts + 1.0, float(math.floor(t / self.boost)) + 1.0)
        self.next_boost = self.boosts * self.boost
        if not self.next_boost > t:
            # The period is below the resolution of time at t: no further boosts.
            self.next_boost = INF
        everyone: deque[int] = deque()
        for q in self.queues:
            everyone.extend(q)
        self.queues = [everyone]
        for j in everyone:
            self.level[j] = 0
            self.left[j] = self.quantum

    def pick(self, t: float) -> tuple[int, float]:
        if t >= self.next_boost:
            self._boost(t)
        for q in self.queues:
            if q:
                j = q.popleft()
                self.count -= 1
                return j, min(self.left[j], self.next_boost - t)
        raise RuntimeError("pick() on an empty MLFQ")  # pragma: no cover

    def put_back(self, j: int, ran: float, t: float) -> None:
        self.left[j] = self.left[j] - ran
        self.count += 1
        if self.left[j] > 0.0:
            self.queues[self.level[j]].appendleft(j)  # preempted: keeps its place
            return
        level = self.level[j] + 1
        if self.max_levels is not None and level >= self.max_levels:
            level = self.max_levels - 1
        if level == len(self.queues):
            self.queues.append(deque())
        self.level[j] = level
        self.left[j] = self.allotment(level)
        self.queues[level].append(j)


@dataclass
class Outcome:
    completion: list[float]
    first_start: list[float]
    switches: int
    switch_time: float
    #: (job, start, end) of every stretch of service, in time order; -1 marks a switch.
    #: Kept only when asked for (``timeline=True``); PS has none (every job is served at once).
    timeline: Optional[list[tuple[int, float, float]]] = None


def arrival_order(arrival: Sequence[float]) -> list[int]:
    """Job ids sorted by arrival time, ties by job id."""
    return sorted(range(len(arrival)), key=lambda j: (arrival[j], j))


def make_jobs(
    arrival: Sequence[float], size: Sequence[float], predicted: Sequence[float], classes: Sequence[int], aging: float
) -> tuple[Jobs, list[int]]:
    order = arrival_order(arrival)
    rank = [0] * len(order)
    for r, j in enumerate(order):
        rank[j] = r
    key = [float(c) + aging * a for c, a in zip(classes, arrival)]
    jobs = Jobs(list(arrival), list(size), list(predicted), key, rank, list(size), [0.0] * len(size))
    return jobs, order


@dataclass(frozen=True)
class Params:
    """The parameters of a run (the public :func:`osbench.sched.simulate` documents them and
    gives their defaults); each policy reads the ones it uses."""

    quantum: float
    switch_cost: float
    levels: Optional[int]
    boost: Optional[float]
    use_predictions: bool
    aging: float


#: Every policy by name: how to make the policy object the event loop runs from the jobs and
#: the parameters, or None for ``ps``, which has a loop of its own (:func:`simulate_ps`).
POLICIES: dict[str, Optional[Callable[[Jobs, Params], Policy]]] = {
    "fcfs": lambda jobs, p: Fcfs(jobs),
    "sjf": lambda jobs, p: Sjf(jobs, p.use_predictions),
    "srpt": lambda jobs, p: Srpt(jobs, p.use_predictions),
    "rr": lambda jobs, p: Rr(jobs, p.quantum),
    "ps": None,
    "mlfq": lambda jobs, p: Mlfq(jobs, p.quantum, p.levels, p.boost),
    "priority": lambda jobs, p: Priority(jobs),
}


def simulate(
    policy: str,
    arrival: Sequence[float],
    size: Sequence[float],
    predicted: Optional[Sequence[float]],
    classes: Optional[Sequence[int]],
    params: Params,
    *,
    timeline: bool = False,
) -> Outcome:
    """Run the jobs through ``policy``. Inputs are assumed valid (the public API checks them).
    ``timeline=True`` also records every stretch of service (see :class:`Outcome`)."""
    n = len(arrival)
    predicted = list(size) if predicted is None else list(predicted)
    classes = [0] * n if classes is None else list(classes)
    jobs, order = make_jobs(arrival, size, predicted, classes, params.aging)
    if policy not in POLICIES:
        raise ArgumentError(f"policy={policy!r} is not accepted: use one of {', '.join(POLICIES)}")
    make = POLICIES[policy]
    if make is None:
        return simulate_ps(jobs, order)
    return run(make(jobs, params), jobs, order, params.switch_cost, timeline)


def run(pol: Policy, jobs: Jobs, order: list[int], switch_cost: float, timeline: bool = False) -> Outcome:
    """The event loop shared by every policy but ``ps``."""
    n = len(order)
    log: Optional[list[tuple[int, float, float]]] = [] if timeline else None
    completion = [math.nan] * n
    first_start = [math.nan] * n
    started = [False] * n
    t = 0.0
    k = 0  # next job (in arrival order) not yet handed to the policy
    last = -1  # the job the server ran last
    switches = 0
    switch_time = 0.0
    done = 0

    def admit(t: float) -> int:
        nonlocal k
        while k < n and jobs.arrival[order[k]] <= t:
            pol.arrive(order[k], t)
            k += 1
        return k

    while done < n:
        if pol.empty():
            a = jobs.arrival[order[k]]
            if a > t:
                t = a  # idle until the next arrival
            admit(t)
        j, limit = pol.pick(t)
        if last != -1 and j != last:
            if log is not None and switch_cost > 0:
                log.append((-1, t, t + switch_cost))
            t = t + switch_cost
            switches += 1
            switch_time = switch_time + switch_cost
            admit(t)
        last = j
        if not started[j]:
            started[j] = True
            first_start[j] = t
        run = jobs.remaining[j]
        cause = 0  # 0: finishes, 1: limit, 2: next arrival
        if limit < run:
            run = limit
            cause = 1
        if pol.preemptive and k < n:
            gap = jobs.arrival[order[k]] - t
            if gap < run:
                run = gap
                cause = 2
        start = t
        if cause == 2:
            t = jobs.arrival[order[k]]
        else:
            t = t + run
        if log is not None:
            if log and log[-1][0] == j and log[-1][2] == start:
                log[-1] = (j, log[-1][1], t)  # the same job ran on: one stretch
            else:
                log.append((j, start, t))
        jobs.attained[j] = jobs.attained[j] + run
        if cause == 0:
            jobs.remaining[j] = 0.0
            completion[j] = t
            done += 1
            admit(t)
        else:
            jobs.remaining[j] = jobs.remaining[j] - run
            admit(t)
            pol.put_back(j, run, t)
    return Outcome(completion, first_start, switches, switch_time, log)


def simulate_ps(jobs: Jobs, order: list[int]) -> Outcome:
    """Exact processor sharing, the quantum -> 0 limit of round robin (lecture 2.4).

    With m jobs present each is served at rate 1/m. Virtual time V advances at rate 1/m
    (it stands still while the server is idle); a job arriving at virtual time V with size s
    finishes when V reaches its tag V + s, so the job with the smallest tag (ties: arrival
    order, then job id) finishes first, at real time t + (tag - V) * m. An arrival exactly at
    a completion instant is processed after the completion. Every job starts at its arrival;
    PS has no switches.
    """
    n = len(order)
    completion = [math.nan] * n
    first_start = [math.nan] * n
    heap: list[tuple[float, int, int]] = []
    t = 0.0
    v = 0.0
    k = 0
    done = 0

    def admit(k: int, t: float, v: float) -> int:
        """Every job that has arrived by ``t`` joins, tagged ``v + size``, and starts at once;
        returns the next job (in arrival order) not yet arrived."""
        while k < n and jobs.arrival[order[k]] <= t:
            j = order[k]
            heapq.heappush(heap, (v + jobs.size[j], jobs.rank[j], j))
            first_start[j] = t
            k += 1
        return k

    while done < n:
        if not heap:
            a = jobs.arrival[order[k]]
            if a > t:
                t = a
            k = admit(k, t, v)
            continue
        m = float(len(heap))
        tag, _, j = heap[0]
        t_done = t + (tag - v) * m
        if t_done < t:
            t_done = t
        if k < n and jobs.arrival[order[k]] < t_done:
            a = jobs.arrival[order[k]]
            v = v + (a - t) / m
            t = a
            k = admit(k, t, v)
        else:
            heapq.heappop(heap)
            t = t_done
            if tag > v:
                v = tag
            completion[j] = t
            done += 1
    return Outcome(completion, first_start, 0, 0.0)
