"""Job-size distributions with mean 1 (lecture 2.3): sampling and the moments theory needs.

Each :class:`SizeDist` can draw samples and give, for the queueing formulas, either its atoms
(discrete distributions) or its partial moments ``F(x)``, ``m1(x) = E[S; S <= x]`` and
``m2(x) = E[S^2; S <= x]`` in closed form (continuous ones).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np

from osbench import _steps
from osbench.errors import ArgumentError, ArgumentTypeError

DISTRIBUTIONS = ("exp", "lognormal", "bimodal", "pareto", "det")

#: E[S^2] of the default lognormal (mean 1): the lecture's heavy-tailed sizes.
LOGNORMAL_DEFAULT_SECOND_MOMENT = 15.0
#: high / low of the default bounded Pareto (scaled to mean 1).
PARETO_DEFAULT_RATIO = 1e4

_erf = np.vectorize(math.erf, otypes=[float])


def _phi(z: np.ndarray) -> np.ndarray:
    """Standard normal CDF."""
    return np.asarray(0.5 * (1.0 + _erf(np.asarray(z, dtype=float) / math.sqrt(2.0))), dtype=float)


@dataclass(frozen=True)
class SizeDist:
    """A size distribution: ``name``, its parameters, ``mean`` and ``second_moment``."""

    name: str
    params: dict[str, float] = field(default_factory=dict)
    mean: float = 1.0
    second_moment: float = 1.0
    #: discrete distributions: (values ascending, probabilities); None for continuous ones.
    atoms: Optional[tuple[np.ndarray, np.ndarray]] = None

    @property
    def scv(self) -> float:
        """Squared coefficient of variation Var[S] / E[S]^2."""
        return self.second_moment / self.mean**2 - 1.0

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` sizes from ``rng``, drawn span by span (:mod:`osbench._steps`: Ctrl-C stops a
        large draw at once); the draws are those of one call for all ``n``."""
        p = self.params
        if self.name == "exp":
            return _steps.filled(n, np.float64, lambda a, b: rng.exponential(1.0, b - a))
        if self.name == "lognormal":
            return _steps.filled(n, np.float64, lambda a, b: rng.lognormal(p["mu"], p["sigma"], b - a))
        if self.name == "pareto":
            a_, lo, hi = p["alpha"], p["low"], p["high"]
            return _steps.filled(
                n, np.float64, lambda a, b: lo * (1.0 - rng.random(b - a) * (1.0 - (lo / hi) ** a_)) ** (-1.0 / a_)
            )
        if self.atoms is not None:
            values, probs = self.atoms
            if len(values) == 1:
                return np.full(n, values[0])
            return _steps.filled(n, values.dtype, lambda a, b: values[rng.choice(len(values), size=b - a, p=probs)])
        raise ArgumentError(f"no sampler for {self.name!r}")  # pragma: no cover

    def support(self) -> tuple[float, float]:
        """A range holding all but a negligible mass (continuous distributions)."""
        p = self.params
        if self.name == "exp":
            return 1e-12, 60.0
        if self.name == "lognormal":
            return math.exp(p["mu"] - 9 * p["sigma"]), math.exp(p["mu"] + 9 * p["sigma"])
        if self.name == "pareto":
            return p["low"], p["high"]
        raise ArgumentError(f"{self.name} is discrete")  # pragma: no cover

    def partial(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """F(x), E[S; S <= x], E[S^2; S <= x] at each x (continuous distributions)."""
        x = np.asarray(x, dtype=float)
        p = self.params
        if self.name == "exp":
            e = np.exp(-x)
            return 1.0 - e, 1.0 - e * (1.0 + x), 2.0 - e * (x * x + 2.0 * x + 2.0)
        if self.name == "lognormal":
            mu, s = p["mu"], p["sigma"]
            z = (np.log(x) - mu) / s
            m1 = math.exp(mu + s * s / 2) * _phi(z - s)
            m2 = math.exp(2 * mu + 2 * s * s) * _phi(z - 2 * s)
            return _phi(z), m1, m2
        if self.name == "pareto":
            a, lo, hi = p["alpha"], p["low"], p["high"]
            xc = np.clip(x, lo, hi)
            c = a * lo**a / (1.0 - (lo / hi) ** a)
            F = (1.0 - (lo / xc) ** a) / (1.0 - (lo / hi) ** a)

            def m(k: int) -> np.ndarray:
                if abs(k - a) < 1e-12:
                    return np.asarray(c * np.log(xc / lo))
                return np.asarray(c * (xc ** (k - a) - lo ** (k - a)) / (k - a))

            return F, m(1), m(2)
        raise ArgumentError(f"{self.name} is discrete")  # pragma: no cover


def _pareto_moment(k: int, a: float, lo: float, hi: float) -> float:
    c = a * lo**a / (1.0 - (lo / hi) ** a)
    if abs(k - a) < 1e-12:
        return float(c * math.log(hi / lo))
    return float(c * (hi ** (k - a) - lo ** (k - a)) / (k - a))


def _number(name: str, value: Any, low: float = 0.0, inclusive: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ArgumentTypeError(f"{name}={value!r} is not accepted: it must be a number")
    v = float(value)
    if not math.isfinite(v) or v < low or (v == low and not inclusive):
        bound = f">= {low}" if inclusive else f"> {low}"
        raise ArgumentError(f"{name}={value!r} is not accepted: it must be a finite number {bound}")
    return v


def discrete(values: Any, probs: Any = None, name: str = "empirical") -> SizeDist:
    """A discrete distribution from values (and probabilities, default: equal weights)."""
    v = np.asarray(values, dtype=float).ravel()
    if v.size == 0 or not np.all(np.isfinite(v)) or np.any(v <= 0):
        raise ArgumentError("sizes is not accepted: it must hold finite positive numbers")
    p = np.full(v.size, 1.0 / v.size) if probs is None else np.asarray(probs, dtype=float)
    uniq, inverse = np.unique(v, return_inverse=True)
    w = np.bincount(inverse, weights=p, minlength=uniq.size)
    w = w / w.sum()
    mean = float(np.dot(uniq, w))
    return SizeDist(name, {}, mean, float(np.dot(uniq * uniq, w)), (uniq, w))


def size_dist(sizes: Any, **params: Any) -> SizeDist:
    """The distribution named ``sizes`` (one of :data:`DISTRIBUTIONS`) with its parameters,
    or an explicit array of sizes (its empirical distribution).

    - ``exp``: exponential, mean 1.
    - ``lognormal``: mean 1; ``sigma`` or ``scv`` (= E[S^2] - 1); default E[S^2] = 15.
    - ``bimodal``: ``small`` w.p. 1 - ``p_large``, ``large`` w.p. ``p_large``; default 0.5 / 5.5 / 0.1.
    - ``pareto``: bounded Pareto with ``alpha`` (default 1.5) on [``low``, ``high``]; default
      bounds have high / low = 1e4 and mean 1.
    - ``det``: every job has size 1.
    """
    if not isinstance(sizes, str):
        if params:
            raise ArgumentError(f"parameters {sorted(params)} are not accepted with an explicit array of sizes")
        return discrete(sizes)
    if sizes not in DISTRIBUTIONS:
        raise ArgumentError(
            f"sizes={sizes!r} is not accepted: use one of {', '.join(DISTRIBUTIONS)} or an array of sizes"
        )
    allowed = {
        "exp": set(),
        "det": set(),
        "lognormal": {"sigma", "scv"},
        "bimodal": {"small", "large", "p_large"},
        "pareto": {"alpha", "low", "high"},
    }[sizes]
    extra = set(params) - allowed
    if extra:
        accepted = ", ".join(sorted(allowed)) or "none"
        raise ArgumentError(f"parameters {sorted(extra)} are not accepted for sizes={sizes!r}: accepted: {accepted}")
    if sizes == "exp":
        return SizeDist("exp", {}, 1.0, 2.0)
    if sizes == "det":
        return SizeDist("det", {}, 1.0, 1.0, (np.array([1.0]), np.array([1.0])))
    if sizes == "lognormal":
        if "sigma" in params and "scv" in params:
            raise ArgumentError("give sigma or scv for sizes='lognormal', not both")
        if "sigma" in params:
            sigma = _number("sigma", params["sigma"])
        else:
            scv = _number("scv", params.get("scv", LOGNORMAL_DEFAULT_SECOND_MOMENT - 1.0))
            sigma = math.sqrt(math.log1p(scv))
        mu = -sigma * sigma / 2.0
        return SizeDist("lognormal", {"sigma": sigma, "mu": mu}, 1.0, math.exp(sigma * sigma))
    if sizes == "bimodal":
        small = _number("small", params.get("small", 0.5))
        large = _number("large", params.get("large", 5.5))
        p_large = _number("p_large", params.get("p_large", 0.1))
        if p_large >= 1.0:
            raise ArgumentError(f"p_large={p_large!r} is not accepted: it must be in (0, 1)")
        d = discrete([small, large], [1.0 - p_large, p_large], "bimodal")
        return SizeDist(
            "bimodal", {"small": small, "large": large, "p_large": p_large}, d.mean, d.second_moment, d.atoms
        )
    # bounded Pareto
    a = _number("alpha", params.get("alpha", 1.5))
    if ("low" in params) != ("high" in params):
        raise ArgumentError("give both low and high for sizes='pareto', or neither (mean 1, high/low = 1e4)")
    if "low" in params:
        lo = _number("low", params["low"])
        hi = _number("high", params["high"])
        if hi <= lo:
            raise ArgumentError(f"high={hi!r} is not accepted: it must be above low={lo!r}")
    else:
        lo, hi = 1.0, PARETO_DEFAULT_RATIO
        scale = 1.0 / _pareto_moment(1, a, lo, hi)
        lo, hi = lo * scale, hi * scale
    return SizeDist(
        "pareto", {"alpha": a, "low": lo, "high": hi}, _pareto_moment(1, a, lo, hi), _pareto_moment(2, a, lo, hi)
    )
