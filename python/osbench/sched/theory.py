"""M/G/1 mean response times in closed form, beside the simulations (lecture 2.3-2.7).

Poisson arrivals at rate lambda = load / E[S], one server, sizes from a :class:`SizeDist`.
rho(x) = lambda E[S; S <= x] is the load of jobs of size at most x; rho(x-) excludes an atom at x.

- ``fcfs``: Pollaczek-Khinchine, E[T] = E[S] + lambda E[S^2] / (2 (1 - rho)).
- ``ps``: E[T] = E[S] / (1 - rho) for every size distribution; ``rr`` and ``mlfq`` (size-blind
  policies) have this mean too under exponential sizes (memoryless: attained service says nothing).
- ``sjf`` (non-preemptive, ties FCFS): E[T(x)] = x + lambda E[S^2] / (2 (1 - rho(x-)) (1 - rho(x))).
- ``srpt`` (Schrage and Miller 1966): E[T(x)] = lambda (m2(x) + x^2 (1 - F(x))) / (2 (1 - rho(x-)) (1 - rho(x)))
  + integral_0^x dt / (1 - rho(t)), with m2(x) = E[S^2; S <= x]; numerically integrated for
  continuous sizes, summed over atoms for discrete ones.
- ``priority`` (preemptive-resume, classes 0, 1, ... with loads ``load=(l0, l1, ...)``, the
  same size distribution): E[T_k] = E[S] / (1 - s_{k-1}) + sum_{i<=k} lambda_i E[S^2] / (2 (1 - s_{k-1}) (1 - s_k)),
  s_k = l_0 + ... + l_k. Without ``job_class`` the mean over all jobs.

A load at or above 1 gives ``inf``.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from typing import Any, Optional, Union

import numpy as np

from osbench.errors import ArgumentError, ArgumentTypeError
from osbench.sched.dists import SizeDist, size_dist

THEORY_POLICIES = ("fcfs", "ps", "rr", "mlfq", "sjf", "srpt", "priority")

#: points of the log-spaced grid used to integrate over continuous size distributions
GRID_POINTS = 40_001


def theory(
    policy: str,
    sizes: Any = "exp",
    load: Union[float, Sequence[float]] = 0.8,
    *,
    job_class: Optional[int] = None,
    **dist_params: Any,
) -> float:
    """The M/G/1 mean response time of ``policy`` at ``load`` with sizes ``sizes`` (a
    distribution name with its parameters, as in :func:`~osbench.sched.workload`, an explicit
    array of sizes taken as an empirical distribution, or a :class:`SizeDist`).

    ``priority`` takes per-class loads (``load=(0.6, 0.3)``) and optionally ``job_class``.
    """
    if not isinstance(policy, str) or policy not in THEORY_POLICIES:
        raise ArgumentError(f"policy={policy!r} is not accepted: theory covers {', '.join(THEORY_POLICIES)}")
    dist = sizes if isinstance(sizes, SizeDist) else size_dist(sizes, **dist_params)
    if isinstance(load, numbers.Real) and not isinstance(load, bool):
        loads = [float(load)]
    elif isinstance(load, (list, tuple, np.ndarray)) and len(load) > 0:
        loads = [float(x) for x in load]
    else:
        raise ArgumentTypeError(f"load={load!r} is not accepted: it must be a number or a sequence of per-class loads")
    for x in loads:
        if not (math.isfinite(x) and x > 0):
            raise ArgumentError(f"load={load!r} is not accepted: loads must be finite numbers > 0")
    if policy == "priority":
        return _priority(dist, loads, job_class)
    if job_class is not None:
        raise ArgumentError(f"job_class={job_class!r} is not accepted for policy={policy!r}: only for priority")
    if len(loads) > 1:
        raise ArgumentError(
            f"load={load!r} is not accepted for policy={policy!r}: a single total load (classes are for priority)"
        )
    rho = loads[0]
    if rho >= 1.0:
        return math.inf
    lam = rho / dist.mean
    if policy == "fcfs":
        return dist.mean + lam * dist.second_moment / (2.0 * (1.0 - rho))
    if policy == "ps" or (policy in ("rr", "mlfq") and dist.name == "exp"):
        return dist.mean / (1.0 - rho)
    if policy in ("rr", "mlfq"):
        raise ArgumentError(
            f"policy={policy!r} has no closed form for sizes={dist.name!r}: only under exponential sizes "
            "(where it equals ps); use ps as RR's quantum -> 0 limit"
        )
    if dist.atoms is not None:
        return _discrete(policy, dist, lam)
    return _continuous(policy, dist, lam)


def _priority(dist: SizeDist, loads: list[float], job_class: Optional[int]) -> float:
    lams = [x / dist.mean for x in loads]
    means = []
    above = 0.0  # load of the classes above
    for k, load in enumerate(loads):
        upto = above + load
        if upto >= 1.0:
            means.append(math.inf)
        else:
            wait = sum(lams[: k + 1]) * dist.second_moment / (2.0 * (1.0 - above) * (1.0 - upto))
            means.append(dist.mean / (1.0 - above) + wait)
        above = upto
    if job_class is not None:
        if (
            isinstance(job_class, bool)
            or not isinstance(job_class, numbers.Integral)
            or not 0 <= job_class < len(loads)
        ):
            raise ArgumentError(f"job_class={job_class!r} is not accepted: use a class in 0..{len(loads) - 1}")
        return means[int(job_class)]
    if any(math.isinf(m) for m in means):
        return math.inf
    return sum(lam * m for lam, m in zip(lams, means)) / sum(lams)


def _discrete_per_size(policy: str, dist: SizeDist, lam: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(sizes, probabilities, E[T(x)] at each size) of a discrete distribution."""
    assert dist.atoms is not None
    values, probs = dist.atoms
    es2 = dist.second_moment
    rho_total = lam * dist.mean
    out = []
    rho_below = 0.0  # rho(x-)
    m2_upto = 0.0
    F_upto = 0.0
    residence = 0.0  # integral_0^x dt / (1 - rho(t)), rho(t) = load of jobs strictly smaller than t
    prev = 0.0
    for x, p in zip(values.tolist(), probs.tolist()):
        residence += (x - prev) / (1.0 - rho_below)
        rho_upto = rho_below + lam * p * x
        m2_upto += p * x * x
        F_upto += p
        denom = (1.0 - rho_below) * (1.0 - rho_upto)
        if policy == "fcfs":
            t = x + lam * es2 / (2.0 * (1.0 - rho_total))
        elif policy == "ps":
            t = x / (1.0 - rho_total)
        elif policy == "sjf":
            t = x + lam * es2 / (2.0 * denom)
        else:
            t = lam * (m2_upto + x * x * max(0.0, 1.0 - F_upto)) / (2.0 * denom) + residence
        out.append(t)
        rho_below = rho_upto
        prev = x
    return values, probs, np.array(out)


def _discrete(policy: str, dist: SizeDist, lam: float) -> float:
    _, probs, t = _discrete_per_size(policy, dist, lam)
    return float(np.dot(probs, t))


def _continuous_per_size(policy: str, dist: SizeDist, lam: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(grid of sizes, F at each, E[T(x)] at each) of a continuous distribution."""
    lo, hi = dist.support()
    x = np.geomspace(lo, hi, GRID_POINTS)
    F, m1, m2 = dist.partial(x)
    rho = lam * m1
    rho_total = lam * dist.mean
    if policy == "fcfs":
        t = x + lam * dist.second_moment / (2.0 * (1.0 - rho_total))
    elif policy == "ps":
        t = x / (1.0 - rho_total)
    elif policy == "sjf":
        t = x + lam * dist.second_moment / (2.0 * (1.0 - rho) ** 2)
    else:
        inv = 1.0 / (1.0 - rho)
        # integral_0^x dt / (1 - rho(t)): rho ~ 0 below the grid, trapezoids along it
        residence = x[0] + np.concatenate(([0.0], np.cumsum(0.5 * (inv[1:] + inv[:-1]) * np.diff(x))))
        t = lam * (m2 + x * x * (1.0 - F)) / (2.0 * (1.0 - rho) ** 2) + residence
    return x, F, np.asarray(t)


def _continuous(policy: str, dist: SizeDist, lam: float) -> float:
    x, F, t = _continuous_per_size(policy, dist, lam)
    # E[T] = integral T(x) dF(x): trapezoids in F, plus the mass below the grid (T(x) ~ x there)
    return float(np.sum(0.5 * (t[1:] + t[:-1]) * np.diff(F)) + float(F[0]) * x[0])


def slowdown_largest(
    policy: str, sizes: Any = "exp", load: float = 0.8, *, fraction: float = 0.01, **dist_params: Any
) -> float:
    """The M/G/1 mean slowdown E[T(x)/x] over the largest ``fraction`` of jobs (by size), for
    ``fcfs``, ``ps``, ``sjf``, ``srpt`` (and ``rr``/``mlfq`` under exponential sizes, as ps).
    The theory beside :attr:`Summary.slowdown_largest_1pct`."""
    if not isinstance(policy, str) or policy not in ("fcfs", "ps", "sjf", "srpt", "rr", "mlfq"):
        raise ArgumentError(f"policy={policy!r} is not accepted: use one of fcfs, ps, sjf, srpt (rr, mlfq: exp sizes)")
    dist = sizes if isinstance(sizes, SizeDist) else size_dist(sizes, **dist_params)
    if policy in ("rr", "mlfq"):
        if dist.name != "exp":
            raise ArgumentError(
                f"policy={policy!r} has no closed form for sizes={dist.name!r}: only under exponential sizes"
            )
        policy = "ps"
    if (
        isinstance(load, bool)
        or not isinstance(load, numbers.Real)
        or not (0 < float(load) and math.isfinite(float(load)))
    ):
        raise ArgumentError(f"load={load!r} is not accepted: it must be a finite number > 0")
    if isinstance(fraction, bool) or not isinstance(fraction, numbers.Real) or not 0 < float(fraction) <= 1:
        raise ArgumentError(f"fraction={fraction!r} is not accepted: it must be in (0, 1]")
    if float(load) >= 1.0:
        return math.inf
    lam = float(load) / dist.mean
    if dist.atoms is not None:
        values, probs, t = _discrete_per_size(policy, dist, lam)
        left, acc = float(fraction), 0.0
        for x, p, tx in zip(values[::-1].tolist(), probs[::-1].tolist(), t[::-1].tolist()):
            take = min(p, left)
            acc += take * tx / x
            left -= take
            if left <= 0:
                break
        return acc / (float(fraction) - max(left, 0.0))
    x, F, t = _continuous_per_size(policy, dist, lam)
    top = F >= 1.0 - float(fraction)
    xs, Fs, ts = x[top], F[top], t[top]
    ratio = ts / xs
    mass = float(Fs[-1] - Fs[0])
    return float(np.sum(0.5 * (ratio[1:] + ratio[:-1]) * np.diff(Fs)) / mass)
