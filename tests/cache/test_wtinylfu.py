"""W-TinyLFU: native equals reference on traces that make it evict (hypothesis), by every path
that hands it the trace's keys, and both equal libCacheSim's WTinyLFU request by request, its
sketch hashing the same keys."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import SEEDS, _key_pool

import osbench as ob
from osbench.cache._args import min_capacity


def case(seed: int, capacity: int, spread: int, signed: bool, sized: bool) -> tuple[np.ndarray, np.ndarray | None]:
    """Skewed keys over the whole 64-bit range, 2 to 6 times as many as the cache holds, ten
    accesses a slot; sizes 1 to 8 per key when sized."""
    rng = np.random.default_rng(seed)
    n = capacity * spread
    ids = (rng.zipf(1.2, capacity * 10) - 1) % n
    keys = _key_pool(rng, n, signed)[ids]
    sizes = rng.integers(1, 9, n)[ids].astype(np.uint64) if sized else None
    return keys, sizes


@settings(max_examples=40, deadline=None)
@given(
    seed=SEEDS,
    capacity=st.integers(100, 300),
    spread=st.integers(2, 6),
    signed=st.booleans(),
    sized=st.booleans(),
    window=st.sampled_from([0.01, 0.03, 0.2, 0.5]),
)
def test_native_equals_reference_on_traces_that_evict(
    seed: int, capacity: int, spread: int, signed: bool, sized: bool, window: float
) -> None:
    keys, sizes = case(seed, capacity, spread, signed, sized)
    cap = max(capacity * (4 if sized else 1), min_capacity("wtinylfu", {"window": window}))
    got = ob.cache.replay(keys, "wtinylfu", cap, sizes=sizes, mask=True, window=window)
    want = ob.cache.replay(keys, "wtinylfu", cap, sizes=sizes, mask=True, window=window, engine="reference")
    assert got.mask is not None and want.mask is not None
    assert got.mask.tolist() == want.mask.tolist()
    assert 0 < got.hits < len(keys) - capacity  # it evicted


def test_every_path_hands_it_the_keys(tmp_path) -> None:  # type: ignore[no-untyped-def]
    keys, _ = case(3, 150, 4, True, False)
    want = ob.cache.replay(keys, "wtinylfu", 150, mask=True)
    assert want.mask is not None
    online = ob.cache.new("wtinylfu", 150)
    assert [online.access(int(k)) for k in keys.tolist()] == want.mask.tolist()
    s = ob.cache.stream("wtinylfu", 150)
    assert sum(s.feed(keys[i : i + 97]) for i in range(0, len(keys), 97)) == want.hits
    path = tmp_path / "keys.npy"
    np.save(path, keys)
    assert ob.cache.replay(path, "wtinylfu", 150, chunk_size=101).hits == want.hits
    assert ob.cache.replay_grid(keys, ["wtinylfu", "lru"], [150, 300])[0].hits == want.hits
    assert ob.cache.curve(keys, "wtinylfu", [150, 300])[0] == want.hits / len(keys)
    # The sketch hashes the keys, not their dense ids: the same ids under other keys change
    # some admission.
    assert ob.cache.replay(np.unique(keys, return_inverse=True)[1], "wtinylfu", 150).hits != want.hits


def libcachesim_mask(keys: np.ndarray, sizes: np.ndarray | None, capacity: int, window: float) -> list[bool]:
    lcs = pytest.importorskip("libcachesim")
    cache = lcs.WTinyLFU(capacity, window_size=window)
    out = []
    unit = [1] * len(keys)
    for k, s in zip(keys.astype(np.uint64).tolist(), unit if sizes is None else sizes.tolist()):
        req = lcs.Request()
        req.obj_id, req.obj_size = k, s
        out.append(bool(cache.get(req)))
    return out


SHAPES = {
    "zipf": lambda: ob.traces.zipf(2000, 0.9, 20_000, seed=1).keys,
    "loop": lambda: ob.traces.loop(230, 20_000).keys,
    "scan": lambda: ob.traces.scan(150, 20_000, 400, 2000, seed=2).keys,
    "drift": lambda: ob.traces.drift(3000, 20_000, 150, 4, seed=3).keys,
}


@pytest.mark.parametrize("window", [0.01, 0.1])
@pytest.mark.parametrize("sized", [False, True])
@pytest.mark.parametrize("shape", [*SHAPES, "cloudphysics"])
def test_libcachesim_hit_for_hit(shape: str, sized: bool, window: float, dataset) -> None:  # type: ignore[no-untyped-def]
    if shape == "cloudphysics":
        keys = ob.traces.read_oracle_general(dataset("cloudphysics")).keys[:30_000]
    else:
        keys = SHAPES[shape]()
    rng = np.random.default_rng(4)
    _, dense = np.unique(keys, return_inverse=True)
    sizes = rng.integers(1, 30, int(dense.max()) + 1)[dense].astype(np.uint64) if sized else None
    capacity = 200 * (15 if sized else 1)
    got = ob.cache.replay(keys, "wtinylfu", capacity, sizes=sizes, mask=True, window=window)
    assert got.mask is not None
    assert got.mask.tolist() == libcachesim_mask(keys, sizes, capacity, window), (shape, sized, window)
