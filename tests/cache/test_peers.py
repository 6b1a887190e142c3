"""Golden miss counts from the published tools: libCacheSim (and cachetools' LRU)."""

from __future__ import annotations

import numpy as np
import pytest

import osbench as ob
from osbench.cache import LIBCACHESIM_NAMES
from osbench.cache._args import min_capacity

NEW_POLICIES = ["sieve", "s3fifo", "twoq", "gdsf", "size", "slru", "lruk", "mq", "clockpro", "clock2qplus"]


def libcachesim_misses(trace: ob.traces.Trace, policy: str, capacity: int, folder) -> int:  # type: ignore[no-untyped-def]
    lcs = pytest.importorskip("libcachesim")
    path = folder / "trace.oracleGeneral.bin"
    if not path.exists():
        ob.traces.write_oracle_general(trace, path, sizes=np.ones(len(trace), dtype=np.uint32))
    reader = lcs.TraceReader(str(path), lcs.TraceType.ORACLE_GENERAL_TRACE)
    cache = getattr(lcs, LIBCACHESIM_NAMES[policy])(capacity)
    miss_ratio, _ = cache.process_trace(reader)
    return round(miss_ratio * len(trace))


@pytest.mark.parametrize("policy", list(LIBCACHESIM_NAMES))
@pytest.mark.parametrize("capacity", [7, 12, 100, 1000])
def test_libcachesim_miss_counts_equal_ours(policy: str, capacity: int, tmp_path) -> None:  # type: ignore[no-untyped-def]
    if capacity < ob.cache.MIN_CAPACITY.get(policy, 1):
        pytest.skip(f"libcachesim's {policy} holds nothing at capacity {capacity}; ours refuses it")
    trace = ob.traces.zipf(3000, 0.9, 40_000, seed=capacity)
    assert libcachesim_misses(trace, policy, capacity, tmp_path) == ob.cache.replay(trace, policy, capacity).misses


@pytest.mark.parametrize("policy", list(LIBCACHESIM_NAMES))
def test_libcachesim_on_the_real_trace(policy: str, dataset, tmp_path) -> None:  # type: ignore[no-untyped-def]
    trace = ob.traces.read_oracle_general(dataset("cloudphysics"))
    unit = ob.traces.Trace(trace.keys)  # unit sizes: capacity counts objects
    assert libcachesim_misses(unit, policy, 2000, tmp_path) == ob.cache.replay(unit, policy, 2000).misses


def libcachesim_hits(keys: list[int], policy: str, capacity: int) -> list[bool]:
    """Request by request through libcachesim's own get(), unit sizes."""
    lcs = pytest.importorskip("libcachesim")
    cache = getattr(lcs, LIBCACHESIM_NAMES[policy])(capacity)
    flags = []
    for k in keys:
        req = lcs.Request()
        req.obj_id, req.obj_size = k, 1
        flags.append(bool(cache.get(req)))
    return flags


@pytest.mark.parametrize("policy", NEW_POLICIES)
def test_libcachesim_hit_for_hit_on_small_random_traces(policy: str) -> None:
    rng = np.random.default_rng(11)
    for trial in range(40):
        capacity = int(rng.integers(ob.cache.MIN_CAPACITY.get(policy, 1), 40))
        n = int(rng.integers(2, 60))
        keys = (rng.zipf(1.3, 300) % n if trial % 2 else rng.integers(0, n, 300)).tolist()
        want = libcachesim_hits(keys, policy, capacity)
        got = ob.cache.replay(np.array(keys), policy, capacity, mask=True).mask
        assert got is not None and got.tolist() == want, (policy, capacity, n)


# LIRS at two objects: a block that left S by a demotion while still in NH enters NH again
# when it next leaves Q, so NH holds two copies of it (libCacheSim's lists are LRU caches whose
# hash table chains a key inserted twice); the old copy leaves from the bottom in its turn.
TWO_COPIES = [0, 0, 2, 0, 1, 2, 2, 2, 0, 0, 0, 2, 2, 4, 2, 0, 0, 4, 0, 0, 1, 2, 4, 2, 0, 0, 0, 4, 4, 0, 2, 0, 2, 0]
TWO_COPIES += [2, 2, 0, 1, 0, 4, 0, 2, 4, 4, 0, 4, 0, 2, 1, 1, 0, 2, 1, 1, 2, 4, 0, 0, 2, 4, 0, 4, 0, 0, 4, 3, 2, 4]
TWO_COPIES += [5, 0, 4, 4, 4, 4, 0, 1]


def test_lirs_keeps_a_second_copy_of_a_block_as_libcachesim_does() -> None:
    want = libcachesim_hits(TWO_COPIES, "lirs", 2)
    for engine in ("native", "reference"):
        got = ob.cache.replay(np.array(TWO_COPIES), "lirs", 2, mask=True, engine=engine).mask
        assert got is not None and got.tolist() == want, engine
    native, reference = ob.cache.new("lirs", 2), ob.cache.new("lirs", 2, engine="reference")
    for k in TWO_COPIES:
        assert native.access(k) == reference.access(k)
        assert (len(native), native.used) == (len(reference), reference.used)


# Parameters away from their defaults: (policy, our keywords, libCacheSim's parameter string,
# as its C init parses it; the Python classes do not pass every one of them).
PARAMETER_CASES = [
    ("slru", {"segments": 1}, "n-seg=1"),
    ("slru", {"segments": 2}, "n-seg=2"),
    ("slru", {"segments": 3}, "n-seg=3"),
    ("slru", {"segments": 16}, "n-seg=16"),
    ("lruk", {"k": 1}, "k=1"),
    ("lruk", {"k": 3}, "k=3"),
    ("lruk", {"k": 5}, "k=5"),
    ("mq", {"n_queue": 1, "lifetime": 1, "qout_size_ratio": 1.0}, "n-queue=1,lifetime=1,Qout-size-ratio=1.0"),
    ("mq", {"n_queue": 2, "lifetime": 5, "qout_size_ratio": 0.5}, "n-queue=2,lifetime=5,Qout-size-ratio=0.5"),
    ("mq", {"n_queue": 64, "lifetime": 3, "qout_size_ratio": 0.1}, "n-queue=64,lifetime=3,Qout-size-ratio=0.1"),
]


def libcachesim_with(policy: str, capacity: int, params: str):  # type: ignore[no-untyped-def]
    """libCacheSim's class for ``policy``, built by its C init with ``params``."""
    lcs = pytest.importorskip("libcachesim")
    from libcachesim import cache as lcs_cache

    cls = getattr(lcs, LIBCACHESIM_NAMES[policy])
    init = {"SLRU": "SLRU_init", "LRUK": "LRU_K_init", "MQ": "MQ_init"}[cls.__name__]
    common = lcs_cache._create_common_params(capacity, 86400 * 300, 24, False, None)
    cache = object.__new__(cls)
    lcs_cache.CacheBase.__init__(cache, getattr(lcs_cache, init)(common, params))
    return cache


@pytest.mark.parametrize(("policy", "ours", "theirs"), PARAMETER_CASES, ids=[f"{p}-{t}" for p, _, t in PARAMETER_CASES])
def test_libcachesim_hit_for_hit_with_parameters(policy: str, ours: dict, theirs: str) -> None:  # type: ignore[type-arg]
    lcs = pytest.importorskip("libcachesim")
    rng = np.random.default_rng(13)
    for trial in range(40):
        least = min_capacity(policy, ours)
        sized = trial % 3 == 0
        capacity = int(rng.integers(max(least, 1), 40 * (20 if sized else 1)))
        n = int(rng.integers(2, 60))
        keys = (rng.zipf(1.3, 300) % n if trial % 2 else rng.integers(0, n, 300)).tolist()
        per_object = rng.integers(1, 40, n) if sized else np.ones(n, dtype=int)
        sizes = [int(per_object[k]) for k in keys]
        got = ob.cache.replay(np.array(keys), policy, capacity, sizes=sizes if sized else None, mask=True, **ours)
        cache = libcachesim_with(policy, capacity, theirs)
        want = []
        for k, s in zip(keys, sizes):
            req = lcs.Request()
            req.obj_id, req.obj_size = k, s
            want.append(bool(cache.get(req)))
        assert got.mask is not None and got.mask.tolist() == want, (policy, ours, capacity, sized)


# FlashProb is randomised (an object leaving RAM enters flash one time in int(1 / p)), but at
# disk_admit_prob above 0.5 int(1 / p) is 1: every object goes to flash, no draw decides
# anything, and ours must equal libCacheSim's miss for miss, unit and sized, whatever the
# split of the capacity between RAM and flash. (At any probability, tests/cache/test_flashprob.py.)
FLASHPROB_RATIOS = [0.05, 0.1, 0.3, 0.5, 0.9, 0.99]


@pytest.mark.parametrize("ratio", FLASHPROB_RATIOS)
def test_flashprob_admitting_every_object_is_libcachesims_hit_for_hit(ratio: float) -> None:
    lcs = pytest.importorskip("libcachesim")
    rng = np.random.default_rng(17)
    least = min_capacity("flashprob", {"ram_size_ratio": ratio})
    for trial in range(40):
        sized = trial % 2 == 0
        prob = 1.0 if trial % 4 < 2 else 0.6
        capacity = int(rng.integers(least, least + 40 * (20 if sized else 1)))
        n = int(rng.integers(2, 80))
        keys = (rng.zipf(1.3, 400) % n if trial % 3 else rng.integers(0, n, 400)).tolist()
        per_object = rng.integers(1, 40, n) if sized else np.ones(n, dtype=int)
        sizes = [int(per_object[k]) for k in keys]
        cache = lcs.FlashProb(capacity, ram_size_ratio=ratio, disk_admit_prob=prob)
        want = []
        for k, s in zip(keys, sizes):
            req = lcs.Request()
            req.obj_id, req.obj_size = k, s
            want.append(bool(cache.get(req)))
        params = {"ram_size_ratio": ratio, "disk_admit_prob": prob}
        got = ob.cache.replay(
            np.array(keys), "flashprob", capacity, sizes=sizes if sized else None, mask=True, **params
        )
        assert got.mask is not None and got.mask.tolist() == want, (ratio, prob, capacity, sized)


def test_flashprob_admitting_every_object_on_the_real_trace(dataset, tmp_path) -> None:  # type: ignore[no-untyped-def]
    lcs = pytest.importorskip("libcachesim")
    path = dataset("cloudphysics")
    trace = ob.traces.read(path)
    unit = ob.traces.Trace(trace.keys)
    unit_path = tmp_path / "unit.oracleGeneral.bin"
    ob.traces.write_oracle_general(unit, unit_path, sizes=np.ones(len(unit), dtype=np.uint32))
    for source, ours, capacity, sizes in [
        (unit_path, unit, 2000, None),
        (path, trace, 1 << 20, True),
        (path, trace, 2000 * 4096, True),
    ]:
        reader = lcs.TraceReader(str(source), lcs.TraceType.ORACLE_GENERAL_TRACE)
        miss_ratio, _ = lcs.FlashProb(capacity, disk_admit_prob=1.0).process_trace(reader)
        got = ob.cache.replay(ours, "flashprob", capacity, sizes=sizes, disk_admit_prob=1.0).misses
        assert round(miss_ratio * len(trace)) == got, capacity


def test_cachetools_lru_agrees() -> None:
    cachetools = pytest.importorskip("cachetools")
    trace = ob.traces.zipf(500, 1.0, 20_000, seed=4)
    cache = cachetools.LRUCache(maxsize=64)
    hits = 0
    for k in trace.keys.tolist():
        if k in cache:
            cache[k]  # a read refreshes recency
            hits += 1
        else:
            cache[k] = True
    assert hits == ob.cache.replay(trace, "lru", 64).hits


@pytest.mark.parametrize("policy", list(LIBCACHESIM_NAMES))
def test_libcachesim_with_real_sizes(policy: str, dataset) -> None:  # type: ignore[no-untyped-def]
    """Capacity in bytes, each access with its own size, straight from the real file."""
    lcs = pytest.importorskip("libcachesim")
    path = dataset("cloudphysics")
    trace = ob.traces.read(path)
    for capacity in (1 << 20, 2000 * 4096):
        reader = lcs.TraceReader(str(path), lcs.TraceType.ORACLE_GENERAL_TRACE)
        miss_ratio, _ = getattr(lcs, LIBCACHESIM_NAMES[policy])(capacity).process_trace(reader)
        assert round(miss_ratio * len(trace)) == ob.cache.replay(trace, policy, capacity, sizes=True).misses


@pytest.mark.parametrize("policy", list(LIBCACHESIM_NAMES))
def test_libcachesim_sized_hit_for_hit(policy: str) -> None:
    lcs = pytest.importorskip("libcachesim")
    rng = np.random.default_rng(5)
    for _ in range(20):
        n, capacity = int(rng.integers(2, 50)), int(rng.integers(1, 150))
        capacity = max(capacity, ob.cache.MIN_CAPACITY.get(policy, 1))
        keys = rng.integers(0, n, 300).tolist()
        per_object = rng.integers(1, 40, n)
        sizes = [int(per_object[k]) for k in keys]
        future = ob.traces.next_use_reference(keys)  # for opt
        cache = getattr(lcs, LIBCACHESIM_NAMES[policy])(capacity)
        want = []
        for k, s, nxt in zip(keys, sizes, future):
            req = lcs.Request()
            req.obj_id, req.obj_size = k, s
            req.next_access_vtime = nxt if nxt < int(ob.traces.NEVER) else 2**63 - 1
            want.append(bool(cache.get(req)))
        got = ob.cache.replay(np.array(keys), policy, capacity, sizes=sizes, mask=True).mask
        assert got is not None and got.tolist() == want, (policy, capacity)


def test_every_policy_names_its_libcachesim_class() -> None:
    exact = [p for p in ob.cache.POLICIES if ob.cache.TABLE[p].libcachesim and not ob.cache.TABLE[p].randomised]
    assert list(LIBCACHESIM_NAMES) == exact
    # These agree with a libCacheSim class (a policy added later may have none).
    assert {"fifo", "lru", "lfu", "clock", "arc", "opt", "sieve", "s3fifo", "twoq", "gdsf"} <= set(LIBCACHESIM_NAMES)
    lcs = pytest.importorskip("libcachesim")
    for policy, name in LIBCACHESIM_NAMES.items():
        assert isinstance(getattr(lcs, name, None), type), (policy, name)


def belady_size_shape(shape: str, dataset) -> np.ndarray:  # type: ignore[no-untyped-def]
    if shape == "cloudphysics":
        return ob.traces.read_oracle_general(dataset("cloudphysics")).keys[:5000]
    return {
        "zipf": lambda: ob.traces.zipf(60, 0.9, 3000, seed=1),
        "loop": lambda: ob.traces.loop(12, 3000),
        "scan": lambda: ob.traces.scan(20, 3000, 30, 200, seed=2),
    }[shape]().keys


@pytest.mark.parametrize("sized", [False, True])
@pytest.mark.parametrize("shape", ["zipf", "loop", "scan", "cloudphysics"])
def test_belady_size_equals_libcachesim_where_its_sample_sees_every_object(shape: str, sized: bool, dataset) -> None:  # type: ignore[no-untyped-def]
    """libCacheSim's BeladySize samples objects at each eviction (randomly, from a process-wide
    random state), so the table names no class for it; on a cache of a few objects with many
    samples its sample holds every object, and it must then agree request by request. Sizes
    are distinct primes above the trace's length, so that no two objects ever score the same
    (a tie is settled by libCacheSim's sample order, at random). A small hash table keeps its
    sampling fast; a capacity of a few objects keeps a second one cached whenever the nearest
    next use is the next access (libCacheSim searches for ever when that object is alone)."""
    lcs = pytest.importorskip("libcachesim")
    keys = np.asarray(belady_size_shape(shape, dataset), dtype=np.uint64)
    _, dense = np.unique(keys, return_inverse=True)
    primes = [p for p in range(len(keys) | 1, 20 * len(keys), 2) if all(p % d for d in range(3, int(p**0.5) + 1, 2))]
    sizes = [primes[i] for i in dense.tolist()] if sized else [1] * len(keys)
    capacity = 3 * max(sizes) if sized else 8  # every object at most a third of the cache
    future = ob.traces.next_use_reference(keys.tolist())
    cache = lcs.BeladySize(capacity, n_samples=2048, hashpower=16)
    want = []
    for k, s, nxt in zip(keys.tolist(), sizes, future):
        req = lcs.Request()
        req.obj_id, req.obj_size = k, s
        req.next_access_vtime = nxt if nxt < int(ob.traces.NEVER) else 2**63 - 1
        want.append(bool(cache.get(req)))
    got = ob.cache.replay(keys, "belady-size", capacity, sizes=sizes if sized else None, mask=True).mask
    assert got is not None and got.tolist() == want, (shape, sized)
    assert 0 < sum(want) < len(keys)
