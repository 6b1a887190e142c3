"""What a serving run produced: per-request latencies, per-step records, and their summary.

The engines (reference and native) return the same raw arrays (an ``EngineRun``: any object
with the attributes of :class:`RawRun`); :meth:`ServeResult.from_run` checks them and adds
the requests and the configuration. Every figure is computed here, once, from those arrays.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Protocol, Union

import numpy as np

from osbench._record import Record
from osbench.errors import ArgumentError, ArgumentTypeError
from osbench.serve.requests import Requests
from osbench.serve.run import STEP_FIELDS, STEP_TIMES, Steps

REQUEST_TIMES = ("admitted", "first_token", "finish")
LENGTH_CLASSES = ("short", "medium", "long")
"""The output-length classes slowdown is reported by: the workload's output lengths cut at
their terciles (``short``: at most the first, ``long``: above the second)."""
REQUEST_COUNTS = ("preemptions", "cached_tokens", "tier_tokens")


class RawRun(Protocol):
    """The raw output of an engine (its :class:`~osbench.serve.run.EngineRun`): numpy arrays per
    request (float64 times in seconds, int64 counts) and the per-step :class:`Steps`."""

    @property
    def admitted(self) -> np.ndarray: ...  # when first scheduled
    @property
    def first_token(self) -> np.ndarray: ...
    @property
    def finish(self) -> np.ndarray: ...
    @property
    def preemptions(self) -> np.ndarray: ...
    @property
    def cached_tokens(self) -> np.ndarray: ...  # prefix-cache hit tokens at first scheduling
    @property
    def steps(self) -> Steps: ...


def _tier_blocks(run: Any, config: Any) -> np.ndarray:
    """The run's per-tier counts (:attr:`ServeResult.tier_blocks`), a row of zeros for each
    configured tier when the run took no step (an engine builds its tiers at its first)."""
    blocks = np.asarray(getattr(run, "tier_blocks", np.zeros((0, 3))), dtype=np.int64).reshape(-1, 3)
    tiers = len(getattr(config, "kv_tiers", ()))
    return blocks if len(blocks) or not tiers else np.zeros((tiers, 3), dtype=np.int64)


def _column(owner: Any, label: str, name: str, dtype: type, length: int) -> np.ndarray:
    """``owner.<name>`` (called ``label`` in errors) as a read-only 1-D array of ``length``
    finite values >= 0: the array itself when it is read-only already and of ``dtype`` (a
    run's arrays are, :class:`~osbench.serve.run.EngineRun`), else a copy."""
    if not hasattr(owner, name):
        raise ArgumentTypeError(f"{label} is not accepted: it has no {name!r} array (an engine's EngineRun has it)")
    arr = np.asarray(getattr(owner, name))
    accepted = "fiu" if dtype is np.float64 else "iu"
    if arr.ndim != 1 or (arr.size and (arr.dtype.kind not in accepted or arr.dtype == np.bool_)):
        raise ArgumentTypeError(
            f"{label}.{name} is not accepted: it must be a 1-D {np.dtype(dtype)} array, got {arr.dtype} {arr.shape}"
        )
    if len(arr) != length:
        raise ArgumentError(f"{label}.{name} is not accepted: it has {len(arr)} entries, expected {length}")
    if arr.dtype != dtype or arr.flags.writeable:  # an engine's run is read-only: shared, not copied
        arr = np.array(arr, dtype=dtype)
    bad = ~(arr >= 0) | ~np.isfinite(arr)  # NaN (a request that never finished) too
    if bad.any():
        i = int(np.argmax(bad))
        raise ArgumentError(f"{label}.{name}[{i}]={arr[i].item()!r} is not accepted: it must be finite and >= 0")
    arr.setflags(write=False)
    return arr


@dataclass(frozen=True)
class Stats(Record):
    """Mean and percentiles of one latency (seconds; nan when there is nothing to measure)."""

    mean: float
    p50: float
    p90: float
    p99: float

    @classmethod
    def of(cls, values: np.ndarray) -> Stats:
        values = values[~np.isnan(values)]
        if values.size == 0:
            return cls(math.nan, math.nan, math.nan, math.nan)
        p50, p90, p99 = np.percentile(values, [50, 90, 99])
        return cls(float(values.mean()), float(p50), float(p90), float(p99))


@dataclass(frozen=True)
class TierSummary(Record):
    """What one KV tier did over a run (:attr:`ServeSummary.tiers`)."""

    medium: str
    policy: str
    gib: float
    #: blocks it holds
    capacity_blocks: int
    #: blocks admissions loaded from it, and their bytes
    loaded_blocks: int
    loaded_bytes: int
    #: evicted contents stored in it, and of those the ones it did not hold yet
    stored_blocks: int
    inserted_blocks: int


@dataclass(frozen=True)
class PriorityClass(Record):
    """Figures of the requests of one priority (:attr:`ServeSummary.by_priority`): how each
    class fared, which is where strict priority's starvation of the lower classes, and aging's
    bound on it, show."""

    priority: int
    requests: int
    e2e: Stats
    queueing: Stats
    #: the longest wait before first being scheduled (seconds)
    max_queueing: float
    #: nan without the alone times, as :attr:`ServeSummary.slowdown`
    slowdown: Stats


@dataclass(frozen=True)
class ServeSummary(Record):
    """Figures of one run (:meth:`ServeResult.summary`)."""

    requests: int
    #: seconds from the first arrival to the last finish
    duration: float
    #: finished requests and generated tokens per second of ``duration``
    request_throughput: float
    output_throughput: float
    ttft: Stats
    #: over requests with more than one output token
    tpot: Stats
    e2e: Stats
    queueing: Stats
    #: the longest wait before first being scheduled (seconds): starvation shows here
    max_queueing: float
    #: E2E over the request's service time alone (:attr:`ServeResult.slowdown`), all requests
    #: and per output-length class (:data:`LENGTH_CLASSES`); nan without the alone times
    slowdown: Stats
    slowdown_short: Stats
    slowdown_medium: Stats
    slowdown_long: Stats
    slo_ttft: Optional[float]
    slo_tpot: Optional[float]
    #: requests meeting every SLO given (TTFT <= slo_ttft and TPOT <= slo_tpot; a one-token
    #: output has no TPOT and meets that SLO), their share, and their rate (requests/s)
    slo_met: int
    slo_attainment: float
    goodput: float
    #: time-weighted mean and the peak of blocks_used / num_blocks over the steps
    kv_utilization: float
    kv_utilization_peak: float
    num_blocks: int
    #: preemption events, and requests preempted at least once
    preemptions: int
    preempted_requests: int
    #: KV bytes copied to host memory and back (preemption by swap), the seconds the copies
    #: added to the steps, and the tokens computed again (lost to a preemption by recompute)
    swapped_out_bytes: int
    swapped_in_bytes: int
    swap_time: float
    recomputed_tokens: int
    #: prompt tokens served from the prefix cache / prompt tokens
    prefix_hit_rate: float
    #: prompt tokens loaded from the KV tiers at first admission / prompt tokens, the seconds
    #: the tiers' loads added to the steps, and what each tier did (empty without tiers)
    tier_hit_rate: float
    tier_time: float
    tiers: tuple[TierSummary, ...]
    steps: int
    mean_step_time: float
    mean_batch_size: float
    #: per priority value, lowest (served first) first; empty when the requests carry none
    by_priority: tuple[PriorityClass, ...] = ()


@dataclass(frozen=True, eq=False)
class ServeResult:
    """The outcome of one serving run: the ``requests``, the engine's ``config`` and
    ``num_blocks``, per-request times (``admitted``, ``first_token``, ``finish``: seconds,
    numpy arrays in request order), ``preemptions`` and ``cached_tokens`` per request, and
    ``steps`` (:class:`Steps`). Latencies are derived: :attr:`ttft`, :attr:`tpot`,
    :attr:`e2e`, :attr:`queueing`."""

    requests: Requests
    config: Any
    num_blocks: int
    admitted: np.ndarray
    first_token: np.ndarray
    finish: np.ndarray
    preemptions: np.ndarray
    cached_tokens: np.ndarray
    tier_tokens: np.ndarray
    """Prompt tokens loaded from the KV tiers when each request was first scheduled."""
    steps: Steps
    record: Any = None
    """Every step's detail (:class:`~osbench.serve.run.StepRecord`) when the run was recorded
    (``record=True``), else None."""
    tier_blocks: np.ndarray = field(default_factory=lambda: np.zeros((0, 3), dtype=np.int64))
    """Per KV tier: blocks loaded from it, contents stored in it, of those the new ones."""
    alone_source: Optional[Callable[[], Optional[np.ndarray]]] = field(default=None, repr=False)
    """What computes :attr:`alone` on first use (:func:`osbench.serve.simulate` gives a second
    run, one request at a time, paid only when a slowdown is asked for), else None."""

    @functools.cached_property
    def alone(self) -> Optional[np.ndarray]:
        """Per request, its service time alone: E2E on the same engine with no other request in
        it and a cold prefix cache (:func:`osbench.serve.simulate` measures it), else None."""
        if self.alone_source is None:
            return None
        times = self.alone_source()
        return None if times is None else _alone(times, len(self.requests))

    @classmethod
    def from_run(
        cls,
        run: RawRun,
        requests: Requests,
        config: Any,
        num_blocks: Optional[int] = None,
        alone: Union[np.ndarray, Callable[[], Optional[np.ndarray]], None] = None,
    ) -> ServeResult:
        """Check an engine's raw ``run`` against the ``requests`` it served and wrap it.
        ``num_blocks``: the KV pool's size, ``config.num_blocks`` when None. Every request
        must have finished, its times in order: ``arrival <= admitted <= first_token <=
        finish``. ``alone``: each request's service time alone (positive seconds), for
        :attr:`slowdown`, or a function that computes them (or None) when first asked."""
        if not isinstance(requests, Requests):
            raise ArgumentTypeError(
                f"requests={requests!r:.60} is not accepted: it must be the Requests the engine ran"
            )
        if num_blocks is None:
            num_blocks = getattr(config, "num_blocks", None)
        if isinstance(num_blocks, bool) or not isinstance(num_blocks, (int, np.integer)) or num_blocks < 1:
            raise ArgumentError(f"num_blocks={num_blocks!r} is not accepted: the KV pool's size, a positive integer")
        n = len(requests)
        per_request = {name: _column(run, "run", name, np.float64, n) for name in REQUEST_TIMES}
        per_request.update({name: _column(run, "run", name, np.int64, n) for name in REQUEST_COUNTS})
        if not hasattr(run, "steps"):
            raise ArgumentTypeError("run is not accepted: it has no 'steps' (an engine's EngineRun has them)")
        raw_steps = run.steps
        m = len(np.asarray(getattr(raw_steps, "start", [])))
        steps = Steps(
            **{
                name: _column(raw_steps, "run.steps", name, np.float64 if name in STEP_TIMES else np.int64, m)
                for name in STEP_FIELDS
            }
        )
        chain = [("arrival", requests.arrival)] + [(name, per_request[name]) for name in REQUEST_TIMES]
        for (a_name, a), (b_name, b) in zip(chain, chain[1:]):
            bad = ~(a <= b)  # NaN (never happened) fails too
            if bad.any():
                i = int(np.argmax(bad))
                raise ArgumentError(
                    f"run.{b_name}[{i}]={b[i].item()!r} is not accepted: request {i} needs {a_name} <= {b_name} "
                    f"({a_name}={a[i].item()!r}); did it finish?"
                )
        source: Optional[Callable[[], Optional[np.ndarray]]] = None
        if callable(alone):
            source = alone
        elif alone is not None:
            checked = _alone(alone, n)
            source = lambda: checked  # noqa: E731
        return cls(
            requests,
            config,
            int(num_blocks),
            steps=steps,
            record=getattr(run, "record", None),
            tier_blocks=_tier_blocks(run, config),
            alone_source=source,
            **per_request,
        )

    # ------------------------------------------------------------------ latencies

    @property
    def arrival(self) -> np.ndarray:
        return self.requests.arrival

    @property
    def ttft(self) -> np.ndarray:
        """Time to first token: ``first_token - arrival``."""
        return np.asarray(self.first_token - self.arrival)

    @property
    def tpot(self) -> np.ndarray:
        """Time per output token after the first (the mean inter-token time):
        ``(finish - first_token) / (output_len - 1)``; nan for one-token outputs."""
        gaps = self.requests.output_len - 1
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(gaps > 0, (self.finish - self.first_token) / np.maximum(gaps, 1), math.nan)

    @property
    def e2e(self) -> np.ndarray:
        """End-to-end latency: ``finish - arrival``."""
        return np.asarray(self.finish - self.arrival)

    @property
    def queueing(self) -> np.ndarray:
        """Time waiting before first being scheduled: ``admitted - arrival``."""
        return np.asarray(self.admitted - self.arrival)

    @property
    def slowdown(self) -> np.ndarray:
        """E2E over the request's service time alone (:attr:`alone`): 1 when nothing delayed
        it; nan without the alone times."""
        if self.alone is None:
            return np.full(len(self.requests), math.nan)
        return np.asarray(self.e2e / self.alone)

    def length_class(self) -> np.ndarray:
        """Each request's output-length class, an index into :data:`LENGTH_CLASSES`: 0 up to
        the workload's first output-length tercile, 2 above the second, 1 between."""
        out = self.requests.output_len
        if len(out) == 0:
            return np.zeros(0, dtype=np.int64)
        edges = np.percentile(out, [100 / 3, 200 / 3])
        return np.searchsorted(edges, out, side="left").astype(np.int64)

    @property
    def duration(self) -> float:
        """Seconds from the first arrival to the last finish (0 without requests)."""
        if len(self.requests) == 0:
            return 0.0
        return float(self.finish.max() - self.arrival[0])

    # ------------------------------------------------------------------ summary

    def summary(self, slo_ttft: Optional[float] = None, slo_tpot: Optional[float] = None) -> ServeSummary:
        """Throughput, TTFT/TPOT/E2E/queueing (mean, p50, p90, p99), goodput at the SLOs
        given (seconds; None: not required), KV utilisation, preemptions, swapped bytes and
        recomputed tokens, prefix hit rate."""
        for name, value in (("slo_ttft", slo_ttft), ("slo_tpot", slo_tpot)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0):
                raise ArgumentError(f"{name}={value!r} is not accepted: a positive number of seconds, or None")
        n, span = len(self.requests), self.duration
        ttft, tpot = self.ttft, self.tpot
        met = np.ones(n, dtype=bool)
        if slo_ttft is not None:
            met &= ttft <= slo_ttft
        if slo_tpot is not None:
            met &= np.isnan(tpot) | (tpot <= slo_tpot)
        steps = self.steps
        busy = float(steps.duration.sum())
        used = steps.blocks_used.astype(np.float64)

        def per_second(count: int) -> float:
            return count / span if span > 0 else math.nan

        prompt_tokens = int(self.requests.prompt_len.sum())
        slowdown, classes = self.slowdown, self.length_class()
        return ServeSummary(
            requests=n,
            duration=span,
            request_throughput=per_second(n),
            output_throughput=per_second(int(self.requests.output_len.sum())),
            ttft=Stats.of(ttft),
            tpot=Stats.of(tpot),
            e2e=Stats.of(self.e2e),
            queueing=Stats.of(self.queueing),
            max_queueing=float(self.queueing.max()) if n else math.nan,
            slowdown=Stats.of(slowdown),
            slowdown_short=Stats.of(slowdown[classes == 0]),
            slowdown_medium=Stats.of(slowdown[classes == 1]),
            slowdown_long=Stats.of(slowdown[classes == 2]),
            slo_ttft=None if slo_ttft is None else float(slo_ttft),
            slo_tpot=None if slo_tpot is None else float(slo_tpot),
            slo_met=int(met.sum()),
            slo_attainment=float(met.mean()) if n else math.nan,
            goodput=per_second(int(met.sum())),
            kv_utilization=float((used * steps.duration).sum() / busy / self.num_blocks) if busy > 0 else math.nan,
            kv_utilization_peak=float(used.max() / self.num_blocks) if len(steps) else math.nan,
            num_blocks=self.num_blocks,
            preemptions=int(self.preemptions.sum()),
            preempted_requests=int((self.preemptions > 0).sum()),
            swapped_out_bytes=int(steps.swap_out_bytes.sum()),
            swapped_in_bytes=int(steps.swap_in_bytes.sum()),
            swap_time=float(steps.swap_time.sum()),
            recomputed_tokens=int(steps.recomputed_tokens.sum()),
            prefix_hit_rate=int(self.cached_tokens.sum()) / prompt_tokens if prompt_tokens else math.nan,
            tier_hit_rate=int(self.tier_tokens.sum()) / prompt_tokens if prompt_tokens else math.nan,
            tier_time=float(steps.tier_time.sum()),
            tiers=self._tiers(),
            steps=len(steps),
            mean_step_time=busy / len(steps) if len(steps) else math.nan,
            mean_batch_size=float(steps.num_seqs.mean()) if len(steps) else math.nan,
            by_priority=self._by_priority(slowdown),
        )

    def _tiers(self) -> tuple[TierSummary, ...]:
        """:attr:`ServeSummary.tiers`: each KV tier of the configuration, with what it did."""
        tiers = getattr(self.config, "kv_tiers", ())
        block_bytes = getattr(self.config, "kv_block_bytes", 0)
        return tuple(
            TierSummary(
                t.medium, t.policy, t.gib, t.blocks(block_bytes), int(hits), int(hits) * block_bytes, int(st), int(ins)
            )
            for t, (hits, st, ins) in zip(tiers, self.tier_blocks.tolist())
        )

    def _by_priority(self, slowdown: np.ndarray) -> tuple[PriorityClass, ...]:
        """:attr:`ServeSummary.by_priority`: the figures of each priority's requests."""
        priority = self.requests.priority
        if priority is None:
            return ()
        queueing, e2e = self.queueing, self.e2e
        out = []
        for value in np.unique(priority):
            mine = priority == value
            out.append(
                PriorityClass(
                    priority=int(value),
                    requests=int(mine.sum()),
                    e2e=Stats.of(e2e[mine]),
                    queueing=Stats.of(queueing[mine]),
                    max_queueing=float(queueing[mine].max()),
                    slowdown=Stats.of(slowdown[mine]),
                )
            )
        return tuple(out)

    def to_dict(self) -> dict[str, Any]:
        """Everything as plain Python: the configuration, per-request and per-step lists, and
        the summary (without SLOs)."""
        config = self.config
        if hasattr(config, "to_dict"):
            config = config.to_dict()
        elif dataclasses.is_dataclass(config) and not isinstance(config, type):
            config = dataclasses.asdict(config)
        return {
            "requests": self.requests.to_dict(),
            "config": config,
            "num_blocks": self.num_blocks,
            "arrival": self.arrival.tolist(),
            "admitted": self.admitted.tolist(),
            "first_token": self.first_token.tolist(),
            "finish": self.finish.tolist(),
            "preemptions": self.preemptions.tolist(),
            "cached_tokens": self.cached_tokens.tolist(),
            "steps": self.steps.to_dict(),
            "summary": self.summary().to_dict(),
        }


def _alone(value: Any, n: int) -> np.ndarray:
    """The alone times: ``n`` positive finite seconds."""
    arr = np.asarray(value)
    if arr.ndim != 1 or len(arr) != n or (arr.size and arr.dtype.kind not in "fiu"):
        raise ArgumentError(f"alone is not accepted: it must hold {n} numbers (seconds), one per request")
    arr = np.array(arr, dtype=np.float64)
    bad = ~(arr > 0) | ~np.isfinite(arr)
    if bad.any():
        i = int(np.argmax(bad))
        raise ArgumentError(f"alone[{i}]={arr[i].item()!r} is not accepted: it must be a finite number of seconds > 0")
    arr.setflags(write=False)
    return arr


__all__ = ["LENGTH_CLASSES", "PriorityClass", "RawRun", "ServeResult", "ServeSummary", "Stats"]
