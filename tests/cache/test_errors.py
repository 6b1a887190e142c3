"""Bad input: a clear error naming the argument, from both engines and from the native functions themselves; never a crash."""

from __future__ import annotations

import numpy as np
import pytest

import osbench as ob
from osbench import _native
from osbench.cache import MIN_CAPACITY, reference


@pytest.mark.parametrize("policy", sorted(MIN_CAPACITY))
def test_small_capacities_are_refused_clearly(policy: str) -> None:
    least = MIN_CAPACITY[policy]
    for call in (
        lambda: ob.cache.replay([1, 2], policy, least - 1),
        lambda: ob.cache.replay([1, 2], policy, least - 1, engine="reference"),
        lambda: ob.cache.curve([1, 2], policy, [least, least - 1]),
        lambda: ob.cache.new(policy, least - 1),
    ):
        with pytest.raises(ValueError, match=f"at least {least}"):
            call()
    for direct in (lambda: _native.OnlineCache(policy, least - 1), lambda: reference.make(policy, least - 1)):
        with pytest.raises(ValueError, match="capacity"):
            direct()
    assert ob.cache.replay([1, 2, 1], policy, least).accesses == 3


@pytest.mark.parametrize("capacity", [0, -1, 2.5, "10", None, True])
def test_bad_capacity(capacity: object) -> None:
    with pytest.raises((ValueError, TypeError), match="capacity"):
        ob.cache.replay([1, 2, 3], "lru", capacity)  # type: ignore[arg-type]
    with pytest.raises((ValueError, TypeError), match="capacity"):
        ob.cache.new("lru", capacity)  # type: ignore[arg-type]


def test_bad_policy_lists_the_valid_ones() -> None:
    for call in (
        lambda: ob.cache.replay([1], "LRU2", 3),
        lambda: ob.cache.curve([1], "mru", [3]),
        lambda: ob.cache.new("x", 3),
    ):
        with pytest.raises(ValueError, match="fifo, lru, lfu, clock, arc, opt"):
            call()
    with pytest.raises(ValueError, match="fifo, lru, lfu, clock, arc, opt"):
        _native.cache_replay("nope", np.zeros(3, dtype=np.uint32), 1, 3)


@pytest.mark.parametrize(
    "trace, error",
    [
        (np.array([1.0, 2.0]), TypeError),
        (np.array(["a", "b"]), TypeError),
        (np.array([[1, 2], [3, 4]]), ValueError),
        (np.array([1, "a", None], dtype=object), TypeError),
        ([[1, 2], [3]], TypeError),
    ],
)
def test_bad_traces_for_the_native_engine(trace: object, error: type) -> None:
    with pytest.raises(error, match="trace"):
        ob.cache.replay(trace, "lru", 3)


def test_bad_engine_and_capacities() -> None:
    with pytest.raises(ValueError, match="engine"):
        ob.cache.replay([1], "lru", 3, engine="gpu")
    with pytest.raises(ValueError, match="capacities"):
        ob.cache.curve([1, 2], "lru", [3, 0])


def test_native_functions_reject_bad_arrays_without_crashing() -> None:
    ids = np.array([0, 1, 5], dtype=np.uint32)
    with pytest.raises(ValueError, match="n_ids"):
        _native.cache_replay("lru", ids, 2, 3)
    with pytest.raises(ValueError, match="n_ids"):
        _native.cache_curve("lru", ids, 2, np.array([1], dtype=np.uint64))
    with pytest.raises(ValueError, match="next_use"):
        _native.cache_replay("opt", ids, 6, 3)
    with pytest.raises(ValueError, match="next_use"):
        _native.cache_replay("opt", ids, 6, 3, np.zeros(2, dtype=np.uint64))
    with pytest.raises(TypeError):
        _native.cache_replay("lru", ids.astype(np.float64), 6, 3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="int64 or uint64"):
        _native.dense_ids(np.zeros(3, dtype=np.float32))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="contiguous"):
        _native.dense_ids(np.arange(10, dtype=np.int64)[::2])
    with pytest.raises(ValueError, match="ids"):
        _native.next_use(ids, 3)
    with pytest.raises(OverflowError):
        _native.cache_replay("lru", ids, 6, -3)


def test_bad_sizes() -> None:
    with pytest.raises(ValueError, match="one size per access"):
        ob.cache.replay([1, 2], "lru", 10, sizes=[1])
    for bad in ([0, 1], [-1, 1], [1.5, 1]):
        with pytest.raises(ValueError, match="positive integers"):
            ob.cache.replay([1, 2], "lru", 10, sizes=bad)
    with pytest.raises(ValueError, match="carries no sizes"):
        ob.cache.replay([1, 2], "lru", 10, sizes=True)
    with pytest.raises(ValueError, match="sizes"):
        _native.cache_replay("lru", np.zeros(2, dtype=np.uint32), 1, 3, None, False, None, np.ones(3, dtype=np.uint64))
