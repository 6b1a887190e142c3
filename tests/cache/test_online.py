"""Online caches: ``new(...)`` and ``access(key)``, with object sizes (``sizes=True`` and
``access(key, size)``).

Fed access by access, a sized online cache gives exactly the per-access hits of a sized
replay, in both engines; both engines agree on ``len``, ``in`` and ``used`` and refuse bad
sizes with the same errors (one argument layer serves both).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest
from hypothesis import given, settings
from strategies import CacheCase, cache_cases, sized_cases

import osbench as ob
from osbench import _native
from osbench.cache import MIN_CAPACITY, OFFLINE, POLICIES
from osbench.errors import ArgumentError, ArgumentTypeError

ONLINE = [p for p in POLICIES if p not in OFFLINE]
ENGINES = ("native", "reference")


@settings(max_examples=80, deadline=None)
@given(case=sized_cases())
def test_sized_online_equals_sized_replay(case: CacheCase) -> None:
    keys, sizes = case.keys.tolist(), case.sizes.tolist() if case.sizes is not None else []
    for policy in ONLINE:
        cap = case.capacity_for(policy)
        want = ob.cache.replay(case.keys, policy, cap, sizes=case.sizes, mask=True).mask
        assert want is not None
        native = ob.cache.new(policy, cap, sizes=True)
        ref = ob.cache.new(policy, cap, sizes=True, engine="reference")
        for i, (k, s) in enumerate(zip(keys, sizes)):
            assert native.access(k, s) == ref.access(k, s) == want[i], (policy, i)
            assert len(native) == len(ref) and native.used == ref.used, (policy, i)
            assert (k in native) == (k in ref)
            assert native.used <= cap
        assert all((k in native) == (k in ref) for k in set(keys))


@settings(max_examples=40, deadline=None)
@given(case=cache_cases(max_capacity=20, max_length=200))
def test_used_counts_objects_without_sizes(case: CacheCase) -> None:
    for policy in ONLINE:
        cap = case.capacity_for(policy)
        for engine in ENGINES:
            c = ob.cache.new(policy, cap, engine=engine)
            for k in case.keys.tolist():
                c.access(k)
                # libCacheSim's LIRS can leave a block resident that its counts no longer hold
                # (python/osbench/cache/reference/lirs.py): it may exceed its capacity.
                assert c.used == len(c) and (len(c) <= cap or policy == "lirs")


def test_used_is_the_bytes_held() -> None:
    # LRU, 100 bytes: 60 + 30 fit; 20 more evicts the 60-byte object; a 101-byte object is
    # never admitted; a hit keeps the size the object entered with.
    for engine in ENGINES:
        c = ob.cache.new("lru", 100, sizes=True, engine=engine)
        assert [c.access(1, 60), c.access(2, 30), c.used] == [False, False, 90]
        assert [c.access(3, 20), c.used, 1 in c, len(c)] == [False, 50, False, 2]
        assert [c.access(4, 101), c.used, 4 in c] == [False, 50, False]
        assert [c.access(2, 99), c.used] == [True, 50]
        assert (c.capacity, c.name, c.sizes, c.costs) == (100, "lru", True, False)


def test_sizes_accept_numpy_integers() -> None:
    for engine in ENGINES:
        c = ob.cache.new("fifo", 10, sizes=True, engine=engine)
        assert c.access(1, np.int64(4)) is False and c.access(2, np.uint8(5)) is False and c.used == 9


def _error(call: Callable[[], Any]) -> tuple[type, str]:
    with pytest.raises((TypeError, ValueError)) as info:
        call()
    return info.type, str(info.value)


@pytest.mark.parametrize(
    "bad, error",
    [
        (0, ArgumentError),
        (-5, ArgumentError),
        (2**64, ArgumentError),
        (10**40, ArgumentError),
        (1.5, ArgumentTypeError),
        (2.0, ArgumentTypeError),
        (True, ArgumentTypeError),
        ("3", ArgumentTypeError),
        (np.int64(0), ArgumentError),
        (np.float64(3.0), ArgumentTypeError),
    ],
)
def test_bad_sizes_are_refused_alike(bad: object, error: type) -> None:
    got = []
    for engine in ENGINES:
        c = ob.cache.new("lru", 100, sizes=True, engine=engine)
        kind, message = _error(lambda c=c: c.access(1, bad))  # type: ignore[arg-type]
        assert kind is error and message.startswith("size=")
        assert len(c) == 0 and 1 not in c  # nothing happened
        got.append((kind, message))
    assert got[0] == got[1]


def test_size_missing_or_unexpected() -> None:
    for policy in ONLINE:
        cap = MIN_CAPACITY.get(policy, 1) * 10
        errors = []
        for engine in ENGINES:
            sized = ob.cache.new(policy, cap, sizes=True, engine=engine)
            plain = ob.cache.new(policy, cap, engine=engine)
            missing = _error(lambda sized=sized: sized.access(7))
            unexpected = _error(lambda plain=plain: plain.access(7, 3))
            assert missing[0] is ArgumentTypeError and "size is required" in missing[1]
            assert unexpected[0] is ArgumentTypeError and "size=3" in unexpected[1] and "sizes=True" in unexpected[1]
            errors.append((missing, unexpected))
        assert errors[0] == errors[1], policy


def test_bad_sizes_flag_and_offline() -> None:
    with pytest.raises(TypeError, match="sizes=1 "):
        ob.cache.new("lru", 10, sizes=1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="no online form"):
        ob.cache.new("opt", 10, sizes=True)
    with pytest.raises(TypeError):
        _native.OnlineCache("lru", 10, None, 1)  # type: ignore[arg-type]


def test_online_cache_basics() -> None:
    c = ob.cache.new("lru", 2)
    assert c.access(42) is False and c.access(42) is True and 42 in c and len(c) == 1
    c.access(-(2**63))
    c.access(2**64 - 1)  # -1 and 2**64-1 are different keys online
    assert 42 not in c and -1 not in c and 2**64 - 1 in c
    with pytest.raises(ValueError, match="no online form"):
        ob.cache.new("opt", 3)
    with pytest.raises(ValueError, match="no online form"):
        _native.OnlineCache("opt", 3)
    with pytest.raises(ValueError, match="outside"):
        c.access(2**64)
