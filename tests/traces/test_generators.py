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


def test_ctrl_c_stops_a_long_generation() -> None:
    assert_stops(
        """
        for _ in range(1000):  # minutes of work if nothing stops it
            ob.traces.zipf(1_000_000, 1.0, 20_000_000, seed=1)
        """,
        setup="import osbench as ob",
        settle=0.5,
    )
