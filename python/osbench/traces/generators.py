"""The synthetic traces the lecture uses. Every generator takes a ``seed`` and draws from
``numpy.random.default_rng(seed)``: the same seed gives the same trace. All four
(``zipf``, ``loop``, ``scan``, ``drift``) are generated natively, in chunks, with the GIL
released and stopping on Ctrl-C; they give the same keys as numpy code draws them: the same
PCG64 outputs, ``Generator.integers``' bounded draws and ``Generator.random``'s doubles, in the
same order (the numpy code each docstring gives; the tests hold them equal)."""

from __future__ import annotations

import numpy as np

from osbench import _checks, _native
from osbench.errors import ArgumentError
from osbench.traces.trace import Trace


def zipf(n_keys: int, alpha: float, length: int, seed: int = 0) -> Trace:
    """Independent draws where the key of rank r (1-based) has probability proportional to
    r**-alpha. Keys are ``rank - 1``, so key 0 is the most popular."""
    n_keys = _checks.positive_int("n_keys", n_keys)
    length = _checks.non_negative_int("length", length)
    alpha = _checks.real("alpha", alpha, minimum=0.0)
    _checks.affordable("n_keys", n_keys, 16.0 * n_keys, "the key weights")
    _room(length)
    weights = np.arange(1, n_keys + 1, dtype=np.float64) ** -float(alpha)
    cdf = np.cumsum(weights)
    cdf /= cdf[-1]
    # Natively, in chunks that stop on Ctrl-C: the draws of rng.random(length), each mapped to
    # the first key whose cumulative weight exceeds it (numpy's searchsorted, side="right").
    state, inc = _pcg64(seed)
    keys = _native.traces_zipf(cdf, state, inc, length)
    return Trace(keys, name=f"zipf({n_keys}, {alpha})")


def _pcg64(seed: int) -> tuple[tuple[int, int], tuple[int, int]]:
    """The PCG64 state and increment ``numpy.random.default_rng(seed)`` starts from, each as
    (high, low) 64-bit halves: where the native generators start their draws."""
    state = np.random.default_rng(_checks.seed(seed)).bit_generator.state["state"]
    return _halves(state["state"]), _halves(state["inc"])


def _halves(x: int) -> tuple[int, int]:
    """A 128-bit integer as (high, low) 64-bit halves."""
    return x >> 64, x & (2**64 - 1)


def loop(n_keys: int, length: int) -> Trace:
    """0, 1, ..., n_keys-1, 0, 1, ...: a cyclic scan. Slightly larger than the cache, every
    online policy misses every time."""
    n_keys = _checks.positive_int("n_keys", n_keys)
    length = _checks.non_negative_int("length", length)
    _room(length)
    return Trace(_native.traces_loop(n_keys, length), name=f"loop({n_keys})")


def scan(n_hot: int, length: int, scan_length: int, period: int, seed: int = 0) -> Trace:
    """A hot set of ``n_hot`` keys drawn uniformly, polluted every ``period`` accesses by a
    scan of ``scan_length`` keys that are never used again (a batch of one-off requests).

    As numpy draws it: ``period`` draws of ``rng.integers(0, n_hot)``, then ``scan_length``
    one-off keys counting up from ``n_hot``, again and again, cut at ``length``."""
    n_hot = _checks.positive_int("n_hot", n_hot)
    length = _checks.non_negative_int("length", length)
    scan_length = _checks.non_negative_int("scan_length", scan_length)
    period = _checks.positive_int("period", period)
    _room(length)
    state, inc = _pcg64(seed)
    out = _native.traces_scan(n_hot, scan_length, period, state, inc, length)
    return Trace(out, name=f"scan(hot={n_hot}, scan={scan_length}/{period})")


def drift(n_keys: int, length: int, n_hot: int, phases: int, p_hot: float = 0.9, seed: int = 0) -> Trace:
    """The hot set moves: the trace has ``phases`` equal phases; in each, a fraction ``p_hot``
    of accesses go uniformly to that phase's own ``n_hot`` keys, the rest uniformly to all
    ``n_keys`` keys. Counts learned in one phase are stale in the next.

    As numpy draws it: access i is in phase ``min(i * phases // length, phases - 1)``;
    ``hot = phase * n_hot + rng.integers(0, n_hot, length)``, then ``other = rng.integers(0,
    n_keys, length)``, then ``where(rng.random(length) < p_hot, hot, other)``."""
    n_keys = _checks.positive_int("n_keys", n_keys)
    length = _checks.non_negative_int("length", length)
    n_hot = _checks.positive_int("n_hot", n_hot)
    phases = _checks.positive_int("phases", phases)
    p_hot = _checks.probability("p_hot", p_hot)
    if n_hot * phases > n_keys:
        raise ArgumentError(f"n_hot*phases={n_hot * phases} is not accepted: it must be at most n_keys={n_keys}")
    _room(length)
    state, inc = _pcg64(seed)
    keys = _native.traces_drift(n_keys, n_hot, phases, p_hot, state, inc, length)
    return Trace(keys, name=f"drift(hot={n_hot} x {phases} phases)")


def _room(length: int, bytes_per_access: float = 16.0) -> None:
    """Refuse at once a trace longer than the memory free holds (with the generator's
    temporary arrays), rather than exhaust the machine."""
    _checks.affordable("length", length, bytes_per_access * length, "the trace")


def belady_sequence() -> Trace:
    """1, 2, 3, 4, 1, 2, 5, 1, 2, 3, 4, 5: FIFO misses more with 4 frames than with 3."""
    return Trace(np.array([1, 2, 3, 4, 1, 2, 5, 1, 2, 3, 4, 5], dtype=np.int64), name="belady")


__all__ = ["belady_sequence", "drift", "loop", "scan", "zipf"]
