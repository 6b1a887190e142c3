"""Workloads: when jobs arrive and how much work each needs (lecture 2.3)."""

from __future__ import annotations

import math
import numbers
import os
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Callable, Optional, Union

import numpy as np

from osbench import _checks, _steps, datasets
from osbench.errors import ArgumentError, ArgumentTypeError
from osbench.sched.dists import SizeDist, size_dist
from osbench.traces.formats.requests import read_request_log


def _float_array(name: str, value: Any, positive: bool) -> np.ndarray:
    try:
        arr = np.asarray(value)
    except (ValueError, TypeError) as exc:
        raise ArgumentTypeError(f"{name} is not accepted: {exc}") from None
    if arr.ndim != 1:
        raise ArgumentError(f"{name} is not accepted: it must be 1-D, got an array of shape {arr.shape}")
    if arr.size and arr.dtype.kind not in "iuf":
        raise ArgumentTypeError(f"{name} is not accepted: it must hold numbers, got dtype {arr.dtype}")
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    bad = ~np.isfinite(arr) | ((arr <= 0) if positive else (arr < 0))
    if bad.any():
        i = int(np.argmax(bad))
        what = "finite numbers > 0" if positive else "finite numbers >= 0"
        raise ArgumentError(f"{name}[{i}]={arr[i]!r} is not accepted: {name} must hold {what}")
    return arr


@dataclass(frozen=True, eq=False)
class Workload:
    """Jobs for one server: ``arrival`` times and ``size`` (work, in units of time), numpy
    float arrays of equal length; optional ``priority`` classes (int, smaller = more
    important) and ``predicted`` sizes. ``Workload(arrival, size)`` builds one by hand."""

    arrival: np.ndarray
    size: np.ndarray
    priority: Optional[np.ndarray] = None
    predicted: Optional[np.ndarray] = None
    description: str = ""

    def __post_init__(self) -> None:
        arrival = _float_array("arrival", self.arrival, positive=False)
        size = _float_array("size", self.size, positive=True)
        if len(size) != len(arrival):
            raise ArgumentError(f"size has {len(size)} entries but arrival has {len(arrival)}: one size per job")
        object.__setattr__(self, "arrival", arrival)
        object.__setattr__(self, "size", size)
        if self.predicted is not None:
            predicted = _float_array("predicted", self.predicted, positive=True)
            if len(predicted) != len(size):
                raise ArgumentError(f"predicted has {len(predicted)} entries but there are {len(size)} jobs")
            object.__setattr__(self, "predicted", predicted)
        if self.priority is not None:
            prio = np.asarray(self.priority)
            if prio.ndim != 1 or (prio.size and prio.dtype.kind not in "iu"):
                raise ArgumentTypeError(
                    f"priority is not accepted: it must be a 1-D array of integers, got {prio.dtype} {prio.shape}"
                )
            if len(prio) != len(size):
                raise ArgumentError(f"priority has {len(prio)} entries but there are {len(size)} jobs")
            object.__setattr__(self, "priority", np.ascontiguousarray(prio, dtype=np.int64))

    def __len__(self) -> int:
        return len(self.size)

    @property
    def n(self) -> int:
        return len(self.size)

    @property
    def classes(self) -> list[int]:
        """The distinct priority classes, ascending ([0] when there are none)."""
        return [0] if self.priority is None else sorted(int(c) for c in np.unique(self.priority))

    @property
    def offered_load(self) -> float:
        """Total work divided by the span of arrivals (the load the jobs offer the server)."""
        if len(self) < 2:
            return 0.0
        span = float(self.arrival.max() - self.arrival.min())
        return float(self.size.sum()) / span if span > 0 else math.inf

    @classmethod
    def batch(cls, sizes: Sequence[float]) -> Workload:
        """Every job arrives at t = 0, queued in the order given (exercise 1: ``batch([8, 4, 2, 1])``)."""
        size = _float_array("sizes", sizes, positive=True)
        return cls(np.zeros(len(size)), size, description=f"batch of {len(size)} jobs at t=0")

    def with_predictions(self, sigma: float, seed: Optional[int] = None) -> Workload:
        """A copy whose ``predicted`` sizes are ``size * exp(N(0, sigma^2))`` (lecture 2.6).

        The noise comes from ``numpy.random.default_rng((seed, 1))``: a stream independent of
        ``workload(seed=seed)``'s, whose first draws made the sizes (with the same stream a
        lognormal size and its noise would share their normal draws, a perfect predictor)."""
        sigma = _nonneg("sigma", sigma)
        rng = np.random.default_rng(None if seed is None else (seed, 1))
        noise = rng.normal(0.0, sigma, len(self)) if sigma > 0 else np.zeros(len(self))
        return Workload(self.arrival, self.size, self.priority, self.size * np.exp(noise), self.description)

    @classmethod
    def from_requests(
        cls,
        path: Union[str, os.PathLike[str]],
        *,
        size: Union[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = "output",
        load: Optional[float] = 0.8,
        tokens_per_second: Optional[float] = None,
        limit: Optional[int] = None,
    ) -> Workload:
        """Jobs from an LLM request log: the Azure LLM inference trace (CSV with ``TIMESTAMP``,
        ``ContextTokens``, ``GeneratedTokens``) or a Mooncake trace (JSON lines with
        ``timestamp`` in ms, ``input_length``, ``output_length``).

        Arrival = the request's timestamp (seconds after the first request). Work in tokens =
        ``size``: ``"output"`` (generated tokens, the decode work), ``"input"`` (prompt
        tokens), ``"total"``, or a function ``f(input, output) -> tokens``; at least 1 token.

        Units: with ``tokens_per_second`` the size is tokens / tokens_per_second seconds and
        arrivals stay in seconds. Otherwise sizes are scaled to mean 1 and time is stretched
        so that the offered load is ``load`` (the real arrival pattern, burstiness included,
        at a chosen load).
        """
        log = read_request_log(datasets.resolve(path, "request log"), limit)
        inp, out, t = log.input_length, log.output_length, log.seconds
        if callable(size):
            tokens = np.asarray(size(inp, out), dtype=float)
        elif size == "output":
            tokens = out
        elif size == "input":
            tokens = inp
        elif size == "total":
            tokens = inp + out
        else:
            raise ArgumentError(
                f"size={size!r} is not accepted: use 'output', 'input', 'total' or a function f(input, output)"
            )
        tokens = np.maximum(np.asarray(tokens, dtype=float), 1.0)
        arrival = t - t.min() if len(t) else t
        name = os.path.basename(os.fspath(path))
        if tokens_per_second is not None:
            rate = _positive("tokens_per_second", tokens_per_second)
            return cls(arrival, tokens / rate, description=f"{name}: {size} tokens at {rate:g} tokens/s")
        if load is None:
            raise ArgumentError("give load= (rescale to a chosen load) or tokens_per_second= (real units)")
        load = _positive("load", load)
        work = tokens / tokens.mean()
        span = float(arrival.max()) if len(arrival) else 0.0
        scale = (work.sum() / load) / span if span > 0 else 1.0
        return cls(arrival * scale, work, description=f"{name}: {size} tokens, rescaled to load {load:g}")


def _positive(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ArgumentTypeError(f"{name}={value!r} is not accepted: it must be a number")
    if not (math.isfinite(float(value)) and float(value) > 0):
        raise ArgumentError(f"{name}={value!r} is not accepted: it must be a finite number > 0")
    return float(value)


def _nonneg(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ArgumentTypeError(f"{name}={value!r} is not accepted: it must be a number")
    if not (math.isfinite(float(value)) and float(value) >= 0):
        raise ArgumentError(f"{name}={value!r} is not accepted: it must be a finite number >= 0")
    return float(value)


def workload(
    n: int,
    *,
    load: Union[float, Sequence[float]] = 0.8,
    sizes: Any = "exp",
    seed: Optional[int] = None,
    prediction_sigma: Optional[float] = None,
    **dist_params: Any,
) -> Workload:
    """``n`` jobs with Poisson arrivals at rate load / E[S] and sizes drawn from ``sizes``.

    ``sizes``: ``"exp"``, ``"lognormal"`` (``sigma`` or ``scv``; default E[S^2] = 15),
    ``"bimodal"`` (``small``, ``large``, ``p_large``), ``"pareto"`` (``alpha``, ``low``,
    ``high``), ``"det"``, or an explicit array of ``n`` sizes.

    ``load`` as a sequence gives priority classes 0, 1, ... with their own loads (e.g.
    ``load=(0.6, 0.3)``: interactive class 0 and batch class 1): the merged Poisson stream has
    the total rate and each job belongs to class i with probability load[i] / sum(load).

    ``prediction_sigma`` adds ``predicted = size * exp(N(0, sigma^2))``. Draws, in this order
    from ``numpy.random.default_rng(seed)``: sizes, inter-arrival gaps, classes, prediction
    noise (so the same seed gives the same jobs whatever the prediction error).
    A total load >= 1 is accepted (the workload is finite) with a warning: the queue is unstable.
    """
    n = _checks.positive_int("n", n, maximum=2**32 - 2)
    raw: list[Any]
    if isinstance(load, numbers.Real):
        raw = [load]
    elif isinstance(load, (list, tuple, np.ndarray)) and len(load) > 0:
        raw = list(load)
    else:
        raise ArgumentTypeError(f"load={load!r} is not accepted: it must be a number or a sequence of per-class loads")
    loads = [_positive("load", x) for x in raw]
    total = sum(loads)
    if total >= 1.0:
        warnings.warn(
            f"load={total:g} >= 1: the queue is unstable; a finite workload still runs, but its "
            "response times grow with n",
            RuntimeWarning,
            stacklevel=2,
        )
    rng = np.random.default_rng(seed)
    if isinstance(sizes, str):
        dist: SizeDist = size_dist(sizes, **dist_params)
        size = dist.sample(rng, n)
        mean = dist.mean
        label = sizes
    else:
        if dist_params:
            raise ArgumentError(f"parameters {sorted(dist_params)} are not accepted with an explicit array of sizes")
        size = _float_array("sizes", sizes, positive=True)
        if len(size) != n:
            raise ArgumentError(f"sizes has {len(size)} entries but n={n}: give one size per job")
        mean = float(size.mean())
        label = "given sizes"
    rate = total / float(mean)
    # Each array is drawn span by span (osbench._steps: Ctrl-C stops a large workload at once),
    # the draws those of one call for all n.
    arrival = np.empty(n)
    carry = 0.0
    for a, b in _steps.spans(n):
        carry = _steps.cumsum_from(rng.exponential(1.0 / rate, b - a), arrival[a:b], carry)
    priority = None
    if len(loads) > 1:
        p = np.array(loads) / total
        priority = _steps.filled(n, np.int64, lambda a, b: rng.choice(len(loads), size=b - a, p=p))
    predicted = None
    if prediction_sigma is not None:
        sigma = _nonneg("prediction_sigma", prediction_sigma)
        predicted = _steps.filled(n, np.float64, lambda a, b: size[a:b] * np.exp(rng.normal(0.0, sigma, b - a)))
    desc = f"{n} jobs, {label} sizes, Poisson arrivals at load {total:g}"
    return Workload(arrival, size, priority, predicted, desc)
