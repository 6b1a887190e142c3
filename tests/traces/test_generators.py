"""The native trace generators: the same keys as the numpy code they replace, for any seed, and
Ctrl-C stops a long one."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from interrupts import assert_stops

import osbench as ob


def numpy_zipf(n_keys: int, alpha: float, length: int, seed: int) -> np.ndarray:
    """The Zipf trace as numpy draws it: rng.random(length) through searchsorted on the CDF."""
    rng = np.random.default_rng(seed)
    cdf = np.cumsum(np.arange(1, n_keys + 1, dtype=np.float64) ** -float(alpha))
    cdf /= cdf[-1]
    return np.minimum(np.searchsorted(cdf, rng.random(length), side="right"), n_keys - 1).astype(np.int64)


@settings(max_examples=60, deadline=None)
@given(
    n_keys=st.integers(1, 5000),
    alpha=st.floats(0.0, 3.0),
    length=st.integers(0, 70_000),  # across the chunk size
    seed=st.integers(0, 2**64 - 1),
)
def test_zipf_is_numpy_draw_for_draw(n_keys: int, alpha: float, length: int, seed: int) -> None:
    keys = ob.traces.zipf(n_keys, alpha, length, seed=seed).keys
    assert keys.dtype == np.int64
    np.testing.assert_array_equal(keys, numpy_zipf(n_keys, alpha, length, seed))


def test_zipf_of_a_large_key_space() -> None:
    np.testing.assert_array_equal(
        ob.traces.zipf(1_000_000, 1.0, 200_000, seed=3).keys, numpy_zipf(1_000_000, 1.0, 200_000, 3)
    )


@given(n_keys=st.integers(1, 1000), length=st.integers(0, 70_000))
@settings(max_examples=30, deadline=None)
def test_loop_cycles(n_keys: int, length: int) -> None:
    np.testing.assert_array_equal(ob.traces.loop(n_keys, length).keys, np.arange(length, dtype=np.int64) % n_keys)


def numpy_scan(n_hot: int, length: int, scan_length: int, period: int, seed: int) -> np.ndarray:
    """The scan trace as numpy draws it: period hot draws, then one-off keys, again and again."""
    rng = np.random.default_rng(seed)
    out = np.empty(length, dtype=np.int64)
    next_cold, i = n_hot, 0
    while i < length:
        hot = min(period, length - i)
        out[i : i + hot] = rng.integers(0, n_hot, size=hot)
        i += hot
        cold = min(scan_length, length - i)
        out[i : i + cold] = np.arange(next_cold, next_cold + cold)
        next_cold += cold
        i += cold
    return out


def numpy_drift(n_keys: int, length: int, n_hot: int, phases: int, p_hot: float, seed: int) -> np.ndarray:
    """The drift trace as numpy draws it: all hot keys, then all others, then all coins."""
    rng = np.random.default_rng(seed)
    phase = np.minimum(np.arange(length) * phases // max(length, 1), phases - 1)
    hot_keys = phase * n_hot + rng.integers(0, n_hot, size=length)
    any_keys = rng.integers(0, n_keys, size=length)
    return np.where(rng.random(length) < p_hot, hot_keys, any_keys).astype(np.int64)


# Key spaces on both sides of 2**32 (numpy draws 32-bit halves below it, whole 64-bit words
# above), and of 1 (no draw at all).
KEY_SPACES = st.one_of(st.integers(1, 5000), st.just(1), st.integers(2**32 - 2, 2**32 + 2), st.integers(2**40, 2**58))


@settings(max_examples=60, deadline=None)
@given(
    n_hot=KEY_SPACES,
    length=st.integers(0, 70_000),
    scan_length=st.integers(0, 3000),
    period=st.integers(1, 3000),
    seed=st.integers(0, 2**64 - 1),
)
def test_scan_is_numpy_draw_for_draw(n_hot: int, length: int, scan_length: int, period: int, seed: int) -> None:
    keys = ob.traces.scan(n_hot, length, scan_length, period, seed=seed).keys
    assert keys.dtype == np.int64
    np.testing.assert_array_equal(keys, numpy_scan(n_hot, length, scan_length, period, seed))


@settings(max_examples=60, deadline=None)
@given(
    n_hot=KEY_SPACES,
    extra=st.integers(0, 2**20),
    phases=st.integers(1, 8),
    length=st.integers(0, 70_000),
    p_hot=st.floats(0.0, 1.0),
    seed=st.integers(0, 2**64 - 1),
)
def test_drift_is_numpy_draw_for_draw(
    n_hot: int, extra: int, phases: int, length: int, p_hot: float, seed: int
) -> None:
    n_keys = n_hot * phases + extra
    keys = ob.traces.drift(n_keys, length, n_hot, phases, p_hot=p_hot, seed=seed).keys
    assert keys.dtype == np.int64
    np.testing.assert_array_equal(keys, numpy_drift(n_keys, length, n_hot, phases, p_hot, seed))


def test_ctrl_c_stops_a_long_generation() -> None:
    assert_stops(
        """
        for _ in range(1000):  # minutes of work if nothing stops it
            ob.traces.zipf(1_000_000, 1.0, 20_000_000, seed=1)
        """,
        setup="import osbench as ob",
        settle=0.5,
    )


def test_ctrl_c_stops_a_long_scan_and_drift() -> None:
    assert_stops(
        """
        for _ in range(1000):  # minutes of work if nothing stops it
            ob.traces.scan(1000, 20_000_000, 100, 1000, seed=1)
            ob.traces.drift(100_000, 20_000_000, 1000, 10, seed=1)
        """,
        setup="import osbench as ob",
        settle=0.5,
    )
