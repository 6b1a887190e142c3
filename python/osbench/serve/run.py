"""What one engine run produces, and the checks every engine makes before it starts.

:class:`EngineRun` is the raw output of an engine (the reference, the native engine, the vLLM
peer harness): per request and per step numpy arrays, the same for all of them, so they can be
compared array for array. The result classes are built on it.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import Any, Callable, Optional, Union

import numpy as np

from osbench import _checks
from osbench._format import size
from osbench.errors import ArgumentError, ArgumentTypeError
from osbench.serve.requests import Requests
from osbench.serve.steptime import Batch, StepTime

StepTimeModel = Callable[[Batch], float]


@dataclass(frozen=True, eq=False)
class StepRecord:
    """The detail of every step (``run(..., record=True)``), the facts the fidelity test compares
    with the real vLLM scheduler. Ragged per-step lists are flat arrays with offsets: step ``j``'s
    entries are ``x[x_offsets[j]:x_offsets[j + 1]]``."""

    scheduled_offsets: np.ndarray
    scheduled_request: np.ndarray
    """Requests scheduled in each step, in the scheduler's order (running ones, then admissions)."""
    scheduled_tokens: np.ndarray
    """New tokens of each scheduled request."""
    preempted_offsets: np.ndarray
    preempted_request: np.ndarray
    """Requests preempted in each step, in the order they were preempted."""
    admitted_offsets: np.ndarray
    admitted_request: np.ndarray
    """Requests admitted from the waiting queue in each step, in order."""
    admitted_hit_tokens: np.ndarray
    """Prefix-cache hit tokens of each admission."""
    free_blocks: np.ndarray
    """Free blocks (cached ones not held by a request included) after each step's allocations."""

    def step(self, j: int) -> dict[str, list]:
        """Step ``j``'s entries as lists: scheduled ``(request, tokens)``, preempted, admitted
        ``(request, hit tokens)``, and the free blocks."""
        s, p, a = (
            slice(o[j], o[j + 1]) for o in (self.scheduled_offsets, self.preempted_offsets, self.admitted_offsets)
        )
        return {
            "scheduled": list(zip(self.scheduled_request[s].tolist(), self.scheduled_tokens[s].tolist())),
            "preempted": self.preempted_request[p].tolist(),
            "admitted": list(zip(self.admitted_request[a].tolist(), self.admitted_hit_tokens[a].tolist())),
            "free_blocks": int(self.free_blocks[j]),
        }


def _freeze(record: Any) -> None:
    """Make a run's arrays read-only: a run is what happened, and a result built from it may
    then share them instead of copying (:class:`~osbench.serve.ServeResult`)."""
    for f in fields(record):
        value = getattr(record, f.name)
        if isinstance(value, np.ndarray):
            value.setflags(write=False)


@dataclass(frozen=True, eq=False)
class Steps:
    """Per-step records of a run, one entry per engine step (numpy arrays, float64 times in
    seconds, int64 counts): when the step started and how long it took, its :class:`Batch`,
    then the engine's state after it. The one list of per-step facts: every engine records
    these, :class:`~osbench.serve.ServeResult` checks them, the report plots them."""

    start: np.ndarray
    duration: np.ndarray
    num_seqs: np.ndarray
    prefill_seqs: np.ndarray
    prefill_tokens: np.ndarray
    decode_seqs: np.ndarray
    context_tokens: np.ndarray
    attention_pairs: np.ndarray
    num_preempted: np.ndarray
    """Requests preempted in the step."""
    num_waiting: np.ndarray
    """Requests left waiting after the step was scheduled."""
    blocks_used: np.ndarray
    """KV blocks held by requests after the step's allocations."""
    blocks_cached: np.ndarray
    """Distinct block hashes in the prefix-cache map at the step's end."""
    swap_out_bytes: np.ndarray
    """KV bytes the step copied to host memory (preemption by swap)."""
    swap_in_bytes: np.ndarray
    """KV bytes the step copied back from host memory (a swapped request readmitted)."""
    swap_time: np.ndarray
    """Seconds those copies added to the step (part of its ``duration``)."""
    recomputed_tokens: np.ndarray
    """Tokens the step computed whose KV the request had held before (lost to a preemption by
    recompute or a retraction, less what the prefix cache gave back)."""
    tier_load_bytes: np.ndarray
    """KV bytes the step loaded from the KV tiers (:mod:`osbench.serve.vllm.tiers`)."""
    tier_time: np.ndarray
    """Seconds those loads added to the step (part of its ``duration``)."""

    def __post_init__(self) -> None:
        _freeze(self)

    def __len__(self) -> int:
        return len(self.start)

    @property
    def end(self) -> np.ndarray:
        """When each step's tokens are produced: ``start + duration``."""
        return np.asarray(self.start + self.duration)

    def batch(self, j: int) -> Batch:
        """Step ``j``'s work, as the step-time model saw it."""
        return Batch(*(int(getattr(self, f.name)[j]) for f in fields(Batch)))

    def to_dict(self) -> dict[str, list]:
        return {name: getattr(self, name).tolist() for name in STEP_FIELDS}

    @staticmethod
    def merged(runs: Sequence[EngineRun]) -> Steps:
        """The steps of several engines' ``runs`` as one table, in order of start (then engine)."""
        starts = np.concatenate([own.steps.start for own in runs])
        owner = np.concatenate([np.full(len(own.steps), k) for k, own in enumerate(runs)])
        order = np.lexsort((owner, starts))
        return Steps(**{f: np.concatenate([getattr(own.steps, f) for own in runs])[order] for f in STEP_FIELDS})


STEP_FIELDS = tuple(f.name for f in fields(Steps))
STEP_TIMES = ("start", "duration", "swap_time", "tier_time")
"""The float64 fields of :class:`Steps`; the others are int64 counts."""


@dataclass(frozen=True, eq=False)
class EngineRun:
    """One run of the serving engine. Times are seconds on the engine's clock (that of the
    requests' arrivals); a step's tokens come out at its end, ``start + duration``."""

    # Per request, in the order of the requests.
    arrival: np.ndarray
    """When the request reached the engine: its arrival, or later when a concurrency limit
    held it back (``simulate(..., concurrency=N)``)."""
    admitted: np.ndarray
    """When the request was first scheduled (the start of that step)."""
    first_token: np.ndarray
    """When its first output token came out (the end of that step)."""
    finish: np.ndarray
    """When its last output token came out."""
    preemptions: np.ndarray
    """How many times it was preempted (its KV blocks freed, its progress reset)."""
    cached_tokens: np.ndarray
    """Prompt tokens found in the prefix cache when it was first scheduled (vLLM's
    ``num_cached_tokens``)."""
    steps: Steps
    record: Optional[StepRecord] = field(default=None)
    tier_tokens: Optional[np.ndarray] = None
    """Prompt tokens loaded from the KV tiers when it was first scheduled (zeros when not
    given: a run without tiers)."""
    tier_blocks: np.ndarray = field(default_factory=lambda: np.zeros((0, 3), dtype=np.int64))
    """Per KV tier, a row: blocks loaded from it, evicted contents stored in it, and of those
    the ones it did not hold (no rows without tiers)."""

    def __post_init__(self) -> None:
        if self.tier_tokens is None:
            object.__setattr__(self, "tier_tokens", np.zeros(len(self.arrival), dtype=np.int64))
        _freeze(self)

    @property
    def num_steps(self) -> int:
        return len(self.steps)


STEP_BYTES = 8 * len(STEP_FIELDS)
"""Bytes a step's row takes at the least (:class:`Steps`: one float64 or int64 per field)."""
RECORD_STEP_BYTES = 8 * 4
"""And its detail (``record=True``): three offsets and the free blocks."""
SCHEDULED_BYTES = 16
"""And each request it schedules (index and tokens)."""
BLOCK_BYTES = 36
"""Bytes a KV block a run touches takes at the least (the native engine's, with its entry in
its request's block table)."""


def check_memory(requests: Requests, max_num_seqs: int, block_size: int, record: bool) -> None:
    """Refuse, up front, a run that cannot fit in the memory free (MemoryError, naming the
    argument): what it must keep at the least, whatever the engine. Every output token takes a
    step, a step gives each request at most one and serves at most ``max_num_seqs``, and every
    step is recorded; a request holds the blocks of all its tokens at once, in blocks of
    ``block_size`` tokens. (A run that passes may still run out; the native engine then raises
    MemoryError too.)"""
    free = _checks.available_memory()
    if free is None or len(requests) == 0:
        return
    output = requests.output_len
    longest = int(np.argmax(output))
    total = int(output.sum())
    steps = max(int(output[longest]), -(-total // max_num_seqs))
    need = steps * (STEP_BYTES + (RECORD_STEP_BYTES if record else 0)) + (SCHEDULED_BYTES * total if record else 0)
    if need > free:
        named = (
            f"output_len={int(output[longest])} (request {longest})"
            if steps == int(output[longest])
            else f"output_len (summing to {total} tokens, max_num_seqs={max_num_seqs})"
        )
        raise MemoryError(
            f"{named} is not accepted here: the run takes at least {steps} steps, whose records"
            f"{' (record=True)' if record else ''} need about {size(need)} of memory, more than the {size(free)} free"
        )
    blocks = -(-(requests.prompt_len + output - 1) // block_size)
    biggest = int(np.argmax(blocks))
    need = int(blocks[biggest]) * BLOCK_BYTES
    if need > free:
        raise MemoryError(
            f"prompt_len={int(requests.prompt_len[biggest])} (request {biggest}) is not accepted here: with "
            f"output_len={int(output[biggest])} it holds {int(blocks[biggest])} KV blocks of block_size="
            f"{block_size} at once, which need about {size(need)} of memory, more than the {size(free)} free"
        )


def engine_run(columns: dict[str, Any], detail: Optional[dict[str, Any]]) -> EngineRun:
    """The binding's arrays of one native run, by name, as an :class:`EngineRun`."""
    steps = Steps(**{name: columns.pop(name) for name in STEP_FIELDS})
    return EngineRun(**columns, steps=steps, record=None if detail is None else StepRecord(**detail))


def check_types(requests: Any, config: Any, config_type: type, config_name: str) -> None:
    """Refuse ``requests`` that are not :class:`Requests` and a ``config`` that is not a
    ``config_type`` (``config_name``: where users find that type)."""
    if not isinstance(requests, Requests):
        raise ArgumentTypeError(
            f"requests={type(requests).__name__} is not accepted: it must be osbench.serve.Requests"
        )
    if not isinstance(config, config_type):
        raise ArgumentTypeError(f"config={type(config).__name__} is not accepted: it must be {config_name}")


@dataclass(frozen=True)
class Clients:
    """Closed-loop clients, as ``benchmark_serving --max-concurrency`` sends requests: at most
    ``count`` in flight, request ``i`` sent at its arrival or ``turnaround`` seconds after a
    request in flight finished and left room, whichever is later. ``turnaround``: the response's
    trip to its client and the next request's trip to the engine (HTTP, tokenisation); any
    positive one has the next request miss the step that starts when its predecessor finished,
    as a real engine's does. ``concurrency=N`` is ``Clients(N)``, a turnaround of 0. The clock
    is float64 seconds: a turnaround that would carry it where a step no longer moves it is
    refused by :func:`~osbench.serve.simulate` (:func:`check_clock_moves`), and one that would
    send at infinity by either engine.

    ``warmup``: the first ``warmup`` requests are a phase of their own, a benchmark's warm-up:
    the requests after them are sent only once every warm-up request has finished, the first of
    them ``turnaround`` after the last finish (at their arrival if that is later), as AIPerf runs
    its phases (``CreditIssuingStrategy._execute_phases`` in ``aiperf/timing/
    credit_issuing_strategy.py`` waits for a phase's requests to come back before it starts the
    next). The warm-up's requests are requests of the run like any other: leave them out of
    what is measured (:func:`osbench.serve.validate.aiperf_loop` does)."""

    count: int
    turnaround: float = 0.0
    warmup: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "count", _checks.positive_int("concurrency", self.count, maximum=2**32))
        object.__setattr__(self, "turnaround", check_turnaround(self.turnaround))
        object.__setattr__(self, "warmup", _checks.non_negative_int("warmup", self.warmup, maximum=2**63))


def check_turnaround(turnaround: Any) -> float:
    """A client's turnaround (:class:`Clients`): finite seconds, at least 0."""
    return _checks.real("turnaround", turnaround, minimum=0.0)


Concurrency = Union[int, Clients]
"""What a ``concurrency`` argument takes besides None (each request sent at its arrival): the
most requests in flight, or :class:`Clients`."""


def check_concurrency(concurrency: Any) -> Optional[Clients]:
    """``concurrency`` (:data:`Concurrency` or None) as :class:`Clients`, or None: each request
    sent at its arrival."""
    if concurrency is None or isinstance(concurrency, Clients):
        return concurrency
    return Clients(concurrency)


def client_options(concurrency: Any) -> dict[str, Any]:
    """``concurrency`` (:data:`Concurrency`, checked) as the native engines' options take it:
    ``concurrency`` (the count, or None), ``turnaround`` and ``warmup``."""
    clients = check_concurrency(concurrency)
    if clients is None:
        return {"concurrency": None, "turnaround": 0.0, "warmup": 0}
    return {"concurrency": clients.count, "turnaround": clients.turnaround, "warmup": clients.warmup}


def _indices(idx: np.ndarray) -> str:
    """``request 3`` or ``requests 3, 5, 8, 9, 12 (and 4 more)``."""
    shown = ", ".join(str(int(i)) for i in idx[:5])
    more = f" (and {len(idx) - 5} more)" if len(idx) > 5 else ""
    return f"request{'s' if len(idx) > 1 else ''} {shown}{more}"


def refused(idx: np.ndarray) -> str:
    """``request 3 is not accepted`` or ``requests 3, 5 are not accepted`` (:func:`_indices`)."""
    return f"{_indices(idx)} {'are' if len(idx) > 1 else 'is'} not accepted"


def step_duration(step_time: StepTimeModel, batch: Batch) -> float:
    """``step_time(batch)``, checked: a finite number of seconds, at least 0."""
    seconds = step_time(batch)
    # A real number only: float('0.1') and float(True) would take a string or a flag for seconds.
    value = math.nan if isinstance(seconds, bool) or not isinstance(seconds, numbers.Real) else float(seconds)
    if not (value >= 0 and math.isfinite(value)):
        raise ArgumentError(
            f"step_time returned {seconds!r} for {batch}: it must return a finite number of seconds >= 0"
        )
    return value


def shortest_step(step_time: Any) -> float:
    """The seconds of one decode token's step under ``step_time``, the step the clock checks
    hold a run to; 0 (nothing to hold it to) for a step time that is not a
    :class:`~osbench.serve.StepTime` (an arbitrary callable is not called before the run)."""
    return step_time(batch_of([(1, 1, 1)])) if isinstance(step_time, StepTime) else 0.0


def sends_reach(requests: Requests, clients: Optional[Clients]) -> float:
    """The latest the sends can carry the clock, the steps' own time aside: the last arrival,
    plus, with closed-loop ``clients``, ``len(requests) + 1`` turnarounds (a send comes at most
    a turnaround after a finish, the profiling phase one after its warm-up's last)."""
    last = float(np.max(requests.arrival)) if len(requests) else 0.0
    if clients is None or clients.turnaround == 0:
        return last
    return last + (len(requests) + 1) * clients.turnaround


def moves(clock: float, step: float) -> bool:
    """Whether a step of ``step`` seconds still moves a clock at ``clock`` (not at infinity)."""
    return clock + step > clock


def check_clock_moves(requests: Requests, shortest: float, clients: Optional[Clients] = None) -> None:
    """Refuse arrivals so far from zero that a step of ``shortest`` seconds (one decode token,
    :func:`shortest_step`) no longer moves the clock there: each step's time would vanish into
    the arrival's, and every latency would come out 0. With closed-loop ``clients``, refuse too
    a turnaround that could carry the clock that far (:func:`sends_reach`)."""
    if len(requests) == 0 or not shortest > 0:
        return
    last = sends_reach(requests, None)
    if not moves(last, shortest):
        raise ArgumentError(
            f"arrival={last!r} is not accepted: a step of {shortest:.3g} s no longer moves a clock that far "
            f"from zero (float64 keeps 53 bits); arrivals must stay below about {shortest * 2.0**52:.3g} s"
        )
    reach = sends_reach(requests, clients)
    if clients is not None and not moves(reach, shortest):
        bound = (shortest * 2.0**52 - last) / (len(requests) + 1)
        raise ArgumentError(
            f"turnaround={clients.turnaround!r} is not accepted: over {len(requests)} requests the clients' "
            f"turnarounds could carry the clock to {reach:.3g} s, where a step of {shortest:.3g} s no longer moves "
            f"it (float64 keeps 53 bits); keep turnaround below about {bound:.3g} s"
        )


def batch_of(scheduled: Sequence[tuple[int, int, int]]) -> Batch:
    """The :class:`Batch` of a step from ``(new tokens, tokens already in the KV cache, tokens
    not yet in it before the step)`` of each scheduled request. A request is a prefill when more
    than its one next token was outstanding."""
    prefill_seqs = prefill_tokens = decode_seqs = context = pairs = 0
    for new, cached, outstanding in scheduled:
        if outstanding > 1:
            prefill_seqs += 1
            prefill_tokens += new
        else:
            decode_seqs += 1
        context += cached
        pairs += new * cached + new * (new + 1) // 2
    return Batch(len(scheduled), prefill_seqs, prefill_tokens, decode_seqs, context, pairs)


class Recorder:
    """Collects a run step by step and hands it over as an :class:`EngineRun`, so that every
    engine records the same facts the same way."""

    def __init__(self, num_requests: int, record: bool) -> None:
        self.arrival = np.full(num_requests, np.nan)
        self.admitted = np.full(num_requests, np.nan)
        self.first_token = np.full(num_requests, np.nan)
        self.finish = np.full(num_requests, np.nan)
        self.preemptions = np.zeros(num_requests, dtype=np.int64)
        self.cached_tokens = np.zeros(num_requests, dtype=np.int64)
        self.tier_tokens = np.zeros(num_requests, dtype=np.int64)
        self.tier_blocks: Sequence[tuple[int, int, int]] = ()
        self.steps: list[tuple] = []
        self.record = record
        self.detail: dict[str, list[int]] = {name: [] for name in _DETAIL}
        self.offsets: dict[str, list[int]] = {"scheduled": [0], "preempted": [0], "admitted": [0]}

    def token(self, index: int, time: float, first: bool, last: bool) -> None:
        """Request ``index`` produced an output token at ``time``."""
        if first:
            self.first_token[index] = time
        if last:
            self.finish[index] = time

    def step(
        self,
        start: float,
        duration: float,
        batch: Batch,
        scheduled: Sequence[tuple[int, int]],
        preempted: Sequence[int],
        admitted: Sequence[tuple[int, int]],
        num_waiting: int,
        blocks_used: int,
        free_blocks: int,
        blocks_cached: int,
        copies: tuple[int, int, float, int, int, float] = (0, 0, 0.0, 0, 0, 0.0),
        loaded: Sequence[tuple[int, int]] = (),
        tier_blocks: Sequence[tuple[int, int, int]] = (),
    ) -> None:
        """One step: its requests ``(index, new tokens)``, its preemptions, its admissions
        ``(index, prefix-hit tokens)``, the engine's state after it, ``copies``: its swap bytes
        copied out and in, their seconds, its tokens computed again, its bytes loaded from the
        KV tiers and their seconds; ``loaded``: its admissions' ``(index, tokens loaded from
        the tiers)``; ``tier_blocks``: what each tier did so far."""
        for index in preempted:
            self.preemptions[index] += 1
        loads = dict(loaded)
        for index, hit in admitted:
            if math.isnan(self.admitted[index]):
                self.admitted[index] = start
                self.cached_tokens[index] = hit
                self.tier_tokens[index] = loads.get(index, 0)
        self.tier_blocks = tier_blocks
        self.steps.append(
            (  # in the order of STEP_FIELDS
                start,
                duration,
                *(getattr(batch, f.name) for f in fields(Batch)),
                len(preempted),
                num_waiting,
                blocks_used,
                blocks_cached,
                *copies,
            )
        )
        if self.record:
            d = self.detail
            for index, tokens in scheduled:
                d["scheduled_request"].append(index)
                d["scheduled_tokens"].append(tokens)
            d["preempted_request"].extend(preempted)
            for index, hit in admitted:
                d["admitted_request"].append(index)
                d["admitted_hit_tokens"].append(hit)
            d["free_blocks"].append(free_blocks)
            for name, count in (
                ("scheduled", len(scheduled)),
                ("preempted", len(preempted)),
                ("admitted", len(admitted)),
            ):
                self.offsets[name].append(self.offsets[name][-1] + count)

    def result(self) -> EngineRun:
        columns = list(zip(*self.steps)) if self.steps else [()] * len(STEP_FIELDS)
        steps = Steps(
            **{
                name: np.asarray(col, dtype=np.float64 if name in STEP_TIMES else np.int64)
                for name, col in zip(STEP_FIELDS, columns)
            }
        )
        record = None
        if self.record:
            arrays = {name: np.asarray(values, dtype=np.int64) for name, values in self.detail.items()}
            offsets = {f"{name}_offsets": np.asarray(o, dtype=np.int64) for name, o in self.offsets.items()}
            record = StepRecord(**arrays, **offsets)
        return EngineRun(
            arrival=self.arrival,
            admitted=self.admitted,
            first_token=self.first_token,
            finish=self.finish,
            preemptions=self.preemptions,
            cached_tokens=self.cached_tokens,
            steps=steps,
            record=record,
            tier_tokens=self.tier_tokens,
            tier_blocks=np.asarray(self.tier_blocks, dtype=np.int64).reshape(-1, 3),
        )


_DETAIL = (
    "scheduled_request",
    "scheduled_tokens",
    "preempted_request",
    "admitted_request",
    "admitted_hit_tokens",
    "free_blocks",
)
