"""The loop of several engines on one clock, behind a router: the reference of the native
``rust/osbench-core/src/serve/cluster.rs``. Each replica is a :class:`~osbench.serve.drive.
Stepper` with its own KV, its own recorder and livelock guard, stepped as
:func:`osbench.serve.drive.drive` steps one engine (:func:`~osbench.serve.drive.take_step`),
and requests are sent as there (:class:`~osbench.serve.drive.Sender`).

The clock: each replica keeps its own, the end of its last step (an idle replica's moves on to
the request it is given). The loop takes the earliest event: the next request's send time, or
the earliest busy replica's next step start; a send goes first on a tie (a request sent at
``t`` joins a step starting at ``t``, as in ``drive``), then replicas by index. A request is
routed when it is sent, with what the router can see then (:mod:`osbench.serve.routers.base`):
each replica's outstanding requests (finished: their last token came out at or before the
send), its last reported step (the last that ended at or before it) and the blocks of the
prompts routed since.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Optional

import numpy as np

from osbench.errors import ArgumentError
from osbench.serve.drive import Guard, Output, Sender, Stepper, take_step
from osbench.serve.requests import Requests
from osbench.serve.routers.base import Replica, Request, Router
from osbench.serve.run import Concurrency, EngineRun, Recorder, StepTimeModel


@dataclass(frozen=True, eq=False)
class ClusterRun:
    """One run of replicas behind a router: which replica served each request, the loads the
    router saw, and each replica's own run, its requests numbered as it received them (0, 1,
    2...: replica ``k``'s request ``j`` is ``np.flatnonzero(replica == k)[j]``)."""

    replica: np.ndarray
    """Per request (int64): the replica that served it."""
    load: np.ndarray
    """Per request, one column per replica (int64): the outstanding requests the router saw
    when it routed the request."""
    runs: tuple[EngineRun, ...]
    """Per replica: its run over the requests it served."""


@dataclass
class _Report:
    """What a replica's step shows the router once it has ended."""

    blocks_used: int = 0
    num_waiting: int = 0
    num_running: int = 0
    added_before: int = 0
    """Requests the replica had been given when the step was scheduled."""


@dataclass
class _Engine:
    """One replica on the loop's clock."""

    stepper: Stepper
    guard: Optional[Guard]
    recorder: Recorder
    clock: float = 0.0
    arrived: bool = False
    given: list[int] = field(default_factory=list)
    """The requests given to it, in order."""
    blocks: list[int] = field(default_factory=lambda: [0])
    """Prompt blocks of the requests given to it, summed in order (``blocks[j]``: the first ``j``)."""
    outstanding: int = 0
    tokens: int = 0
    report: _Report = field(default_factory=_Report)
    pending: Optional[tuple[float, _Report, list[int]]] = None
    """The step in progress: when it ends, its report, the requests it finishes."""

    def publish(self, now: float, tokens: np.ndarray) -> None:
        """Show the router the step in progress if it has ended by ``now``."""
        if self.pending is not None and self.pending[0] <= now:
            _, self.report, finished = self.pending
            self.pending = None
            self.outstanding -= len(finished)
            self.tokens -= int(tokens[finished].sum()) if finished else 0

    def view(self, k: int, now: float, tokens: np.ndarray, usable_blocks: int, block_size: int) -> Replica:
        """Replica ``k`` as its router sees it at ``now`` (with ``usable_blocks`` of ``block_size`` tokens)."""
        self.publish(now, tokens)
        report = self.report
        return Replica(
            k,
            self.outstanding,
            self.tokens,
            report.blocks_used,
            report.num_waiting,
            report.num_running,
            self.blocks[-1] - self.blocks[report.added_before],
            usable_blocks,
            block_size,
        )

    def give(self, index: int, when: float, prompt_len: int, tokens: int, block_size: int, local: bool) -> None:
        """Request ``index`` (of ``prompt_len`` tokens, ``tokens`` with its output) reaches the
        replica at ``when``; ``local``: the replica numbers its requests as it receives them (its
        recorder too), else by their index."""
        self.stepper.add_request(index, when)
        self.recorder.arrival[len(self.given) if local else index] = when
        self.clock = max(self.clock, when)
        self.arrived = True
        self.given.append(index)
        self.blocks.append(self.blocks[-1] - (-prompt_len // block_size))
        self.outstanding += 1
        self.tokens += tokens

    def step(self, step_time: StepTimeModel, tokens: np.ndarray, local: bool) -> tuple[float, list[int], Output, bool]:
        """The replica's next step: when it ends, the requests it finished (by index, in order;
        ``local``: as :meth:`give`), its output, and whether the run now repeats itself
        (:meth:`Guard.repeats`: nothing changes a replica's state but a request given to it, so
        a repeat is a livelock until then)."""
        self.publish(self.clock, tokens)
        added_before = len(self.given)
        end, plan, out = take_step(self.stepper, step_time, self.recorder, self.clock)
        finished = [self.given[index] if local else index for index, _, last in out.tokens if last]
        self.pending = (end, _Report(plan.blocks_used, plan.num_waiting, len(plan.scheduled), added_before), finished)
        self.clock = end
        progressed, self.arrived = self.arrived or bool(out.tokens), False
        return end, finished, out, self.guard is not None and self.guard.repeats(progressed, end)


def drive_replicas(
    requests: Requests,
    engines: Sequence[tuple[Stepper, Optional[Guard]]],
    router: Router,
    step_time: StepTimeModel,
    *,
    usable_blocks: int,
    block_size: int,
    record: bool = False,
    concurrency: Optional[Concurrency] = None,
) -> ClusterRun:
    """Serve ``requests`` on ``engines`` (a stepper and its livelock guard per replica, each
    with ``usable_blocks`` KV blocks of ``block_size`` tokens) behind ``router`` (started
    here), each step taking ``step_time(batch)`` seconds; with ``concurrency``, at most that many
    requests in flight over the whole cluster (see the module's docstring)."""
    n, num = len(requests), len(engines)
    reps = [_Engine(s, g, Recorder(n, record)) for s, g in engines]
    router.start(num, requests, block_size)
    prompt_len = requests.prompt_len.tolist()
    output_len = requests.output_len.tolist()
    tokens = requests.prompt_len + requests.output_len
    sender = Sender(requests.arrival.tolist(), concurrency)
    replica = np.zeros(n, dtype=np.int64)
    load = np.zeros((n, num), dtype=np.int64)
    num_finished = 0
    while num_finished < n:
        t_send = sender.time()
        busy: Optional[_Engine] = None
        for rep in reps:
            if rep.stepper.has_unfinished_requests() and (busy is None or rep.clock < busy.clock):
                busy = rep
        if busy is None or t_send <= busy.clock:
            if t_send == math.inf:  # cannot happen: something runs, or room is free
                raise RuntimeError("no request can be sent and no replica runs: this is a bug")
            index, sent = sender.send()
            views = [rep.view(k, sent, tokens, usable_blocks, block_size) for k, rep in enumerate(reps)]
            load[index] = [v.outstanding for v in views]
            request = Request(index, sent, prompt_len[index], output_len[index])
            k = checked(router.route(request, views), num, router, index)
            replica[index] = k
            reps[k].give(index, sent, prompt_len[index], prompt_len[index] + output_len[index], block_size, False)
            continue
        end, _, out, repeats = busy.step(step_time, tokens, False)
        num_finished += out.num_finished
        sender.finished(end, out.num_finished)
        if repeats:
            assert busy.guard is not None
            raise busy.guard.error(sender.time() if sender.more() else None)
    return ClusterRun(replica, load, tuple(_own(rep.recorder.result(), rep.given, n) for rep in reps))


def checked(answer: object, num: int, router: Router, index: int) -> int:
    """A router's answer for request ``index``: a replica index from 0 to ``num - 1``."""
    if isinstance(answer, (bool, np.bool_)) or not isinstance(answer, numbers.Integral) or not 0 <= int(answer) < num:
        raise ArgumentError(
            f"router={router!r} returned {answer!r} for request {index}: it must return a replica index, "
            f"an integer from 0 to {num - 1} (replicas={num})"
        )
    return int(answer)


def _own(run: EngineRun, given: list[int], n: int) -> EngineRun:
    """A replica's run over all the requests, made its own: its requests only, numbered as it
    received them."""
    rows = np.asarray(given, dtype=np.int64)
    record = run.record
    if record is not None:
        local = np.full(n, -1, dtype=np.int64)
        local[rows] = np.arange(len(rows))
        record = replace(
            record,
            scheduled_request=local[record.scheduled_request],
            preempted_request=local[record.preempted_request],
            admitted_request=local[record.admitted_request],
        )
    return EngineRun(
        arrival=run.arrival[rows],
        admitted=run.admitted[rows],
        first_token=run.first_token[rows],
        finish=run.finish[rows],
        preemptions=run.preemptions[rows],
        cached_tokens=run.cached_tokens[rows],
        steps=run.steps,
        record=record,
        tier_tokens=np.asarray(run.tier_tokens)[rows],
        tier_blocks=run.tier_blocks,
    )


__all__ = ["ClusterRun", "checked", "drive_replicas"]
