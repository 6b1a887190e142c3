"""Sampled curves (SHARDS): exact where the sample would be small, close elsewhere, the sample itself checked bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import osbench as ob


def reference_ratios(keys: np.ndarray, policy: str, caps: list[int]) -> list[float]:
    return [ob.cache.replay(keys, policy, c, engine="reference").hit_ratio for c in caps]


def test_sampling_everything_gives_the_exact_curve() -> None:
    """At rate 1 the sample is the trace: every capacity equals the reference engine's replay
    (LRU's small capacities come from the bounded stack, the others from the sample path)."""
    t = ob.traces.zipf(600, 0.9, 6_000, seed=6)
    caps = [10, 50, 150, 600]
    for policy in ("lru", "sieve", "s3fifo"):
        assert ob.cache.curve(t, policy, caps, sample=1.0).tolist() == reference_ratios(t.keys, policy, caps), policy


def shards_adj(keys: np.ndarray, policy: str, capacity: int, rate: float) -> float:
    """SHARDS_adj written out on the reference engine: replay the spatial sample (the keys
    whose splitmix64 hash falls under the rate) at the two whole capacities around
    capacity * rate, interpolate, and credit the difference between the expected and the
    actual sample size to hits."""
    sample = keys[_splitmix_mask(keys, rate, 0)]
    scaled = capacity * rate
    lo, frac = int(np.floor(scaled)), scaled - np.floor(scaled)
    hits = [ob.cache.replay(sample, policy, c, engine="reference").hits if c else 0 for c in (lo, lo + 1)]
    expected = len(keys) * rate
    return float((hits[0] * (1 - frac) + hits[1] * frac + expected - len(sample)) / expected)


def test_sampled_estimates_are_shards_adj_of_the_sample() -> None:
    """Capacities of at least 100 / rate objects come from the rate sample; those from 200 to
    100 / rate (other than LRU) from a power-of-two sample with 100 to 200 objects; each equal
    to SHARDS_adj computed here on the reference engine."""
    t = ob.traces.zipf(20_000, 0.8, 40_000, seed=12)
    rate = 0.125
    for policy, caps in (("lru", [800, 1000, 3000]), ("sieve", [800, 3000, 250, 450]), ("fifo", [300, 900])):
        got = ob.cache.curve(t, policy, caps, sample=rate)
        want = []
        for c in caps:
            r = rate if c * rate >= ob.cache.SHARDS_MIN_OBJECTS else 2.0 ** -int(np.floor(np.log2(c / 100)))
            want.append(min(1.0, max(0.0, shards_adj(t.keys, policy, c, r))))
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12, err_msg=policy)


def _splitmix_mask(keys: np.ndarray, rate: float, seed: int) -> np.ndarray:
    """SHARDS' key test written out in numpy: splitmix64(key + seed) mod 2**24 < rate * 2**24."""
    x = keys.astype(np.int64).view(np.uint64) + np.uint64(seed)
    with np.errstate(over="ignore"):
        x = x + np.uint64(0x9E3779B97F4A7C15)
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        x = x ^ (x >> np.uint64(31))
    return (x & np.uint64(2**24 - 1)) < np.uint64(int(rate * 2**24))


def test_spatial_sample_keeps_whole_keys_at_the_rate() -> None:
    keys = np.arange(-100_000, 100_000, dtype=np.int64)
    kept = ob.cache.spatial_sample(keys, 0.05)
    assert abs(kept.mean() - 0.05) < 0.005
    assert np.array_equal(kept, _splitmix_mask(keys, 0.05, 0))
    again = ob.cache.spatial_sample(np.concatenate([keys, keys]), 0.05)
    assert np.array_equal(again[:200_000], kept) and np.array_equal(again[200_000:], kept)
    with_seed = ob.cache.spatial_sample(keys, 0.05, seed=1)
    assert not np.array_equal(with_seed, kept) and np.array_equal(with_seed, _splitmix_mask(keys, 0.05, 1))
    # A key is the same key whether given as int64 or as the uint64 with its bit pattern.
    assert np.array_equal(ob.cache.spatial_sample(keys.view(np.uint64), 0.05), kept)
    with pytest.raises(TypeError, match="seed"):
        ob.cache.spatial_sample(keys, 0.05, seed=0.5)  # type: ignore[arg-type]


@settings(max_examples=60, deadline=None)
@given(
    keys=st.lists(st.integers(-(2**63), 2**64 - 1) | st.integers(0, 40), min_size=0, max_size=1500),
    rate=st.sampled_from([0.001, 0.01, 0.3, 1.0]),
    caps=st.lists(st.integers(1, 120), min_size=1, max_size=6),
)
def test_sampled_lru_is_exact_where_the_sample_would_be_small(keys: list[int], rate: float, caps: list[int]) -> None:
    """Capacities under 100 / rate come from the bounded exact stack: equal to the exact curve."""
    t = ob.traces.Trace(np.array([k if k < 2**63 else k - 2**64 for k in keys], dtype=np.int64))
    small = [c for c in caps if c * rate < ob.cache.SHARDS_MIN_OBJECTS]
    if small:
        assert ob.cache.curve(t, "lru", small, sample=rate).tolist() == ob.cache.curve(t, "lru", small).tolist()


def test_sampled_curves_are_exact_below_200_objects() -> None:
    """Capacities under 200 objects replay the whole trace: the reference engine's ratios."""
    t = ob.traces.zipf(1500, 1.0, 8_000, seed=8)
    caps = [10, 37, 100, 199]
    for policy in ("sieve", "s3fifo", "fifo"):
        assert ob.cache.curve(t, policy, caps, sample=0.01).tolist() == reference_ratios(t.keys, policy, caps), policy


def test_sampled_lru_curve_is_close_on_a_mild_trace() -> None:
    t = ob.traces.zipf(50_000, 0.6, 600_000, seed=9)
    caps = np.unique(np.geomspace(100, 50_000, 30).astype(np.int64))
    exact = ob.cache.curve(t, "lru", caps)
    est = ob.cache.curve(t, "lru", caps, sample=0.1)
    assert np.mean(np.abs(est - exact)) < 0.01  # under one point
    s3 = ob.cache.curve(t, "s3fifo", [5000, 20_000], sample=0.1)
    assert np.all(np.abs(s3 - ob.cache.curve(t, "s3fifo", [5000, 20_000])) < 0.02)


def test_sampled_lru_curve_is_close_on_a_skewed_trace_at_every_capacity() -> None:
    """Zipf 1.0 with its hottest keys swinging a 1% sample: small capacities are counted
    exactly, the rest come from the sample."""
    t = ob.traces.zipf(200_000, 1.0, 2_000_000, seed=43)
    caps = np.unique(np.geomspace(10, 200_000, 40).astype(np.int64))
    exact = ob.cache.curve(t, "lru", caps)
    est = ob.cache.curve(t, "lru", caps, sample=0.01)
    small = caps * 0.01 < ob.cache.SHARDS_MIN_OBJECTS
    assert est[small].tolist() == exact[small].tolist()
    assert np.mean(np.abs(est - exact)) < 0.01 and np.max(np.abs(est - exact)) < 0.03


def test_bad_sample_arguments() -> None:
    for bad in (0, 0.0, 1.5, -0.1, "0.1", True):
        with pytest.raises((ValueError, TypeError), match="sample"):  # "0.1", True: the wrong kind
            ob.cache.curve([1, 2, 1], "lru", [1], sample=bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="offline"):
        ob.cache.curve([1, 2, 1], "opt", [1], sample=0.5)
    with pytest.raises(ValueError, match="sizes"):
        ob.cache.curve([1, 2, 1], "lru", [10], sample=0.5, sizes=[1, 1, 1])
    with pytest.raises(ValueError, match="reference"):
        ob.cache.curve([1, 2, 1], "lru", [10], sample=0.5, engine="reference")
