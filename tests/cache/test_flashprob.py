"""FlashProb's rules against libCacheSim's own, miss for miss at any admission probability:
libCacheSim draws one ``next_rand()`` per object leaving RAM, from a thread-local generator that
starts every new thread at the same state, so the reference class, given that generator in
place of its seeded splitmix64, makes libCacheSim's draws and must then make its every hit and
miss. (With its own generator it agrees in distribution only: tests/cache/test_randomised.py;
at ``disk_admit_prob=1`` no draw decides anything, and the native engine is held to libCacheSim
directly: tests/cache/test_peers.py.)"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from lehmer import Lehmer64, fresh_thread_hits, hard_traces

import osbench as ob
from osbench.cache._args import min_capacity
from osbench.cache.reference.flashprob import FlashProb


def reference_hits(keys: list[int], sizes: list[int], capacity: int, **parameters: Any) -> list[bool]:
    cache = FlashProb(capacity, **parameters)
    cache.rng = Lehmer64()  # type: ignore[assignment]
    return [cache.access(k, None, s) for k, s in zip(keys, sizes)]


def libcachesim_hits(keys: list[int], sizes: list[int], capacity: int, **parameters: Any) -> list[bool]:
    """libCacheSim's FlashProb, request by request."""
    return fresh_thread_hits(lambda lcs: lcs.FlashProb(capacity, **parameters), keys, sizes)


@pytest.mark.parametrize("capacity", [20, 100, 1000])
def test_with_libcachesims_generator_the_reference_is_libcachesim(capacity: int, dataset) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("libcachesim")
    for name, trace in hard_traces(dataset).items():
        keys = trace.keys.tolist()
        ones = [1] * len(keys)
        want = libcachesim_hits(keys, ones, capacity)  # the defaults: 0.05 of it in RAM, 0.2
        assert reference_hits(keys, ones, capacity) == want, (name, capacity)
        assert 0 < sum(want) < len(keys)


# (ram_size_ratio, disk_admit_prob) away from the defaults: 0.3 admits one in 3 (int(1 / 0.3)).
PARAMETERS = [(0.05, 0.3), (0.3, 0.05), (0.5, 0.5), (0.9, 0.2)]


@pytest.mark.parametrize(("ratio", "prob"), PARAMETERS)
def test_with_libcachesims_generator_and_parameters(ratio: float, prob: float) -> None:
    pytest.importorskip("libcachesim")
    trace = ob.traces.zipf(2000, 1.0, 30_000, seed=7)
    keys = trace.keys.tolist()
    ones = [1] * len(keys)
    for capacity in (min_capacity("flashprob", {"ram_size_ratio": ratio}), 50, 400):
        params = {"ram_size_ratio": ratio, "disk_admit_prob": prob}
        assert reference_hits(keys, ones, capacity, **params) == libcachesim_hits(keys, ones, capacity, **params)


@pytest.mark.parametrize("capacity", [100, 2000, 10_000])
def test_with_libcachesims_generator_sized(capacity: int) -> None:
    """Bytes: objects of 1 to 99 bytes; at capacity 100 flash holds 95, so the largest fit the
    cache (in RAM) but are dropped on their way to flash."""
    pytest.importorskip("libcachesim")
    rng = np.random.default_rng(3)
    per_object = rng.integers(1, 100, 500)
    keys = (rng.zipf(1.1, 40_000) % 500).tolist()
    sizes = [int(per_object[k]) for k in keys]
    want = libcachesim_hits(keys, sizes, capacity)
    assert reference_hits(keys, sizes, capacity) == want, capacity
    assert 0 < sum(want) < len(keys)


def test_bad_parameters_and_capacities_are_refused_by_name() -> None:
    for engine in ("native", "reference"):
        for bad in (0.0, 1.0, 1.5, -0.1):
            with pytest.raises(ValueError, match=rf"ram_size_ratio={bad} is not accepted: a number in \(0, 1\)"):
                ob.cache.replay([1, 2, 1], "flashprob", 100, ram_size_ratio=bad, engine=engine)
        for bad in (0.0, 1.5, float("nan")):
            with pytest.raises(ValueError, match=r"disk_admit_prob=\S+ is not accepted: a number in \(0, 1\]"):
                ob.cache.replay([1, 2, 1], "flashprob", 100, disk_admit_prob=bad, engine=engine)
        # libCacheSim refuses a cache whose RAM share, int(capacity * ram_size_ratio), is 0.
        with pytest.raises(ValueError, match="capacity=19 is not accepted: at least 20 for flashprob"):
            ob.cache.replay([1, 2, 1], "flashprob", 19, engine=engine)
        with pytest.raises(ValueError, match=r"at least 10 for flashprob with ram_size_ratio=0\.1"):
            ob.cache.new("flashprob", 9, ram_size_ratio=0.1, engine=engine)
        assert ob.cache.replay([1, 2, 1], "flashprob", 10, ram_size_ratio=0.1, engine=engine).hits == 1
    with pytest.raises(ValueError, match="capacity=19 is not accepted"):
        FlashProb(19)
