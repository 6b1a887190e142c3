"""Capacity planning: how many GPUs serve this trace within this SLO. :func:`plan` finds the
smallest deployment of a model on a GPU that meets the SLO at a percentile when it serves the
requests, with the goodput per GPU of every candidate it tried and the rate at which each one
saturates (its knee), and returns a :class:`Plan` (a table, a figure, the verdict).

**Deployments.** A candidate is a :class:`Replicas`: ``replicas`` engines of ``tp`` GPUs each
behind the router (:func:`osbench.serve.simulate_cluster`); or, with ``disaggregated=True``, a
:class:`Split`: ``prefill`` prefill and ``decode`` decode instances of ``tp`` GPUs each, the KV
moving over ``kv_link`` (:func:`osbench.serve.simulate_disaggregated`). A deployment kind is a small frozen
type with ``kind``, ``gpus``, ``label``, ``family`` (what its search holds fixed), ``size`` (what
it grows), ``smaller()``, ``to_dict()`` and ``serve(requests, options)``, found by its kind in
:data:`DEPLOYMENTS`.

**The search, and what it assumes.** It assumes two monotonicities, and checks them on every
candidate it tried (:attr:`Plan.violations` lists any pair that contradicts them): at a given
tensor-parallel degree, a deployment that meets the SLO still meets it with more replicas (the
same requests spread over more engines); and a deployment that meets it at a rate meets it at
every lower rate (the same arrivals, further apart). Neither is a theorem: a router's choices
change with the number of replicas, and a burst can fall differently on another rate. Per degree
in ``tp`` it runs an exponential search over replica counts: from one replica up, the step
doubling, but jumping further where a miss's throughput (an overloaded cluster finishes requests
at its capacity) says more replicas are needed (``replicas x rate / throughput``); once a count
meets, bisection between it and the largest count that missed. It ends on the smallest count that
meets, the count below it tried and missed. The search of each degree stops at ``max_gpus`` and at
the fewest GPUs any degree has met the SLO with so far.

**Splits.** The split search assumes that a split that meets the SLO still meets it with more
instances in either pool (checked as above: :attr:`Plan.violations` names a split that meets
and one that holds as many instances in each pool and misses), so that "some split of ``n``
instances meets" is monotone in ``n``; it searches ``n`` as it searches replicas (from two
up). The splits of one ``n`` are not monotone in the prefill share, and it does not scan them
all: it bisects ``P`` in ``[1, n - 1]`` by the side that misses (TTFT alone -> more prefill,
TPOT alone -> more decode) and takes ``n`` as missed when both miss or the bracket empties,
assuming then that no split of ``n`` meets (the tests check it by simulating every split of
the count below the answer). Ties at the fewest GPUs: the highest knee, the lowest degree, the
most goodput per GPU. The knee is searched for splits as for replicas (``knee=False`` skips
it).

A cell (one deployment at one rate) is
simulated once: a search asking for it again reads it, and with ``out=`` every cell is written to
a results file as it finishes, which a rerun reads instead of simulating.

**The knee.** For every candidate tried, the highest rate at which it still meets the SLO: the
requests rescaled (:meth:`Requests.at_rate`) to rates on a geometric grid around their own rate
(:data:`KNEE_STEPS` steps a doubling, from 1/64 to 8 times it), searched the same way (the
requests' own rate is the run the replica search made; a miss's throughput says how far down to
look), and the knee is :func:`osbench.serve.slo.highest_within_slo` of the rates tried. The knee
lies between it and the lowest rate tried that missed (:attr:`Candidate.knee_above`).

**Running the cells.** The searches advance in rounds: each round, every search not done asks
for its next cell, and the round's cells run at once on the sweep runner (:mod:`osbench._sweep`:
a local process pool by default, a Dask cluster with ``executor="dask"`` or a scheduler's
address, threads with ``executor="threads"``: the native engine releases the GIL, or any
``concurrent.futures.Executor``). What a search asks depends only on the results it had, so the
plan is the same whichever executor runs it.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import copy
import dataclasses
import hashlib
import json
import math
import os
import pickle
import tempfile
from collections.abc import Generator, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, ClassVar, Optional, Union

import numpy as np

from osbench import _checks, _files, _sweep
from osbench._format import duration, number, rate
from osbench._optional import require
from osbench._record import Record
from osbench._table import Table
from osbench.errors import ArgumentError, ArgumentTypeError
from osbench.serve.cluster import MAX_REPLICAS, ClusterResult, simulate_cluster
from osbench.serve.disagg import DisaggResult, simulate_disaggregated
from osbench.serve.links import link_of
from osbench.serve.models import GPU, Model
from osbench.serve.requests import Requests
from osbench.serve.routers import router_of
from osbench.serve.simulate import STEP_TIME_NAMES, configure
from osbench.serve.slo import RATE, highest_within_slo, label, within_slo

KNEE_STEPS = 8
"""Rates of the knee's grid a doubling: each ``2 ** (1 / 8)``, 9% above the one below."""

KNEE_RANGE = (-6 * KNEE_STEPS, 3 * KNEE_STEPS)
"""The knee's grid, in steps about the requests' own rate: from 1/64 of it to 8 times it."""

DEFAULT_ROUTER = "least-tokens"
"""The router of a plan by default: a load-aware rule, as a deployment would run (round-robin
spreads a burst's long prompts blindly)."""


# --- deployments ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Replicas:
    """``replicas`` identical engines of ``tp`` GPUs each behind the router."""

    kind: ClassVar[str] = "replicas"
    replicas: int
    tp: int

    @property
    def gpus(self) -> int:
        return self.replicas * self.tp

    @property
    def label(self) -> str:
        """``4 x TP2``: replicas by tensor-parallel degree."""
        return f"{self.replicas} x TP{self.tp}"

    @property
    def family(self) -> tuple[Any, ...]:
        """What a search holds fixed while it grows the deployment (its degree): the candidates
        the monotonicity check compares are those of one family, by :attr:`size`."""
        return (self.kind, self.tp)

    @property
    def size(self) -> int:
        """What the search grows: the replicas."""
        return self.replicas

    def smaller(self) -> Optional[Replicas]:
        """The next smaller deployment of the family (None below one replica)."""
        return Replicas(self.replicas - 1, self.tp) if self.replicas > 1 else None

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "replicas": self.replicas, "tp": self.tp}

    def serve(self, requests: Requests, options: dict[str, Any]) -> ClusterResult:
        """The requests served on this deployment with ``options`` (:func:`simulate_cluster`'s,
        its ``replicas`` and ``tp`` aside)."""
        return simulate_cluster(requests, replicas=self.replicas, tp=self.tp, **options)

    def covers(self, other: Any) -> bool:
        """Whether this deployment holds at least ``other``'s engines of its family (the
        monotonicity the search assumes: it meets the SLO if ``other`` does)."""
        return isinstance(other, Replicas) and other.tp == self.tp and self.replicas >= other.replicas


@dataclass(frozen=True)
class Split:
    """``prefill`` prefill instances and ``decode`` decode instances of ``tp`` GPUs each, the KV
    moving over ``kv_link`` (:func:`osbench.serve.simulate_disaggregated`)."""

    kind: ClassVar[str] = "split"
    prefill: int
    decode: int
    tp: int
    kv_link: str

    @property
    def gpus(self) -> int:
        return (self.prefill + self.decode) * self.tp

    @property
    def label(self) -> str:
        """``2P:3D x TP1``: prefill and decode instances by tensor-parallel degree."""
        return f"{self.prefill}P:{self.decode}D x TP{self.tp}"

    @property
    def family(self) -> tuple[Any, ...]:
        return (self.kind, self.tp, self.kv_link)

    @property
    def size(self) -> int:
        """What the search grows: the instances of both pools."""
        return self.prefill + self.decode

    def smaller(self) -> Optional[Split]:
        """None: a split has no single next smaller deployment (every split of one instance fewer
        is one; :attr:`Plan.violations` and the tests compare them all)."""
        return None

    def covers(self, other: Any) -> bool:
        """Whether this split holds at least ``other``'s instances in each pool (the search
        assumes more of either pool does not miss an SLO a smaller split meets)."""
        return (
            isinstance(other, Split)
            and self.family == other.family
            and self.prefill >= other.prefill
            and self.decode >= other.decode
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "prefill": self.prefill,
            "decode": self.decode,
            "tp": self.tp,
            "kv_link": self.kv_link,
        }

    def serve(self, requests: Requests, options: dict[str, Any]) -> DisaggResult:
        """The requests served on this split with ``options``: the plan's router picks the
        instance in both pools (each pool its own copy)."""
        return simulate_disaggregated(
            requests,
            prefill=self.prefill,
            decode=self.decode,
            tp=self.tp,
            kv_link=self.kv_link,
            decode_router=copy.deepcopy(options["router"]),
            **options,
        )


Deployment = Union[Replicas, Split]
"""Every deployment kind."""

DEPLOYMENTS: dict[str, type[Deployment]] = {Replicas.kind: Replicas, Split.kind: Split}
"""The deployment kinds by name."""


def deployment_of(spec: dict[str, Any]) -> Deployment:
    """A deployment from its :meth:`to_dict`."""
    fields = {k: v for k, v in spec.items() if k != "kind"}
    return DEPLOYMENTS[spec["kind"]](**fields)


# --- one cell: a deployment at a rate ------------------------------------------------------------


def _at(values: np.ndarray, percentile: float) -> float:
    """The ``percentile`` of the values measured (NaN: none was)."""
    values = values[~np.isnan(values)]
    return float(np.percentile(values, percentile)) if values.size else math.nan


def run_cell(cell: dict[str, Any]) -> dict[str, Any]:
    """Serve one cell (in a worker): the requests at the cell's rate (step 0: as given) on its
    deployment, and the figures the search and the plan read, as JSON keeps them."""
    reqs: Requests = cell["requests"]
    if cell["step"] != 0:
        reqs = reqs.at_rate(cell["rate"])
    result = deployment_of(cell["deployment"]).serve(reqs, cell["options"])
    merged = result.merged
    s = result.summary(cell["slo_ttft"], cell["slo_tpot"])
    p = label(cell["percentile"])
    record = {
        "key": cell["key"],
        "deployment": cell["deployment"],
        "step": cell["step"],
        RATE: cell["rate"],
        f"TTFT {p}": _at(merged.ttft, cell["percentile"]),
        f"TPOT {p}": _at(merged.tpot, cell["percentile"]),
        "throughput": s.merged.request_throughput,
        "goodput": s.merged.goodput,
        "within the SLO": s.merged.slo_attainment,
        "prefix hit rate": s.prefix_hit_rate,
        "imbalance p99": getattr(s, "imbalance_p99", math.nan),  # a split has no one router's imbalance
        "steps": len(merged.steps),
    }
    return dict(json.loads(json.dumps(record)))  # the same values whether a worker's or a file's


# --- the result ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Candidate(Record):
    """One deployment tried: whether it meets the SLO on the requests as given, its latencies at
    the plan's percentile (seconds), the share of requests within the SLO, its goodput (requests/s
    within the SLO), throughput, prefix hit rate and the router's load imbalance (p99); its knee
    (requests/s: the highest rate tried at which it meets the SLO; None if it missed at every
    rate tried) and ``knee_above`` (the lowest rate tried at which it missed; None if none did);
    ``rates``: every (rate, meets) tried, by rate (with ``knee=False``, the requests' own rate
    alone)."""

    deployment: Deployment
    meets: bool
    ttft: float
    tpot: float
    within_slo: float
    goodput: float
    throughput: float
    prefix_hit_rate: float
    imbalance_p99: float
    knee: Optional[float]
    knee_above: Optional[float]
    rates: tuple[tuple[float, bool], ...]

    @property
    def gpus(self) -> int:
        return self.deployment.gpus

    @property
    def goodput_per_gpu(self) -> float:
        return self.goodput / self.gpus

    @property
    def knee_per_gpu(self) -> Optional[float]:
        return None if self.knee is None else self.knee / self.gpus

    def to_dict(self) -> dict[str, Any]:
        out = super().to_dict()
        out["deployment"] = self.deployment.to_dict()
        out["gpus"] = self.gpus
        return out


@dataclass(frozen=True)
class Plan:
    """What :func:`plan` found: ``best``, the smallest deployment that meets the SLO (None when
    no deployment up to ``max_gpus`` does), every candidate tried (by GPUs, then degree),
    ``violations`` (pairs of candidates that contradict the search's monotonicity assumptions;
    empty when the candidates bear them out) and ``simulations`` (the cells the searches used)."""

    requests: str
    count: int
    rate: float
    slo_ttft: Optional[float]
    slo_tpot: Optional[float]
    percentile: float
    model: str
    gpu: str
    router: str
    max_gpus: int
    tp: tuple[int, ...]
    step_time: str
    """The cells' clock, by name (``"roofline"``, ``"measured"``)."""
    candidates: tuple[Candidate, ...]
    best: Optional[Candidate]
    violations: tuple[str, ...]
    simulations: int

    @property
    def meets(self) -> bool:
        """Whether some deployment up to ``max_gpus`` meets the SLO."""
        return self.best is not None

    def slo_words(self) -> str:
        """``TTFT p99 at most 2 s and TPOT p99 at most 100 ms``."""
        p = label(self.percentile)
        parts = [f"{name} {p} at most {duration(v)}" for name, v in (("TTFT", self.slo_ttft), ("TPOT", self.slo_tpot))]
        return " and ".join(part for part, v in zip(parts, (self.slo_ttft, self.slo_tpot)) if v is not None)

    def verdict(self) -> str:
        """The answer in one sentence."""
        what = f"{self.model} on {self.gpu} behind {self.router}"
        if self.best is None:
            return (
                f"No deployment up to max_gpus={self.max_gpus} meets {self.slo_words()} on {number(self.count)} "
                f"requests at {rate(self.rate)} ({what}, tp {', '.join(map(str, self.tp))})."
            )
        b = self.best
        below = next((c for c in self.candidates if c.deployment == b.deployment.smaller()), None)
        return (
            f"{b.deployment.label} ({b.gpus} GPU{'s' if b.gpus != 1 else ''}) is the smallest deployment that meets {self.slo_words()} on "
            f"{number(self.count)} requests at {rate(self.rate)} ({what}): TTFT {label(self.percentile)} "
            f"{duration(b.ttft)}, TPOT {label(self.percentile)} {duration(b.tpot)}"
            + (
                f"; {below.deployment.label} misses it (TTFT {label(self.percentile)} {duration(below.ttft)}, "
                f"TPOT {label(self.percentile)} {duration(below.tpot)})"
                if below is not None
                else self._smaller_splits(b)
            )
            + "."
        )

    def _smaller_splits(self, b: Candidate) -> str:
        """For a split answer: how many splits with fewer GPUs were tried (each missed)."""
        if not isinstance(b.deployment, Split):
            return ""
        fewer = [c for c in self.candidates if isinstance(c.deployment, Split) and c.gpus < b.gpus]
        return f"; the {len(fewer)} smaller split{'s' if len(fewer) != 1 else ''} tried miss it" if fewer else ""

    def table(self) -> Table:
        """Every candidate tried, the answer marked."""
        p = label(self.percentile)
        columns = [
            "deployment",
            "GPUs",
            "meets the SLO",
            f"TTFT {p}",
            f"TPOT {p}",
            "within the SLO",
            "goodput",
            "goodput per GPU",
            "knee",
            "knee per GPU",
        ]
        rows = []
        for c in self.candidates:
            knee: Any = c.knee
            if c.knee is None and c.rates and not any(ok for _, ok in c.rates):
                knee = f"< {rate(min(r for r, _ in c.rates))}"
            elif c.knee is not None and c.knee_above is None:
                knee = f">= {rate(c.knee)}"
            rows.append(
                [
                    c.deployment.label + (" (the answer)" if c is self.best else ""),
                    c.gpus,
                    "yes" if c.meets else "no",
                    c.ttft,
                    c.tpot,
                    c.within_slo,
                    c.goodput,
                    c.goodput_per_gpu,
                    knee,
                    c.knee_per_gpu if isinstance(knee, float) else "-",
                ]
            )
        units = {f"TTFT {p}": "s", f"TPOT {p}": "s", "within the SLO": "%", "goodput": "/s"}
        units |= {"goodput per GPU": "/s", "knee": "/s", "knee per GPU": "/s"}
        note = (
            f"{self.verdict()} Knee: the highest rate tried (the requests rescaled) at which the deployment still "
            f"meets the SLO. {number(self.simulations)} simulations."
            + (f" Not monotone: {'; '.join(self.violations)}." if self.violations else "")
        )
        return Table(
            f"Capacity plan: {self.slo_words()}",
            columns,
            rows,
            note=note,
            units=units,
            setup=(
                f"{self.requests}, {number(self.count)} requests at {rate(self.rate)}; {self.model} on {self.gpu}, "
                f"up to {self.max_gpus} GPUs, tp {', '.join(map(str, self.tp))}, {self.router}, "
                f"{self.step_time} step time"
            ),
            key_rows=[i for i, c in enumerate(self.candidates) if c is self.best] or None,
        )

    def figure(self, path: Union[str, os.PathLike[str], None] = None) -> bytes:
        """Goodput per GPU and knee of every candidate against its GPUs, one line per degree (a
        filled marker: meets the SLO), the requests' rate and the answer marked: PNG bytes, also
        written to ``path`` when given. Needs matplotlib."""
        matplotlib = require("matplotlib", "the plan's figure")
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.2))
        for i, t in enumerate(self.tp):
            mine = [c for c in self.candidates if c.deployment.tp == t]
            if not mine:
                continue
            color = f"C{i}"
            gpus = [c.gpus for c in mine]
            left.plot(gpus, [c.goodput_per_gpu for c in mine], color=color, linewidth=0.8, label=f"TP{t}")
            knees = [math.nan if c.knee is None else c.knee for c in mine]
            right.plot(gpus, knees, color=color, linewidth=0.8, label=f"TP{t}")
            for c in mine:
                face = color if c.meets else "none"
                left.plot([c.gpus], [c.goodput_per_gpu], "o", color=color, markerfacecolor=face)
                if c.knee is not None:
                    right.plot([c.gpus], [c.knee], "o", color=color, markerfacecolor=face)
        right.axhline(
            self.rate, color="gray", linestyle=":", linewidth=0.8, label=f"the requests' rate {rate(self.rate)}"
        )
        if self.best is not None:
            for ax in (left, right):
                ax.axvline(self.best.gpus, color="C3", linewidth=0.8, label=f"answer: {self.best.deployment.label}")
        left.set_ylabel("goodput per GPU (requests/s)")
        left.set_title(f"Goodput per GPU ({self.slo_words()})")
        right.set_ylabel("knee (requests/s)")
        right.set_title("Highest rate within the SLO")
        for ax in (left, right):
            ax.set_xlabel("GPUs")
            ax.grid(True, alpha=0.3)
            ax.legend(fontsize=7)
        fig.tight_layout()
        png = _files.figure_png(fig)
        if path is not None:
            _files.write_bytes(path, png)
        return png

    def to_dict(self) -> dict[str, Any]:
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        out["candidates"] = [c.to_dict() for c in self.candidates]
        out["best"] = None if self.best is None else self.best.to_dict()
        out["verdict"] = self.verdict()
        return out


# --- the search -------------------------------------------------------------------------------

Probe = Generator[int, tuple[bool, Optional[int]], Optional[int]]


def boundary(low: int, high: Callable[[], int], first: int, first_step: int) -> Probe:
    """The smallest integer in ``[low, high()]`` where a monotone predicate holds (it fails
    below, holds from there on), or None if it holds nowhere tried up to ``high()`` (read at
    each probe: a search that learns a bound elsewhere narrows it). A generator: it yields the
    integer to probe, starting with ``first``, and is sent ``(holds, hint)``, ``hint`` an
    estimate of the answer (or None). Exponential from ``first`` (steps of ``first_step``,
    doubling; a hint further along is taken), then bisection."""
    below, above = low - 1, None  # the largest known to fail, the smallest known to hold
    x, step = first, first_step
    while True:
        holds, hint = yield x
        if holds:
            above = x
        else:
            below = x
        top = high() if above is None else min(high(), above - 1)  # the largest still worth a probe
        if below + 1 > top:
            return above
        if above is None:  # failed only: go up
            x = below + step if hint is None else max(below + step, hint)
        elif below < low:  # held only: go down
            x = above - step if hint is None else min(above - step, hint)
        else:
            x = (below + above) // 2
        x = min(max(x, below + 1), top)
        step *= 2


class _Search:
    """The state the searches share: the cells known, the fewest GPUs found to meet the SLO."""

    def __init__(self, requests: Requests, base: dict[str, Any], base_key: str, max_gpus: int) -> None:
        self.requests = requests
        self.base = base
        self.base_key = base_key  # what identifies the options in a cell's key
        self.rate = requests.rate
        self.max_gpus = max_gpus
        self.best_gpus: Optional[int] = None
        self.records: dict[str, dict[str, Any]] = {}

    def cell(self, deployment: Deployment, step: int) -> dict[str, Any]:
        rate_ = self.rate if step == 0 else self.rate * 2.0 ** (step / KNEE_STEPS)
        spec = {"deployment": deployment.to_dict(), "step": step, "rate": rate_, **self.base}
        key = json.dumps({k: v for k, v in spec.items() if k != "options"} | {"options": self.base_key}, sort_keys=True)
        return {"key": key, "requests": self.requests, **spec}

    def meets(self, record: dict[str, Any]) -> bool:
        return within_slo(record, self.base["slo_ttft"], self.base["slo_tpot"], self.base["percentile"])

    def most_engines(self, tp: int) -> int:
        """The most engines of ``tp`` GPUs worth trying now: within ``max_gpus``, and within the
        GPUs of the best deployment found so far."""
        cap = self.max_gpus if self.best_gpus is None else min(self.max_gpus, self.best_gpus)
        return cap // tp

    def replicas(self, tp: int) -> Generator[tuple[Deployment, int], dict[str, Any], None]:
        """The replica search of one degree: yields (deployment, 0) cells, is sent their records."""

        probe = boundary(1, lambda: self.most_engines(tp), 1, 1)
        n = next(probe)
        while True:
            record = yield Replicas(n, tp), 0
            hint = None
            if record["throughput"] > 0:
                hint = math.ceil(n * self.rate / record["throughput"])
            try:
                n = probe.send((self.meets(record), hint))
            except StopIteration:
                return

    def misses(self, record: dict[str, Any]) -> tuple[bool, bool]:
        """Whether the record misses the TTFT SLO, and the TPOT SLO (an SLO not given: never)."""
        p = label(self.base["percentile"])
        out = []
        for name, slo in (("TTFT", self.base["slo_ttft"]), ("TPOT", self.base["slo_tpot"])):
            v = record[f"{name} {p}"]
            out.append(slo is not None and not (v <= slo))  # NaN (none measured): a miss
        return out[0], out[1]

    def splits(self, tp: int, kv_link: str) -> Generator[tuple[Deployment, int], dict[str, Any], None]:
        """The split search of one degree: over the instances ``n`` (both pools), the same
        exponential search and bisection as over replicas, on "some split of ``n`` meets the
        SLO"; for each ``n``, a bisection on the prefill instances ``P`` in ``[1, n - 1]`` by the
        side that misses: TTFT alone missed -> more prefill, TPOT alone -> more decode, both ->
        no split of ``n`` meets (taking from one pool for the other cannot mend both)."""

        probe = boundary(2, lambda: self.most_engines(tp), 2, 1)
        n = next(probe)
        while True:
            lo, hi, met, throughput = 1, n - 1, False, 0.0
            while lo <= hi:
                p = (lo + hi) // 2
                record = yield Split(p, n - p, tp, kv_link), 0
                throughput = max(throughput, record["throughput"])
                if self.meets(record):
                    met = True
                    break
                ttft, tpot = self.misses(record)
                if ttft and not tpot:
                    lo = p + 1
                elif tpot and not ttft:
                    hi = p - 1
                else:
                    break
            hint = math.ceil(n * self.rate / throughput) if throughput > 0 else None
            try:
                n = probe.send((met, hint))
            except StopIteration:
                return

    def knee(self, deployment: Deployment) -> Generator[tuple[Deployment, int], dict[str, Any], None]:
        """The knee search of one deployment, on the grid's steps (the first step missed)."""
        probe = boundary(KNEE_RANGE[0], lambda: KNEE_RANGE[1], 0, KNEE_STEPS)
        step = next(probe)
        while True:
            record = yield deployment, step
            missed = not self.meets(record)
            hint = None
            if missed and record["throughput"] > 0:
                hint = math.floor(KNEE_STEPS * math.log2(record["throughput"] / self.rate))
            try:
                step = probe.send((missed, hint))
            except StopIteration:
                return


def _tps(model: Model, tp: Any, max_gpus: int) -> tuple[int, ...]:
    if tp is None:
        degrees = [model.tp]
    elif isinstance(tp, (int, np.integer)) and not isinstance(tp, bool):
        degrees = [int(tp)]
    elif isinstance(tp, Iterable) and not isinstance(tp, (str, bytes)):
        degrees = _checks.int_list("tp", list(tp))
    else:
        raise ArgumentTypeError(f"tp={tp!r} is not accepted: a tensor-parallel degree, a set of them, or None")
    out = sorted({model.check_tp(t) for t in degrees})
    for t in out:
        if t > max_gpus:
            raise ArgumentError(
                f"tp={t} is not accepted with max_gpus={max_gpus}: one replica of it spans {t} GPUs, more than "
                "max_gpus allows"
            )
    return tuple(out)


def _fingerprint(requests: Requests) -> str:
    """What identifies the requests in a cell's key (their arrays hashed)."""
    h = hashlib.sha256()
    for arr in (
        requests.arrival,
        requests.prompt_len,
        requests.output_len,
        requests.priority,
        requests.predicted_output_len,
        requests.block_ids,
        requests.block_offsets,
    ):
        h.update(b"-" if arr is None else np.ascontiguousarray(arr).tobytes())
    h.update(str(requests.source_block).encode())
    return h.hexdigest()


def _name(preset: Union[str, Model, GPU]) -> str:
    return preset if isinstance(preset, str) else preset.name


def plan(
    requests: Requests,
    *,
    slo_ttft: Optional[float] = None,
    slo_tpot: Optional[float] = None,
    percentile: float = 99.0,
    model: Union[str, Model, None] = None,
    gpu: Union[str, GPU, None] = None,
    max_gpus: int = 64,
    tp: Union[int, Iterable[int], None] = None,
    router: Any = DEFAULT_ROUTER,
    engine: str = "native",
    semantics: str = "vllm",
    knee: bool = True,
    disaggregated: bool = False,
    kv_link: str = "ib-ndr-400g",
    executor: Any = None,
    workers: Optional[int] = None,
    out: Union[str, os.PathLike[str], None] = None,
    progress: Optional[Callable[[int, int], None]] = None,
    step_time: str = "roofline",
    **config: Any,
) -> Plan:
    """The smallest deployment of ``model`` on ``gpu`` that serves ``requests`` within the SLO at
    ``percentile``, and every candidate the search tried, as a :class:`Plan` (how it searches,
    what it assumes, how the knee is found: :mod:`osbench.serve.plan`).

    - ``slo_ttft``, ``slo_tpot``: seconds (one at least); the ``percentile`` (0-100] of the TTFTs
      must be at most ``slo_ttft`` and that of the TPOTs at most ``slo_tpot``
      (:func:`osbench.serve.slo.within_slo`).
    - ``max_gpus``: the largest deployment considered; ``tp``: the tensor-parallel degree of a
      replica, or several (each searched); None: the model preset's.
    - ``router`` (default :data:`DEFAULT_ROUTER`), ``engine``, ``semantics`` and ``**config``:
      :func:`osbench.serve.simulate_cluster`'s.
    - ``step_time``: every cell's clock, by name (:data:`osbench.serve.simulate.STEP_TIME_NAMES`:
      ``"roofline"`` or ``"measured"``, the GPU's kernel tables), built for each cell's tp.
    - ``knee``: search each candidate's knee (False: only whether it meets the SLO, faster).
    - ``disaggregated``: search prefill:decode splits (:class:`Split`: ``P`` prefill and ``D``
      decode instances of each degree in ``tp``, ``(P + D) x tp <= max_gpus``, the KV moving
      over ``kv_link``, a name of :data:`osbench.serve.links.LINKS`) instead of replicas; the
      router picks the instance in both pools. Ties at the fewest GPUs: the highest knee, then
      the lowest degree, then the most goodput per GPU.
    - ``executor``, ``workers``: where the cells run (None or ``"process"``: a local process pool
      of ``workers``; ``"threads"``; ``"dask"``: a Dask LocalCluster; a scheduler address; a
      ``concurrent.futures.Executor``). ``out``: a results file (JSON lines) that keeps every cell
      and lets a rerun resume. ``progress(cells done, cells asked)`` after each round.

    When no deployment up to ``max_gpus`` meets the SLO, the plan says so (``best`` None,
    :meth:`Plan.verdict`).

    >>> import osbench as ob
    >>> reqs = ob.serve.Requests.poisson(300, rate=40.0, seed=1)
    >>> p = ob.serve.plan(reqs, slo_ttft=0.5, model="llama-3-8b", gpu="h100", max_gpus=8, knee=False,
    ...                   executor="threads")
    >>> p.best.deployment.label
    '2 x TP1'
    """
    if not isinstance(requests, Requests):
        raise ArgumentTypeError(f"requests={requests!r:.60} is not accepted: it must be osbench.serve.Requests")
    if len(requests) < 2 or requests.duration <= 0:
        raise ArgumentError(
            f"requests is not accepted: a plan needs at least two requests with different arrival times, to have a "
            f"rate (got {len(requests)} spanning {requests.duration} s)"
        )
    slos = {}
    for name, value in (("slo_ttft", slo_ttft), ("slo_tpot", slo_tpot)):
        slos[name] = None if value is None else _checks.positive_float(name, value)
    if slos["slo_ttft"] is None and slos["slo_tpot"] is None:
        raise ArgumentError("slo_ttft=None and slo_tpot=None are not accepted: a plan meets an SLO; give one or both")
    percentile = _checks.real("percentile", percentile, minimum=0.0, above=True)
    if percentile > 100:
        raise ArgumentError(f"percentile={percentile!r} is not accepted: it must be in (0, 100]")
    if model is None or gpu is None:
        raise ArgumentError(
            f"{'model' if model is None else 'gpu'}=None is not accepted: a plan counts GPUs of a model on a GPU; "
            "name them (presets: osbench.serve.MODELS, osbench.serve.GPUS)"
        )
    max_gpus = _checks.positive_int("max_gpus", max_gpus, maximum=MAX_REPLICAS)
    degrees = _tps(Model.preset(model), tp, max_gpus)
    rule = router_of(router)
    engine = _checks.engine(engine)
    knee = _checks.flag("knee", knee)
    disaggregated = _checks.flag("disaggregated", disaggregated)
    if disaggregated:
        if not isinstance(kv_link, str):
            raise ArgumentTypeError(f"kv_link={kv_link!r:.60} is not accepted: a plan takes a link's name")
        link_of(kv_link)  # a name it does not know: its error
        for t in degrees:
            if 2 * t > max_gpus:
                raise ArgumentError(
                    f"tp={t} is not accepted with disaggregated=True and max_gpus={max_gpus}: the smallest split "
                    f"(1 prefill + 1 decode instance) spans {2 * t} GPUs, more than max_gpus allows"
                )
    if workers is not None:
        workers = _checks.positive_int("workers", workers, maximum=1024)
    for t in degrees:  # every option checked here, before any worker starts
        configure(
            requests,
            "plan",
            semantics=semantics,
            model=model,
            gpu=gpu,
            tp=t,
            step_time=_checks.choice("step_time", step_time, STEP_TIME_NAMES),
            num_blocks=None,
            config=dict(config),
            takes="slo_ttft, slo_tpot, percentile, model, gpu, max_gpus, tp, router, engine, semantics, knee, "
            "disaggregated, kv_link, executor, workers, out, progress, step_time",
        )
    options = {"router": router, "engine": engine, "semantics": semantics, "model": model, "gpu": gpu, **config}
    options["step_time"] = step_time
    if executor is None or (isinstance(executor, str) and executor != "threads"):
        try:  # the cells go to other processes
            pickle.dumps(options)
        except (pickle.PicklingError, TypeError, AttributeError) as exc:
            raise ArgumentError(
                f"router={router!r:.60} is not accepted with executor={executor!r}: the cells run in other processes, "
                f"which need it pickled ({exc}); use a module-level function, or executor='threads'"
            ) from None
    base = {"options": options, "slo_ttft": slos["slo_ttft"], "slo_tpot": slos["slo_tpot"], "percentile": percentile}
    base_key = json.dumps(
        {"requests": _fingerprint(requests), "router": repr(rule)}
        | {k: (v if isinstance(v, (str, int, float, bool, type(None))) else repr(v)) for k, v in options.items()},
        sort_keys=True,
    )
    search = _Search(requests, base, base_key, max_gpus)
    with contextlib.ExitStack() as stack:
        if out is None:
            out = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="osbench-plan-"))) / "cells.jsonl"
        if executor == "threads":
            pool: cf.Executor = cf.ThreadPoolExecutor(max_workers=workers or os.cpu_count())
            stack.callback(pool.shutdown, wait=True, cancel_futures=True)  # Ctrl-C: the cells not started never run
        else:
            pool = stack.enter_context(_sweep.opened("process" if executor is None else executor, workers))
        _drive(
            search,
            degrees,
            knee,
            kv_link if disaggregated else None,
            lambda cells: _sweep.run(cells, run_cell, out, pool),
            progress,
        )
    return _result(search, requests, degrees, rule, model, gpu)


def _drive(
    search: _Search,
    degrees: tuple[int, ...],
    knee: bool,
    kv_link: Optional[str],
    run: Callable[[list[dict[str, Any]]], list[dict[str, Any]]],
    progress: Optional[Callable[[int, int], None]],
) -> None:
    """Advance every search round by round until all are done: each asks for a cell, the
    round's new cells run together, each search is sent its record."""
    Ask = Generator[tuple[Deployment, int], dict[str, Any], None]
    active: list[tuple[Ask, tuple[Deployment, int]]] = []
    kneed: set[Deployment] = set()

    def start(gen: Ask) -> None:
        active.append((gen, next(gen)))

    for t in degrees:
        start(search.replicas(t) if kv_link is None else search.splits(t, kv_link))
    asked = 0
    while active:
        # answer from what is known until each search asks for a new cell
        waiting: list[tuple[Ask, tuple[Deployment, int]]] = []
        for gen, ask in active:
            while True:
                key = search.cell(*ask)["key"]
                if key not in search.records:
                    waiting.append((gen, ask))
                    break
                try:
                    ask = gen.send(search.records[key])
                except StopIteration:
                    break
        if not waiting:
            break
        cells = list({c["key"]: c for c in (search.cell(*ask) for _, ask in waiting)}.values())
        for record in run(cells):
            search.records[record["key"]] = record
            d = deployment_of(record["deployment"])
            if record["step"] == 0 and search.meets(record):
                search.best_gpus = d.gpus if search.best_gpus is None else min(search.best_gpus, d.gpus)
        asked += len(cells)
        if progress:
            progress(len(search.records), asked)
        active = []
        for gen, ask in waiting:
            try:
                active.append((gen, gen.send(search.records[search.cell(*ask)["key"]])))
            except StopIteration:
                pass
        if knee:
            for c in cells:
                d = deployment_of(c["deployment"])
                if c["step"] == 0 and d not in kneed:
                    kneed.add(d)
                    start(search.knee(d))


def violations(candidates: Iterable[Candidate]) -> list[str]:
    """The pairs of candidates that contradict the search's assumptions: in one family (one
    degree), a deployment that meets the SLO and a larger one that misses it; a deployment that
    meets it at a rate and misses it at a lower one."""
    candidates = list(candidates)
    found = []
    ordered = sorted(candidates, key=lambda c: (str(c.deployment.family), c.deployment.size, c.deployment.label))
    for a in ordered:
        later = [b for b in ordered if b is not a and not b.meets and b.deployment.covers(a.deployment)]
        if a.meets and later:
            found.append(f"{a.deployment.label} meets the SLO but {later[0].deployment.label} misses it")
    for c in candidates:
        bad = [(lo, hi) for lo, ok_lo in c.rates for hi, ok_hi in c.rates if lo < hi and ok_hi and not ok_lo]
        if bad:
            found.append(f"{c.deployment.label} meets the SLO at {rate(bad[0][1])} but misses it at {rate(bad[0][0])}")
    return found


def _result(search: _Search, requests: Requests, degrees: tuple[int, ...], rule: Any, model: Any, gpu: Any) -> Plan:
    """The plan from the cells the searches used."""
    by: dict[Deployment, list[dict[str, Any]]] = {}
    for record in search.records.values():
        by.setdefault(deployment_of(record["deployment"]), []).append(record)
    p = label(search.base["percentile"])
    slo = (search.base["slo_ttft"], search.base["slo_tpot"])
    candidates = []
    for d, records in by.items():
        own = next(r for r in records if r["step"] == 0)
        records.sort(key=lambda r: r[RATE])
        tried = tuple((float(r[RATE]), search.meets(r)) for r in records)
        top = highest_within_slo(records, *slo, percentile=search.base["percentile"])
        missed = [r for r, ok in tried if not ok]
        candidates.append(
            Candidate(
                deployment=d,
                meets=search.meets(own),
                ttft=own[f"TTFT {p}"],
                tpot=own[f"TPOT {p}"],
                within_slo=own["within the SLO"],
                goodput=own["goodput"],
                throughput=own["throughput"],
                prefix_hit_rate=own["prefix hit rate"],
                imbalance_p99=own["imbalance p99"],
                knee=None if top is None else float(top[RATE]),
                knee_above=min(missed) if missed else None,
                rates=tried,
            )
        )
    candidates.sort(key=lambda c: (c.deployment.tp, c.gpus, c.deployment.label))
    meeting = [c for c in candidates if c.meets]
    best = (
        min(meeting, key=lambda c: (c.gpus, -(c.knee or 0.0), c.deployment.tp, -c.goodput_per_gpu)) if meeting else None
    )
    candidates.sort(key=lambda c: (c.gpus, c.deployment.tp))
    return Plan(
        requests=requests.name or "requests",
        count=len(requests),
        rate=search.rate,
        slo_ttft=slo[0],
        slo_tpot=slo[1],
        percentile=search.base["percentile"],
        model=_name(model),
        gpu=_name(gpu),
        router=repr(rule),
        max_gpus=search.max_gpus,
        tp=degrees,
        step_time=search.base["options"]["step_time"],
        candidates=tuple(candidates),
        best=best,
        violations=tuple(violations(candidates)),
        simulations=len(search.records),
    )


__all__ = [
    "DEFAULT_ROUTER",
    "DEPLOYMENTS",
    "KNEE_RANGE",
    "KNEE_STEPS",
    "Candidate",
    "Plan",
    "Replicas",
    "Split",
    "boundary",
    "deployment_of",
    "plan",
    "run_cell",
    "violations",
]
