"""The engine loop every Python engine shares: the clock, arrivals (open or closed loop), step
times, the recorder and the livelock guard, over any scheduler one step at a time.

The reference engine (:mod:`osbench.serve.reference`) and every peer harness (the real vLLM
scheduler, :mod:`osbench.serve.vllm.peer`) are a :class:`Stepper`: they add requests, plan a
step and take the model's output, and :func:`drive` does the rest, so that all of them keep the
same clock the same way. The native engine's loop is the same (``rust/osbench-core/src/serve/
engine.rs``), with the decode jump on top.

The clock: before each step, every request that has been sent joins the engine, in order; when
nothing runs or waits, the clock jumps to the next send. A step's output tokens come out at its
end. Requests are sent at their arrival, or, with ``concurrency=N``, as ``benchmark_serving
--max-concurrency N`` sends them: at most ``N`` in flight, request ``i`` sent at its arrival or
when a request finishes and leaves room, whichever is later (the run's ``arrival`` says when);
with ``concurrency=Clients(N, turnaround)`` the room is taken ``turnaround`` seconds after the
finish, and with ``Clients(N, turnaround, warmup=K)`` the requests after the first ``K`` wait
until all ``K`` have finished, the first of them sent ``turnaround`` after the last finish
(:class:`~osbench.serve.run.Clients`).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Optional, Protocol

from osbench.errors import ArgumentError
from osbench.serve.requests import Requests
from osbench.serve.run import Concurrency, EngineRun, Recorder, StepTimeModel, check_concurrency, step_duration
from osbench.serve.steptime import Batch


def recomputed(cached: int, new: int, high: int) -> tuple[int, int]:
    """A request's ``new`` tokens computed over its ``cached`` ones: how many of them are
    computed again, those below ``high``, the most tokens its KV has ever held (after a
    preemption or a retraction), and the new ``high``. The one rule of every stepper's
    :attr:`Planned.recomputed_tokens` (the core's ``serve::scheduler::recomputed``)."""
    done = cached + new
    return max(min(done, high) - cached, 0), max(high, done)


@dataclass(frozen=True)
class Planned:
    """What a scheduler planned for one step (``SchedulerOutput``), and its pool then."""

    batch: Batch
    scheduled: Sequence[tuple[int, int]]
    """``(request, new tokens)``, in scheduling order."""
    preempted: Sequence[int]
    admitted: Sequence[tuple[int, int]]
    """``(request, prefix-hit tokens)``, in order."""
    num_waiting: int
    blocks_used: int
    free_blocks: int
    swap_out_bytes: int = 0
    swap_in_bytes: int = 0
    """KV bytes the step copies to host memory and back (preemption by swap)."""
    swap_time: float = 0.0
    """Seconds those copies add to the step's time (:mod:`osbench.serve.vllm.swap`)."""
    recomputed_tokens: int = 0
    """Tokens the step computes whose KV the request had held before (:func:`recomputed`)."""
    loaded: Sequence[tuple[int, int]] = ()
    """``(request, tokens loaded from the KV tiers)`` of the admissions that loaded some."""
    tier_load_bytes: int = 0
    tier_time: float = 0.0
    """KV bytes the step loads from the tiers, and the seconds that adds to its time
    (:mod:`osbench.serve.vllm.tiers`)."""


@dataclass(frozen=True)
class Output:
    """What the step's output did (``update_from_output``)."""

    tokens: Sequence[tuple[int, bool, bool]]
    """``(request, first token, last token)`` of each request that got a token, in order."""
    num_finished: int
    blocks_cached: int
    """Distinct contents in the prefix cache after the step."""
    tier_blocks: Sequence[tuple[int, int, int]] = ()
    """Per KV tier so far: blocks loaded from it, evicted contents stored in it, and of those
    the ones it did not hold."""


class Stepper(Protocol):
    """A scheduler, one step at a time: what :func:`drive` needs of an engine's semantics."""

    def add_request(self, index: int, arrival: float) -> None:
        """Request ``index`` of the requests reaches the engine at ``arrival``."""

    def has_unfinished_requests(self) -> bool: ...

    def schedule(self) -> Planned: ...

    def update_from_output(self) -> Output: ...


class Guard(Protocol):
    """Stops a run that repeats itself forever (:class:`osbench.serve.reference.LivelockGuard`,
    built over its semantics' state); a stepper run without one needs no state of its own."""

    def repeats(self, progressed: bool, now: float) -> bool:
        """After a step ending at ``now``: ``progressed`` when it produced a token or a request
        arrived. True when the run repeats: it makes no progress before the next request is
        sent, if ever."""

    def error(self, next_send: Optional[float]) -> Exception:
        """The error of a run found repeating; ``next_send``: when the next request would be
        sent (None, or infinity when no place in flight will ever free up: never)."""


class Sender:
    """When each request is sent, in order: at its arrival, or, with ``concurrency``, at its
    arrival or when a request finishes and leaves room, whichever is later (see the module's
    docstring). The one rule of every loop that sends requests (:func:`drive`, and the loop of
    replicas behind a router, :mod:`osbench.serve.cluster`)."""

    def __init__(self, arrival: Sequence[float], concurrency: Optional[Concurrency]) -> None:
        self.arrival = arrival
        concurrency = check_concurrency(concurrency)
        self.next = 0
        """The next request to send."""
        n = len(arrival)
        self.turnaround = 0.0 if concurrency is None else concurrency.turnaround
        # When each free place in flight takes its next request (a heap: several engines finish
        # out of order).
        self.room: Optional[list[float]] = None if concurrency is None else [0.0] * min(concurrency.count, n)
        self.warmup = 0 if concurrency is None else min(concurrency.warmup, n)
        """The requests of the warm-up phase (the first ones)."""
        self.warming = self.warmup
        """Warm-up requests not finished yet. Until they all have, no later request is sent,
        so every finish counted by :meth:`finished` meanwhile is one of theirs."""
        self.opens = math.inf if self.warmup else 0.0
        """When the requests after the warm-up may be sent: ``turnaround`` after its last finish."""

    def more(self) -> bool:
        """Whether any request is left to send."""
        return self.next < len(self.arrival)

    def time(self) -> float:
        """When the next request is sent: infinity when none is left, or none before some
        request finishes."""
        if not self.more():
            return math.inf
        if self.room is None:
            return self.arrival[self.next]
        if not self.room:
            return math.inf
        sent = max(self.arrival[self.next], self.room[0])
        return sent if self.next < self.warmup else max(sent, self.opens)

    def send(self) -> tuple[int, float]:
        """Send the next request: ``(index, when)``."""
        index, sent = self.next, self.time()
        if self.room is not None:
            heapq.heappop(self.room)
        self.next += 1
        return index, sent

    def finished(self, end: float, count: int) -> None:
        """``count`` requests finished at ``end``, each leaving room for one more, taken
        ``turnaround`` seconds later; refused when that send would come at infinity."""
        following = end + self.turnaround
        if count and not math.isfinite(following):
            raise ArgumentError(
                f"turnaround={self.turnaround!r} is not accepted: a turnaround that keeps the clients' sends "
                f"finite: after a finish at {end!r} s the next would come at inf"
            )
        if self.room is not None:
            for _ in range(count):
                heapq.heappush(self.room, following)
        if self.warming and count:
            self.warming = max(self.warming - count, 0)  # all warm-up finishes: never below 0 (send.rs)
            if self.warming == 0:
                self.opens = following


def step_end(now: float, duration: float) -> float:
    """When a step of ``duration`` seconds that starts at ``now`` ends. The clock is float64
    seconds: steps that would carry it past the largest one are refused, not left to end at
    infinity (``engine.rs: step_end``)."""
    end = now + duration
    if not math.isfinite(end):
        raise ArgumentError(
            f"step_time=a step of {duration!r} s at {now!r} s is not accepted: steps whose times keep the clock "
            "finite (float64 seconds, at most about 1.8e308)"
        )
    return end


def take_step(
    stepper: Stepper, step_time: StepTimeModel, recorder: Recorder, now: float
) -> tuple[float, Planned, Output]:
    """One step of ``stepper`` starting at ``now``, recorded into ``recorder``: when it ends,
    its plan and its output (the tokens it produced come out at its end)."""
    plan = stepper.schedule()
    if not plan.scheduled:  # cannot happen when check_requests passed; a guard against a hang
        raise RuntimeError(f"the engine scheduled nothing at t={now} with requests waiting: this is a bug")
    # Swap copies and the tiers' loads block the step: their time is added to the model's.
    duration = step_duration(step_time, plan.batch) + plan.swap_time + plan.tier_time
    end = step_end(now, duration)
    out = stepper.update_from_output()
    for index, first, last in out.tokens:
        recorder.token(index, end, first, last)
    recorder.step(
        now,
        duration,
        plan.batch,
        plan.scheduled,
        plan.preempted,
        plan.admitted,
        plan.num_waiting,
        plan.blocks_used,
        plan.free_blocks,
        out.blocks_cached,
        (
            plan.swap_out_bytes,
            plan.swap_in_bytes,
            plan.swap_time,
            plan.recomputed_tokens,
            plan.tier_load_bytes,
            plan.tier_time,
        ),
        plan.loaded,
        out.tier_blocks,
    )
    return end, plan, out


def drive(
    requests: Requests,
    stepper: Stepper,
    step_time: StepTimeModel,
    recorder: Recorder,
    *,
    guard: Optional[Guard] = None,
    concurrency: Optional[Concurrency] = None,
) -> EngineRun:
    """Serve ``requests`` on ``stepper``, each step taking ``step_time(batch)`` seconds, into
    ``recorder`` (made for ``len(requests)`` requests); with ``guard``, a run that repeats itself
    with no progress is stopped with the guard's error (nothing changes before the next send,
    which depends on arrivals and finishes only); with ``concurrency``, at most that many
    requests in flight (see the module's docstring)."""
    n = len(requests)
    sender = Sender(requests.arrival.tolist(), concurrency)
    now = 0.0
    num_finished = 0
    arrived = False
    while num_finished < n:
        while sender.time() <= now:
            index, sent = sender.send()
            stepper.add_request(index, sent)
            recorder.arrival[index] = sent
            arrived = True
        if not stepper.has_unfinished_requests():
            now = sender.time()
            continue
        end, _, out = take_step(stepper, step_time, recorder, now)
        num_finished += out.num_finished
        now = end
        sender.finished(end, out.num_finished)
        progressed, arrived = arrived or bool(out.tokens), False
        if guard is not None and guard.repeats(progressed, now):
            raise guard.error(sender.time() if sender.more() else None)
    return recorder.result()
