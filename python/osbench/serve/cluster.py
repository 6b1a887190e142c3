"""Replicas behind a router (lecture section 4.5: send a request to the machine that already
caches its prefix): :func:`simulate_cluster` serves requests on ``replicas`` identical engines
of one semantics, each with its own KV cache, driven on one clock by one deterministic event
loop (:mod:`osbench.serve.replicas`), each request routed when it is sent by a rule of
:mod:`osbench.serve.routers`, and returns a :class:`ClusterResult`: every replica's own
:class:`~osbench.serve.ServeResult`, the merged one, which replica served each request, the
loads the router saw over time and the prefix hit rates.

The facts it keeps (tests/serve/test_cluster.py): one replica, whatever the router, is the
single engine of :func:`osbench.serve.simulate` step for step; round-robin over ``N``
replicas serves every ``N``-th request exactly as ``N`` independent engines would.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional, Union

import numpy as np

from osbench import _checks
from osbench._record import Record
from osbench.errors import ArgumentError, ArgumentTypeError
from osbench.serve import native
from osbench.serve.models import GPU, Model
from osbench.serve.replicas import ClusterRun, drive_replicas
from osbench.serve.requests import Requests
from osbench.serve.result import ServeResult, ServeSummary
from osbench.serve.routers import router_of
from osbench.serve.run import Concurrency, EngineRun, Steps, check_concurrency
from osbench.serve.simulate import configure, sent_to

MAX_REPLICAS = 4096
"""The most replicas accepted."""


@dataclass(frozen=True)
class ClusterSummary(Record):
    """Figures of one cluster run (:meth:`ClusterResult.summary`)."""

    replicas: int
    router: str
    #: every request as one run (latencies, goodput...; KV utilisation: a replica's pool, over
    #: the busy time of every replica)
    merged: ServeSummary
    #: each replica's own run
    per_replica: tuple[ServeSummary, ...]
    requests_per_replica: tuple[int, ...]
    #: prompt tokens served from a prefix cache / prompt tokens: overall and per replica
    prefix_hit_rate: float
    prefix_hit_rates: tuple[float, ...]
    #: the load imbalance the router saw at each arrival (:attr:`ClusterResult.imbalance`):
    #: its mean, 99th percentile and peak
    imbalance_mean: float
    imbalance_p99: float
    imbalance_max: float


@dataclass(frozen=True, eq=False)
class ClusterResult:
    """The outcome of one cluster run: the ``requests`` (their arrivals as sent), the engine
    ``config`` every replica has, the ``router``, which ``replica`` served each request (int64
    per request), the ``load`` the router saw (outstanding requests per replica at each
    arrival, an (n, replicas) int64 array), each replica's own :class:`ServeResult`
    (``replicas``: its requests in the order it received them) and ``merged``, every request
    as one :class:`ServeResult` (its steps those of every replica, in order of start)."""

    requests: Requests
    config: Any
    router: str
    replica: np.ndarray
    load: np.ndarray
    replicas: tuple[ServeResult, ...]
    merged: ServeResult

    @classmethod
    def from_run(
        cls, run: ClusterRun, requests: Requests, config: Any, router: str, num_blocks: Optional[int] = None
    ) -> ClusterResult:
        """Wrap a loop's raw ``run`` over ``requests`` (as sent), each replica's checked as
        :meth:`ServeResult.from_run` checks one engine's (``num_blocks``: each replica's pool,
        as that method takes it)."""
        per = []
        rows_of = [np.flatnonzero(run.replica == k) for k in range(len(run.runs))]
        for rows, own in zip(rows_of, run.runs):
            per.append(ServeResult.from_run(own, requests[rows], config, num_blocks))
        n = len(requests)
        merged_columns: dict[str, np.ndarray] = {}
        counts = ("preemptions", "cached_tokens", "tier_tokens")
        for name in ("arrival", "admitted", "first_token", "finish", *counts):
            column = np.zeros(n, dtype=np.int64 if name in counts else np.float64)
            for rows, own in zip(rows_of, run.runs):
                column[rows] = getattr(own, name)
            merged_columns[name] = column
        steps = Steps.merged(run.runs)
        # Every replica has the same tiers: what they did, summed.
        tier_blocks = sum((own.tier_blocks for own in run.runs), np.zeros_like(run.runs[0].tier_blocks))
        merged_run = EngineRun(**merged_columns, steps=steps, record=None, tier_blocks=tier_blocks)
        merged = ServeResult.from_run(merged_run, requests, config, num_blocks)
        return cls(requests, config, router, run.replica, run.load, tuple(per), merged)

    @property
    def imbalance(self) -> np.ndarray:
        """At each arrival, the busiest replica's outstanding requests over the mean (1: even;
        1 when nothing is outstanding), as the router saw them."""
        load = self.load.astype(np.float64)
        if load.size == 0:
            return np.zeros(0)
        mean = load.mean(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(mean > 0, load.max(axis=1) / np.where(mean > 0, mean, 1.0), 1.0)

    def imbalance_over_time(self, spans: int = 60) -> tuple[np.ndarray, np.ndarray]:
        """The imbalance (:attr:`imbalance`) over time: the run's arrivals cut into ``spans``
        equal stretches of time, from the first arrival to the last, and the mean imbalance at
        the arrivals of each (NaN where none arrived). Returns (each stretch's middle in seconds
        from the first arrival, its mean)."""
        spans = _checks.positive_int("spans", spans, maximum=1 << 20)
        imbalance = self.imbalance
        arrival = self.requests.arrival
        if imbalance.size == 0:
            return np.zeros(0), np.zeros(0)
        start, width = float(arrival[0]), max(float(arrival[-1] - arrival[0]), 1e-300) / spans
        which = np.minimum(((arrival - start) / width).astype(np.int64), spans - 1)
        counts = np.bincount(which, minlength=spans)
        sums = np.bincount(which, weights=imbalance, minlength=spans)
        with np.errstate(invalid="ignore", divide="ignore"):
            means = np.where(counts > 0, sums / np.where(counts > 0, counts, 1), np.nan)
        return (np.arange(spans) + 0.5) * width, means

    def summary(self, slo_ttft: Optional[float] = None, slo_tpot: Optional[float] = None) -> ClusterSummary:
        """The merged and per-replica summaries (:meth:`ServeResult.summary`, at the SLOs
        given), requests per replica, prefix hit rates and load imbalance."""
        merged = self.merged.summary(slo_ttft, slo_tpot)
        per = tuple(r.summary(slo_ttft, slo_tpot) for r in self.replicas)
        imbalance = self.imbalance
        stats = (
            (float(imbalance.mean()), float(np.percentile(imbalance, 99)), float(imbalance.max()))
            if imbalance.size
            else (math.nan, math.nan, math.nan)
        )
        return ClusterSummary(
            replicas=len(self.replicas),
            router=self.router,
            merged=merged,
            per_replica=per,
            requests_per_replica=tuple(len(r.requests) for r in self.replicas),
            prefix_hit_rate=merged.prefix_hit_rate,
            prefix_hit_rates=tuple(s.prefix_hit_rate for s in per),
            imbalance_mean=stats[0],
            imbalance_p99=stats[1],
            imbalance_max=stats[2],
        )


def pool_size(name: str, value: Any, what: str) -> int:
    """A number of engines, ``name=value``: a positive integer up to :data:`MAX_REPLICAS`
    (``what`` they are, for the error)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ArgumentTypeError(f"{name}={value!r} is not accepted: it must be a positive integer ({what})")
    if not 1 <= value <= MAX_REPLICAS:
        raise ArgumentError(
            f"{name}={value!r} is not accepted: it must be a positive integer up to {MAX_REPLICAS} ({what})"
        )
    return value


def simulate_cluster(
    requests: Requests,
    *,
    replicas: int,
    router: Any = "round-robin",
    engine: str = "native",
    semantics: str = "vllm",
    model: Union[str, Model, None] = None,
    gpu: Union[str, GPU, None] = None,
    tp: Optional[int] = None,
    step_time: Any = None,
    num_blocks: Optional[int] = None,
    record: bool = False,
    concurrency: Optional[Concurrency] = None,
    **config: Any,
) -> ClusterResult:
    """Serve ``requests`` on ``replicas`` identical engines behind ``router`` and return the
    :class:`ClusterResult`.

    - ``replicas``: how many engines, each with its own KV pool of ``num_blocks`` (the
      model's on the GPU by default) and its own scheduler of ``semantics``.
    - ``router``: a name of :data:`osbench.serve.routers.ROUTERS` (``round-robin``,
      ``random``, ``least-requests``, ``least-tokens``, ``prefix-aware``, ``kv-aware``), a
      router object with its parameters (``osbench.serve.routers.PrefixAware(cache_threshold=
      0.5)``), or a callable ``rule(request, replicas) -> replica index``; what it sees and
      when: :mod:`osbench.serve.routers.base`.
    - ``concurrency``: closed-loop clients over the whole cluster (as in :func:`simulate`).
    - ``engine``: ``"native"`` (Rust, the default; the routers of ``ROUTERS``) or
      ``"reference"`` (the Python loop of :mod:`osbench.serve.replicas`, which also runs a
      rule of your own); the two give equal results. SGLang's semantics
      (``semantics="sglang"``) runs its replicas on the reference loop only.
    - the other arguments are :func:`osbench.serve.simulate`'s, with the same defaults; each
      replica's run with ``record=True`` keeps its steps' detail, numbered by its own requests.

    >>> import osbench as ob
    >>> reqs = ob.serve.Requests.poisson(40, rate=20.0, seed=1)
    >>> r = ob.serve.simulate_cluster(reqs, replicas=2, router="least-requests", model="llama-3-8b", gpu="h100")
    >>> r.summary().requests_per_replica
    (21, 19)
    """
    engine = _checks.engine(engine)
    replicas = pool_size("replicas", replicas, "engines behind the router")
    rule = router_of(router)
    module, cfg, step_time = configure(
        requests,
        "simulate_cluster",
        semantics=semantics,
        model=model,
        gpu=gpu,
        tp=tp,
        step_time=step_time,
        num_blocks=num_blocks,
        config=config,
        takes="replicas, router, engine, semantics, model, gpu, tp, step_time, num_blocks, record, concurrency",
        concurrency=concurrency,
    )
    concurrency = check_concurrency(concurrency)
    record = _checks.flag("record", record)
    if engine == "native":
        if semantics != "vllm":
            raise ArgumentError(
                f"semantics={semantics!r} is not accepted by simulate_cluster with engine='native': "
                "the native cluster runs vLLM's semantics; use engine='reference'"
            )
        run = native.run_cluster(requests, cfg, step_time, replicas, rule, record=record, concurrency=concurrency)
    else:
        if not callable(getattr(module, "stepper", None)):
            raise ArgumentError(
                f"semantics={semantics!r} is not accepted by simulate_cluster: it has no steppable engine"
            )
        run = drive_replicas(
            requests,
            [module.stepper(requests, cfg) for _ in range(replicas)],
            rule,
            step_time,
            usable_blocks=cfg.usable_blocks,
            block_size=cfg.block_size,
            record=record,
            concurrency=concurrency,
        )
    # Latencies count from when each request was sent.
    sent = requests if concurrency is None else sent_to(requests, run.replica, run.runs)
    return ClusterResult.from_run(run, sent, cfg, repr(rule), module.pool_blocks(cfg))


__all__ = ["MAX_REPLICAS", "ClusterResult", "ClusterSummary", "pool_size", "simulate_cluster"]
