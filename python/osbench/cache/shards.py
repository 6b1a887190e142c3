"""SHARDS (Waldspurger et al., FAST 2015): hit-ratio curves estimated from a spatial sample of
the keys, with exact counts where a sample would be too small to stand for the cache."""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from osbench import _native
from osbench.cache import _args, exact
from osbench.errors import ArgumentTypeError
from osbench.traces import Trace, as_trace

SAMPLE_BITS = 24
"""Spatial sampling keeps a key when the low 24 bits of its hash fall below rate * 2**24."""

SHARDS_MIN_OBJECTS = 100
"""A spatial sample stands for a capacity only where it holds at least this many objects
(capacity * rate >= 100). Below that, one hot key in or out of the sample moves the hit
ratio by many points, so sampled curves use a larger sample there (see :func:`osbench.cache.curve`)."""


def spatial_sample(keys: Any, rate: float, seed: int = 0) -> np.ndarray:
    """The boolean mask of accesses kept by SHARDS spatial sampling (Waldspurger et al.,
    FAST 2015): a key is kept, in all its accesses, when hash(key) mod 2**24 < rate * 2**24.
    The hash is splitmix64 of the key's 64-bit pattern plus ``seed``."""
    rate = _args.sample_rate(rate, "rate")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise ArgumentTypeError(f"seed={seed!r} is not accepted: it must be an integer")
    return _native.cache_spatial_sample(as_trace(keys).native_keys(), rate, int(seed) & (2**64 - 1))


def _estimate(hits_at: dict[int, float], scaled: float, expected: float, kept: int) -> float:
    """SHARDS_adj: the sample's hits at ``scaled`` objects (linear between the two whole
    capacities around it), counted against the expected sample size, with the difference
    between expected and actual sample size credited to the smallest distances."""
    lo = int(np.floor(scaled))
    frac = scaled - lo
    if lo not in hits_at or (frac > 0 and lo + 1 not in hits_at):
        return float("nan")  # the scaled cache is below the policy's minimum
    h = hits_at[lo] * (1 - frac) + (hits_at[lo + 1] * frac if frac > 0 else 0.0)
    return (h + expected - kept) / expected if expected else 0.0


def sampled_curve(
    t: Trace, policy: str, caps: list[int], rate: float, parameters: dict[str, Any], threads: Optional[int]
) -> np.ndarray:
    """The SHARDS curve (checked arguments; see :func:`osbench.cache.curve`). A capacity c
    holding at least ``SHARDS_MIN_OBJECTS`` objects of the sample (c * rate >= 100) is read off
    the rate sample at c * rate objects, with SHARDS_adj. Smaller capacities take a larger
    sample: for LRU, the exact hits of the whole trace, from a stack bounded at the largest
    such capacity that runs in the same pass as the sampling; for other policies, a
    mini-simulation at the power-of-two rate that leaves 100 to 200 objects (the whole trace
    when c < 200). Ratios are clipped to [0, 1]."""
    keys = t.native_keys()
    n = len(keys)
    if n == 0:
        return np.zeros(len(caps))
    small = [c for c in caps if c * rate < SHARDS_MIN_OBJECTS]
    if policy == "lru":
        kept, exact_hits = _native.cache_lru_shards(keys, rate, 0, max(small, default=0))
        estimates = {c: exact_hits[c - 1] / n for c in small}
    else:
        # Rates in powers of two, so few samples serve many capacities: the scaled cache
        # holds 100 to 200 objects, or the whole trace is replayed from 100 objects down.
        rates = {c: min(1.0, 2.0 ** -int(np.floor(np.log2(c / SHARDS_MIN_OBJECTS)))) for c in small}
        whole = [c for c in small if rates[c] == 1.0]
        estimates = dict(zip(whole, exact.native(t, policy, whole, parameters, threads).tolist()))
        kept = keys[spatial_sample(keys, rate)]
        for r in sorted(set(rates.values()) - {1.0}):
            at = [c for c in small if rates[c] == r]
            sample = keys[spatial_sample(keys, r)]
            estimates.update(zip(at, _sample_ratios(sample, policy, [c * r for c in at], n * r, parameters, threads)))
    large = [c for c in caps if c not in estimates]
    estimates.update(zip(large, _sample_ratios(kept, policy, [c * rate for c in large], n * rate, parameters, threads)))
    return np.clip(np.array([estimates[c] for c in caps], dtype=np.float64), 0.0, 1.0)


def _sample_ratios(
    kept: np.ndarray,
    policy: str,
    scaled: list[float],
    expected: float,
    parameters: dict[str, Any],
    threads: Optional[int],
) -> list[float]:
    """SHARDS_adj estimates at each scaled (fractional) capacity from one sample."""
    least = _args.min_capacity(policy, parameters)
    wanted = sorted({w for s in scaled for w in (int(np.floor(s)), int(np.floor(s)) + 1) if w >= least})
    hits_at: dict[int, float] = {0: 0.0}
    if wanted and len(kept):
        ratios = exact.native(Trace(kept), policy, wanted, parameters, threads)
        hits_at.update(zip(wanted, (ratios * len(kept)).tolist()))
    return [_estimate(hits_at, s, expected, len(kept)) for s in scaled]
