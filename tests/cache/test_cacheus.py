"""Cacheus's rules against libCacheSim's own, miss for miss: libCacheSim draws from a
thread-local lehmer64 generator that starts every new thread at the same state, so the
reference class, given that generator in place of its seeded splitmix64, makes libCacheSim's
draws and must then make its every hit and miss. (With its own generator it agrees in
distribution only: tests/cache/test_randomised.py.)"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from lehmer import Lehmer64, fresh_thread_hits, hard_traces

import osbench as ob
from osbench.cache.admission import ADMISSION_LIBCACHESIM_NAMES
from osbench.cache.reference import admission
from osbench.cache.reference.cacheus import Cacheus


def reference_hits(keys: list[int], sizes: list[int], capacity: int) -> list[bool]:
    cache = Cacheus(capacity)
    cache.rng = Lehmer64()  # type: ignore[assignment]
    cache.lr = cache._draw_lr()  # the first draw, as libCacheSim's Cacheus_init makes it
    return [cache.access(k, None, s) for k, s in zip(keys, sizes)]


def libcachesim_hits(keys: list[int], sizes: list[int], capacity: int, gate: Any = None) -> list[bool]:
    """libCacheSim's Cacheus, request by request; ``gate(lcs)``: its admissioner, if any."""

    def make(lcs: Any) -> Any:
        return lcs.Cacheus(capacity) if gate is None else lcs.Cacheus(capacity, admissioner=gate(lcs))

    return fresh_thread_hits(make, keys, sizes)


@pytest.mark.parametrize("capacity", [51, 100, 1000])
def test_with_libcachesims_generator_the_reference_is_libcachesim(capacity: int, dataset) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("libcachesim")
    for name, trace in hard_traces(dataset).items():
        keys = trace.keys.tolist()
        ones = [1] * len(keys)
        want = libcachesim_hits(keys, ones, capacity)
        assert reference_hits(keys, ones, capacity) == want, (name, capacity)
        assert sum(want) > 0, (name, capacity)


def test_with_libcachesims_generator_the_sized_reference_is_libcachesim() -> None:
    pytest.importorskip("libcachesim")
    rng = np.random.default_rng(4)
    for n, alpha, capacity in [(300, 0.8, 2000), (2000, 0.7, 20_000)]:
        keys = ob.traces.zipf(n, alpha, 30_000, seed=n).keys.tolist()
        size_of = rng.integers(1, 200, n + 1)
        sizes = [int(size_of[k]) for k in keys]
        assert reference_hits(keys, sizes, capacity) == libcachesim_hits(keys, sizes, capacity), capacity


def gated_reference_hits(keys: list[int], sizes: list[int], capacity: int, name: str, params: dict) -> list[bool]:
    cache = Cacheus(capacity)
    cache.rng = Lehmer64()  # type: ignore[assignment]
    cache.lr = cache._draw_lr()
    gate = admission.make(name, capacity, **params)
    return [admission.access(cache, gate, k, None, s) for k, s in zip(keys, sizes)]


@pytest.mark.parametrize(("name", "params"), [("bloom", {}), ("size", {"size": 100})])
def test_behind_a_filter_the_reference_is_libcachesim(name: str, params: dict) -> None:
    """A miss is learnt from (an expert's ghost lowers its weight and is forgotten) and counts
    towards the learning rate's update whether or not the filter then admits the object, as
    libCacheSim's ``Cacheus_find`` and ``Cacheus_get`` do it before ``can_insert`` asks."""
    pytest.importorskip("libcachesim")

    def gate(lcs: Any) -> Any:
        cls = getattr(lcs, ADMISSION_LIBCACHESIM_NAMES[name])
        return cls(params["size"]) if name == "size" else cls()

    rng = np.random.default_rng(5)
    for n, alpha, capacity, sized in [(400, 0.8, 60, False), (300, 0.8, 3000, True), (3000, 0.9, 300, False)]:
        keys = ob.traces.zipf(n, alpha, 30_000, seed=n).keys.tolist()
        size_of = rng.integers(1, 200, n + 1)
        sizes = [int(size_of[k]) for k in keys] if sized else [1] * len(keys)
        want = libcachesim_hits(keys, sizes, capacity, gate)
        assert gated_reference_hits(keys, sizes, capacity, name, params) == want, (name, n, capacity, sized)
        assert 0 < sum(want) < len(want)
