"""Fitting a step-time model: BLIS's corrected roofline, by non-negative least squares.

:meth:`StepTime.corrected <osbench.serve.StepTime.corrected>` weighs six terms of a step (one
per step, one per scheduled request, the ideal weight-read, KV-traffic, compute and all-reduce
times) by non-negative coefficients, as BLIS's "trained physics" does. :func:`fit` finds them
with ``scipy.optimize.nnls`` from one of three sources, and reports its error on a held-out
split it never fitted on:

- ``"tables"``: steps priced by :meth:`StepTime.measured` (the GPU's operator tables): decode
  steps over a grid of batches and contexts, prefill chunks over a grid of lengths, and mixed
  steps; every fourth step (by a seeded shuffle) is held out.
- ``"points"``: end-to-end measurements at fixed concurrency (:class:`~osbench.serve.validate.Point`):
  a point's TPOT is regressed on the terms of its steady decode step (``concurrency`` requests at
  ``ISL + OSL / 2`` cached tokens) and its TTFT on those of its prefill step (its prompt and the
  other requests' decodes); the points with ``holdout(point)`` true are held out.
- ``"benchmark"``: a vLLM ``benchmark_serving`` result file (:func:`read_benchmark`), read as
  points of its own (one per request group of the run).
- ``"aiperf"``: AIPerf's per-request export, ``profile_export.jsonl``
  (:func:`osbench.serve.aiperf.read_aiperf`), read as points the same way.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Union

import numpy as np

from osbench import _checks
from osbench.errors import ArgumentError
from osbench.serve.aiperf import AIPerfRun, read_aiperf
from osbench.serve.models import GPU, Model
from osbench.serve.steptime import CORRECTIONS, StepTime, StepWork

SOURCES = ("tables", "points", "benchmark", "aiperf")
"""What :func:`fit` fits on."""

HOLDOUT = 0.25
"""The share of the table steps held out."""


@dataclass(frozen=True)
class Fit:
    """A fitted corrected roofline and how well it does where it was not fitted."""

    step_time: StepTime
    source: str
    fitted: int
    """Observations fitted on."""
    held_out: int
    """Observations held out (never fitted on)."""
    mape: float
    """Mean absolute percentage error on the held-out observations, percent."""
    fit_mape: float
    """The same on the fitted observations, for comparison."""
    corrections: dict[str, float] = field(default_factory=dict)


def _mape(predicted: np.ndarray, y: np.ndarray) -> float:
    return 100.0 * float(np.mean(np.abs(predicted - y) / y)) if len(y) else math.nan


def table_steps(step_time: StepTime) -> list[StepWork]:
    """The steps priced from the operator tables: decode batches of 1 to 512 requests at 128
    to 32k cached tokens, prefill chunks of 16 to 8192 tokens over 0 to 16k cached, and a
    prefill chunk beside a decode batch."""
    decode = [
        [(1, ctx, 1)] * n for n in (1, 2, 4, 8, 16, 32, 64, 128, 256, 512) for ctx in (128, 512, 2048, 8192, 32768)
    ]
    prefill = [[(c, cached, c + 1)] for c in (16, 64, 256, 1024, 2048, 4096, 8192) for cached in (0, 1024, 4096, 16384)]
    mixed = [[(c, 0, c + 1)] + [(1, 1024, 1)] * n for c in (256, 1024, 4096) for n in (8, 64, 256)]
    steps = [StepWork.of(w) for w in decode + prefill + mixed]
    limit = step_time.tables.max_tokens if step_time.tables is not None else 1 << 62
    return [s for s in steps if s.new_tokens <= limit]


def _fit_steps(
    target: tuple[Model, GPU, Optional[int]], steps: list[StepWork], y: np.ndarray, held: np.ndarray, source: str
) -> Fit:
    if (~held).sum() < len(CORRECTIONS) or held.sum() == 0:
        raise ArgumentError(
            f"{source} is not accepted: {int((~held).sum())} observations to fit and {int(held.sum())} to hold out; "
            f"a fit of {len(CORRECTIONS)} corrections needs at least that many of each kind and one held out"
        )
    fitted = [s for s, h in zip(steps, held) if not h]
    model = StepTime.fit(*target, steps=fitted, seconds=y[~held])
    predicted = np.asarray([model(s) for s in steps])
    return Fit(
        step_time=model,
        source=source,
        fitted=int((~held).sum()),
        held_out=int(held.sum()),
        mape=_mape(predicted[held], y[held]),
        fit_mape=_mape(predicted[~held], y[~held]),
        corrections={k: model.params[k] for k in CORRECTIONS},
    )


def fit_tables(model: Union[str, Model], gpu: Union[str, GPU], tp: Optional[int] = None, seed: int = 0) -> Fit:
    """Fit on steps priced by the operator tables (:func:`table_steps`); a quarter held out."""
    target = (Model.preset(model), GPU.preset(gpu), tp)
    measured = StepTime.measured(*target)
    steps = table_steps(measured)
    y = np.asarray([measured(s) for s in steps])
    held = np.zeros(len(steps), dtype=bool)
    held[np.random.default_rng(seed).permutation(len(steps))[: max(1, int(len(steps) * HOLDOUT))]] = True
    return _fit_steps(target, steps, y, held, "tables")


def _point_steps(point: Any) -> tuple[StepWork, StepWork]:
    """A point's steady decode step (for its TPOT) and its prefill step (for its TTFT)."""
    c, isl, osl = point.concurrency, point.isl, point.osl
    decode = StepWork.of([(1, isl + osl // 2, 1)] * c)
    prefill = StepWork.of([(isl, 0, isl + 1)] + [(1, isl + osl // 2, 1)] * (c - 1))
    return decode, prefill


def fit_points(
    model: Union[str, Model],
    gpu: Union[str, GPU],
    tp: Optional[int],
    points: list[Any],
    holdout: Callable[[Any], bool],
) -> Fit:
    """Fit on end-to-end points (each with ``concurrency``, ``isl``, ``osl``, ``ttft``,
    ``tpot`` in seconds): TPOT on the steady decode step's terms, TTFT on the prefill step's;
    the points for which ``holdout(point)`` is true are held out."""
    target = (Model.preset(model), GPU.preset(gpu), tp)
    steps, y, held = [], [], []
    for p in points:
        decode, prefill = _point_steps(p)
        for step, seconds in ((decode, p.tpot), (prefill, p.ttft)):
            steps.append(step)
            y.append(seconds)
            held.append(bool(holdout(p)))
    return _fit_steps(target, steps, np.asarray(y), np.asarray(held, dtype=bool), "points")


@dataclass(frozen=True)
class BenchmarkPoint:
    """One group of requests of a ``benchmark_serving`` run: its concurrency, mean lengths and
    mean TTFT and TPOT (seconds)."""

    concurrency: int
    isl: int
    osl: int
    ttft: float
    tpot: float


def read_benchmark(path: Union[str, os.PathLike[str]], groups: int = 4) -> list[BenchmarkPoint]:
    """Read a vLLM ``benchmark_serving`` (``vllm bench serve --save-result``) result file with
    its per-request detail (``input_lens``, ``output_lens``, ``ttfts``, ``itls``, seconds) and
    the run's ``max_concurrency``: the requests in ``groups`` consecutive groups, each one
    point (mean lengths, mean TTFT, mean TPOT = mean inter-token latency of its requests)."""
    groups = _checks.positive_int("groups", groups, maximum=1 << 20)
    try:
        with open(path) as f:
            data = json.load(f)
    except (OSError, ValueError) as exc:
        raise ArgumentError(f"path={os.fspath(path)!r} is not accepted: not a readable JSON file ({exc})") from None
    needed = ("input_lens", "output_lens", "ttfts", "itls")
    if not isinstance(data, dict) or any(not isinstance(data.get(k), list) for k in needed):
        raise ArgumentError(
            f"path={os.fspath(path)!r} is not accepted: a benchmark_serving result with per-request "
            f"{', '.join(needed)} (vllm bench serve --save-result --save-detailed)"
        )
    n = len(data["ttfts"])
    if n == 0 or any(len(data[k]) != n for k in needed):
        raise ArgumentError(
            f"path={os.fspath(path)!r} is not accepted: its per-request lists differ in length or are empty"
        )
    columns = {k: _numbers(path, k, data[k]) for k in ("input_lens", "output_lens", "ttfts")}
    tpot = [float(np.mean(_numbers(path, "itls", itls))) if itls else math.nan for itls in data["itls"]]
    concurrency = data.get("max_concurrency") or n
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
        raise ArgumentError(f"path={os.fspath(path)!r} is not accepted: its max_concurrency must be an integer >= 1")
    return _points(concurrency, columns["input_lens"], columns["output_lens"], columns["ttfts"], tpot, groups)


def _numbers(path: Union[str, os.PathLike[str]], name: str, values: Any) -> np.ndarray:
    """A result's list of finite numbers >= 0, or the error that names it."""
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        array = np.array([math.nan])
    if array.ndim != 1 or not (np.isfinite(array).all() and (array >= 0).all()):
        raise ArgumentError(
            f"path={os.fspath(path)!r} is not accepted: its {name} must be lists of finite numbers >= 0"
        )
    return array


def aiperf_points(run: AIPerfRun, groups: int = 4) -> list[BenchmarkPoint]:
    """An AIPerf run's requests (:func:`osbench.serve.aiperf.read_aiperf`) in ``groups``
    consecutive groups, each one point, as :func:`read_benchmark` groups a vLLM benchmark's:
    the run's concurrency (the most requests it had in flight), the mean lengths, the mean
    TTFT and the mean TPOT of the requests with more than one output token."""
    groups = _checks.positive_int("groups", groups, maximum=1 << 20)
    r = run.requests
    return _points(run.concurrency, r.prompt_len, r.output_len, run.ttft, run.tpot, groups)


def _points(concurrency: int, isl: Any, osl: Any, ttft: Any, tpot: Any, groups: int) -> list[BenchmarkPoint]:
    """Per-request lengths, TTFT and TPOT (nan where there is none) as ``groups`` points."""
    isl, osl, ttft, tpot = (np.asarray(v, dtype=np.float64) for v in (isl, osl, ttft, tpot))
    points = []
    for chunk in np.array_split(np.arange(len(ttft)), min(groups, len(ttft))):
        tpots = tpot[chunk][~np.isnan(tpot[chunk])]
        points.append(
            BenchmarkPoint(
                concurrency=int(concurrency),
                isl=round(float(np.mean(isl[chunk]))),
                osl=round(float(np.mean(osl[chunk]))),
                ttft=float(np.mean(ttft[chunk])),
                tpot=float(np.mean(tpots)) if len(tpots) else math.nan,
            )
        )
    return [p for p in points if p.ttft > 0 and p.tpot > 0]


def fit(
    model: Union[str, Model],
    gpu: Union[str, GPU],
    tp: Optional[int] = None,
    *,
    source: str = "tables",
    points: Optional[list[Any]] = None,
    holdout: Optional[Callable[[Any], bool]] = None,
    path: Optional[Union[str, os.PathLike[str]]] = None,
    seed: int = 0,
) -> Fit:
    """Fit the corrections of a corrected roofline of ``model`` on ``tp`` of ``gpu``
    (:meth:`StepTime.fit <osbench.serve.StepTime.fit>`) on ``source`` (:data:`SOURCES`). ``points`` and
    ``holdout`` for ``"points"`` (by default every fourth point held out); ``path`` for
    ``"benchmark"`` and ``"aiperf"`` (its last group held out)."""
    _checks.choice("source", source, SOURCES)
    if source == "tables":
        return fit_tables(model, gpu, tp, seed)
    if source == "points":
        if not points:
            raise ArgumentError("points=None is not accepted with source='points': give the measured points")
        order = {id(p): i for i, p in enumerate(points)}
        return fit_points(model, gpu, tp, points, holdout or (lambda p: order[id(p)] % 4 == 3))
    if path is None:
        what = "a benchmark_serving result file" if source == "benchmark" else "AIPerf's profile_export.jsonl"
        raise ArgumentError(f"path=None is not accepted with source={source!r}: give {what}")
    bench = aiperf_points(read_aiperf(path)) if source == "aiperf" else read_benchmark(path)
    last = bench[-1] if bench else None
    return fit_points(model, gpu, tp, bench, lambda p: p is last)


__all__ = [
    "HOLDOUT",
    "SOURCES",
    "BenchmarkPoint",
    "Fit",
    "aiperf_points",
    "fit",
    "fit_points",
    "fit_tables",
    "read_benchmark",
    "table_steps",
]
