"""One schedule: :func:`simulate` runs a workload under a policy (either engine) and returns
a :class:`Schedule` (per-job times, switches) whose :meth:`~Schedule.summary` gives the
figures; :func:`timeline` lists every stretch of service of a small example."""

from __future__ import annotations

import inspect
import math
import numbers
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import numpy as np

from osbench import _checks, _native, _steps
from osbench.errors import ArgumentError, ArgumentTypeError
from osbench.sched import reference
from osbench.sched.policies import PARAMETERS, POLICIES
from osbench.sched.workload import Workload


@dataclass(frozen=True)
class Summary:
    """Figures of one schedule (or of one priority class of it)."""

    jobs: int
    mean_response: float
    #: half-width of a 95% confidence interval of mean_response (batch means, 20 batches in
    #: job order; nan below 40 jobs). Consecutive responses are correlated, so batches, not jobs.
    mean_response_ci95: float
    p50_response: float
    p99_response: float
    p999_response: float
    mean_slowdown: float
    #: mean slowdown of the largest 1% of jobs (by size; at least one job)
    slowdown_largest_1pct: float
    max_slowdown: float
    mean_first_wait: float
    max_first_wait: float
    #: switches between different jobs, and the fraction of the elapsed time spent switching
    switches: int = 0
    switching_fraction: float = 0.0
    #: per-class figures when the workload has priority classes (class -> Summary)
    per_class: dict[int, Summary] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        d = {k: getattr(self, k) for k in self.__dataclass_fields__ if k != "per_class"}
        d["per_class"] = {str(c): s.to_dict() for c, s in self.per_class.items()}
        return d


BATCHES = 20
_T_19 = 2.093  # Student t quantile 0.975 with 19 degrees of freedom


def _ci95(values: np.ndarray) -> float:
    if len(values) < 2 * BATCHES:
        return math.nan
    means = np.array([b.mean() for b in np.array_split(values, BATCHES)])
    return float(_T_19 * means.std(ddof=1) / math.sqrt(BATCHES))


def _largest(size: np.ndarray, k: int) -> np.ndarray:
    """The ``k`` largest jobs in the order ``np.argsort(size, kind="stable")[-k:]`` lists them
    (ties at the cut: the later ids), found by a partition, not a sort of every job (a stable
    sort of 30M sizes is seconds of one numpy call, which Ctrl-C cannot stop)."""
    n = len(size)
    cut = np.partition(size, n - k)[n - k]  # the k-th largest size
    above = np.flatnonzero(size > cut)
    tied = np.flatnonzero(size == cut)
    chosen = np.concatenate([above, tied[len(tied) - (k - len(above)) :]])
    return chosen[np.lexsort((chosen, size[chosen]))]


def _figures(size: np.ndarray, response: np.ndarray, first_wait: np.ndarray) -> Summary:
    n = len(size)
    if n == 0:
        nan = math.nan
        return Summary(0, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan)
    slowdown = response / size
    largest = _largest(size, max(1, math.ceil(n / 100)))
    p50, p99, p999 = np.percentile(response, [50, 99, 99.9])
    return Summary(
        jobs=n,
        mean_response=float(response.mean()),
        mean_response_ci95=_ci95(response),
        p50_response=float(p50),
        p99_response=float(p99),
        p999_response=float(p999),
        mean_slowdown=float(slowdown.mean()),
        slowdown_largest_1pct=float(slowdown[largest].mean()),
        max_slowdown=float(slowdown.max()),
        mean_first_wait=float(first_wait.mean()),
        max_first_wait=float(first_wait.max()),
    )


@dataclass(frozen=True, eq=False)
class Schedule:
    """The outcome of one simulation: per-job ``completion`` and ``first_start`` times
    (numpy float arrays, in job order), the number of ``switches`` and the time spent
    switching, and the workload and parameters that produced it."""

    policy: str
    params: dict[str, Any]
    workload: Workload
    completion: np.ndarray
    first_start: np.ndarray
    switches: int
    switch_time: float

    @property
    def response(self) -> np.ndarray:
        """completion - arrival (time in the system)."""
        return np.asarray(self.completion - self.workload.arrival)

    @property
    def slowdown(self) -> np.ndarray:
        """response / size (1 = never waited)."""
        return np.asarray(self.response / self.workload.size)

    @property
    def first_wait(self) -> np.ndarray:
        """first_start - arrival (time until the job first runs)."""
        return np.asarray(self.first_start - self.workload.arrival)

    @property
    def makespan(self) -> float:
        """From the first arrival to the last completion."""
        if len(self.completion) == 0:
            return 0.0
        return float(self.completion.max() - self.workload.arrival.min())

    def summary(self) -> Summary:
        """Mean and tail response, slowdowns, first waits, switch overhead; per class too."""
        # Whole-array numpy calls (a partition, pairwise sums): seconds at 100M jobs.
        return _steps.aside(len(self.completion), self._summary)

    def _summary(self) -> Summary:
        w = self.workload
        response, first_wait = self.response, self.first_wait
        s = _figures(w.size, response, first_wait)
        span = self.makespan
        per_class: dict[int, Summary] = {}
        if w.priority is not None and len(w.classes) > 1:
            for c in w.classes:
                m = w.priority == c
                per_class[c] = _figures(w.size[m], response[m], first_wait[m])
        return Summary(
            **{
                k: getattr(s, k)
                for k in s.__dataclass_fields__
                if k not in ("switches", "switching_fraction", "per_class")
            },
            switches=self.switches,
            switching_fraction=self.switch_time / span if span > 0 else 0.0,
            per_class=per_class,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "policy": self.policy,
            "params": dict(self.params),
            "arrival": self.workload.arrival.tolist(),
            "size": self.workload.size.tolist(),
            "completion": self.completion.tolist(),
            "first_start": self.first_start.tolist(),
            "switches": self.switches,
            "switch_time": self.switch_time,
            "summary": self.summary().to_dict(),
        }


def _number(name: str, value: Any, *, positive: bool) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ArgumentTypeError(f"{name}={value!r} is not accepted: it must be a number")
    v = float(value)
    if not math.isfinite(v) or (v <= 0 if positive else v < 0):
        raise ArgumentError(
            f"{name}={value!r} is not accepted: it must be a finite number {'> 0' if positive else '>= 0'}"
        )
    return v


def _flag(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ArgumentTypeError(f"{name}={value!r} is not accepted: it must be True or False")
    return value


#: How each parameter is checked (and converted) before either engine sees it.
_CHECKS: dict[str, Callable[[str, Any], Any]] = {
    "quantum": lambda name, v: _number(name, v, positive=True),
    "switch_cost": lambda name, v: _number(name, v, positive=False),
    "levels": lambda name, v: None if v is None else _checks.positive_int(name, v, maximum=1000),
    "boost": lambda name, v: None if v is None else _number(name, v, positive=True),
    "use_predictions": _flag,
    "aging": lambda name, v: _number(name, v, positive=False),
}


def simulate(
    workload: Workload,
    policy: str,
    *,
    quantum: float = 0.1,
    switch_cost: float = 0.0,
    levels: Optional[int] = None,
    boost: Optional[float] = None,
    use_predictions: bool = False,
    aging: float = 0.0,
    engine: str = "native",
) -> Schedule:
    """Run ``workload`` on one server under ``policy``.

    - ``quantum``: RR's time slice; MLFQ's level-0 allotment (level i gets quantum * 2**i).
    - ``switch_cost``: time paid whenever the server starts a job other than the last one it
      ran (not for ``ps``).
    - ``levels`` (MLFQ): number of levels, None = unbounded; ``boost`` (MLFQ): period of the
      priority boost, None = never.
    - ``use_predictions`` (SJF, SRPT): rank by the workload's ``predicted`` sizes (SRPT:
      predicted - attained).
    - ``aging`` (priority): classes gained per unit of time waited since arrival.

    A parameter the policy does not use must keep its default (a ValueError says so).
    """
    if not isinstance(workload, Workload):
        raise ArgumentTypeError(
            f"workload={type(workload).__name__} is not accepted: pass an osbench.sched.Workload "
            "(workload(...), Workload.batch(sizes) or Workload(arrival, size))"
        )
    policy = _checks.choice("policy", policy, POLICIES)
    engine = _checks.engine(engine)
    given = {
        "quantum": quantum,
        "switch_cost": switch_cost,
        "levels": levels,
        "boost": boost,
        "use_predictions": use_predictions,
        "aging": aging,
    }
    for name, value in given.items():
        if name not in PARAMETERS[policy] and value != _DEFAULTS[name]:
            used = ", ".join(sorted(PARAMETERS[policy])) or "none"
            raise ArgumentError(f"{name}={value!r} is not accepted for policy={policy!r}: it uses {used}")
    values = {name: _CHECKS[name](name, value) for name, value in given.items()}
    if values["use_predictions"] and workload.predicted is None:
        raise ArgumentError(
            "use_predictions=True is not accepted: the workload has no predicted sizes "
            "(workload(..., prediction_sigma=s) or Workload.with_predictions(s))"
        )
    params = {k: v for k, v in values.items() if k in PARAMETERS[policy]}
    w = workload
    if "quantum" in PARAMETERS[policy]:
        floor = quantum_floor(w)
        if values["quantum"] < floor:
            raise ArgumentError(
                f"quantum={quantum!r} is not accepted: at least {floor:e}: a shorter turn is lost in the "
                "rounding of times up to this workload's horizon"
            )
    if engine == "reference":
        out = _reference(w, policy, values)
        completion = np.array(out.completion, dtype=float)
        first_start = np.array(out.first_start, dtype=float)
        switches, switch_time = out.switches, out.switch_time
    else:
        completion, first_start, switches, switch_time = _native.sched_simulate(
            policy, w.arrival, w.size, w.predicted, w.priority, **values
        )
    return Schedule(policy, params, w, completion, first_start, int(switches), float(switch_time))


def quantum_floor(workload: Workload) -> float:
    """The shortest quantum that always makes progress on ``workload``: ``2 * S * eps`` for the
    largest job ``S``, so that a turn changes every job's remaining work (a shorter one could
    leave it unchanged forever). The core computes the same floor."""
    return 2.0 * float(np.max(workload.size, initial=0.0)) * float(np.finfo(float).eps)


def timeline(workload: Workload, policy: str, **params: Any) -> list[tuple[int, float, float]]:
    """Every stretch of service as (job, start, end), in time order, from the reference
    engine (for small teaching examples); job -1 is a switch. Takes ``simulate``'s parameters.

    >>> timeline(Workload.batch([2, 1]), "rr", quantum=1.0)
    [(0, 0.0, 1.0), (1, 1.0, 2.0), (0, 2.0, 3.0)]
    """
    if policy == "ps":
        raise ArgumentError("policy='ps' has no timeline: every job present is served at once")
    s = simulate(workload, policy, engine="reference", **params)
    out = _reference(s.workload, policy, {**_DEFAULTS, **s.params}, timeline=True)
    assert out.timeline is not None
    return out.timeline


def _reference(w: Workload, policy: str, values: dict[str, Any], timeline: bool = False) -> reference.Outcome:
    """A run of the reference engine on checked values."""
    return reference.simulate(
        policy,
        w.arrival.tolist(),
        w.size.tolist(),
        None if w.predicted is None else w.predicted.tolist(),
        None if w.priority is None else w.priority.tolist(),
        reference.Params(**values),
        timeline=timeline,
    )


#: Each parameter's default, as :func:`simulate` declares it.
_DEFAULTS: dict[str, Any] = {
    name: p.default for name, p in inspect.signature(simulate).parameters.items() if name in _CHECKS
}
