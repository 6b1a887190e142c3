"""Cache replacement: replay a trace through a policy, hit-ratio curves, online caches.

Lecture section 4. Policies (``POLICIES``): ``fifo``, ``lru``, ``lfu``, ``clock``, ``arc``,
``opt``, and the modern ``sieve``, ``s3fifo``, ``twoq`` and the size- and cost-aware ``gdsf``
(libCacheSim's definitions and defaults, miss for miss); their definitions, tie-breaks included, are in :mod:`osbench.cache.reference`, the
readable engine. The native engine runs the same algorithms in Rust on dense ids and agrees
hit for hit.

>>> import osbench as ob
>>> ob.cache.replay(ob.traces.belady_sequence(), "fifo", 3).misses
9
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Hashable, Iterable
from dataclasses import dataclass
from typing import Any, Optional, Protocol

import numpy as np

from osbench import _checks, _native
from osbench.cache import reference
from osbench.errors import ArgumentError, ArgumentTypeError
from osbench.traces import Trace, as_trace

POLICIES: tuple[str, ...] = ("fifo", "lru", "lfu", "clock", "arc", "opt", "sieve", "s3fifo", "twoq", "gdsf")
"""Every policy name, lower case."""

LIBCACHESIM_NAMES: dict[str, str] = {
    "fifo": "FIFO",
    "lru": "LRU",
    "lfu": "LFU",
    "clock": "Clock",
    "arc": "ARC",
    "opt": "Belady",
    "sieve": "Sieve",
    "s3fifo": "S3FIFO",
    "twoq": "TwoQ",
    "gdsf": "GDSF",
}
"""Each policy's class in libCacheSim (and its Python package ``libcachesim``), whose miss
counts equal ours request by request (sizes in bytes: give unit sizes for object counts)."""

MIN_CAPACITY: dict[str, int] = {"s3fifo": 10, "twoq": 4}
"""Policies refusing small capacities: S3-FIFO's small queue (10%) and 2Q's Ain (25%) must
hold at least one object (libCacheSim aborts, or caches nothing, below these)."""

SIZED_POLICIES: tuple[str, ...] = reference.SIZED_POLICIES
"""Policies that take ``sizes=`` (one object size per access; capacity then counts bytes)."""

COSTED_POLICIES: tuple[str, ...] = reference.COSTED_POLICIES
"""Policies that take ``costs=`` (one cost per access: the price of bringing the object in,
e.g. the prefill recompute cost of a KV block; GDSF keeps objects by cost per byte)."""

OFFLINE: frozenset[str] = frozenset({"opt"})
"""Policies that need the future (each access's next use) and so have no online form."""


@dataclass(frozen=True)
class Replay:
    """The outcome of one replay. ``mask`` holds per-access hit flags when asked for.

    For an empty trace every count is 0 and both ratios are 0.0."""

    policy: str
    capacity: int
    accesses: int
    hits: int
    misses: int
    hit_ratio: float
    miss_ratio: float
    mask: Optional[np.ndarray] = None

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["mask"] = None if self.mask is None else self.mask.tolist()
        return d


class OnlineCache(Protocol):
    """What :func:`new` returns: ``access(key, size=None, cost=None) -> bool`` (True on a
    hit), ``len``, ``in``, ``used`` (bytes held with sizes, else objects held), and the
    ``capacity``, ``name``, ``sizes`` and ``costs`` it was made with."""

    def access(self, key: Any, size: Optional[int] = None, cost: Optional[float] = None) -> bool: ...
    def __len__(self) -> int: ...
    def __contains__(self, key: Any) -> bool: ...
    @property
    def used(self) -> int: ...
    @property
    def capacity(self) -> int: ...
    @property
    def name(self) -> str: ...
    @property
    def sizes(self) -> bool: ...
    @property
    def costs(self) -> bool: ...


def _policy(policy: Any) -> str:
    return _checks.choice("policy", policy, POLICIES)


def _capacity(name: str, policy: str, capacity: Any) -> int:
    capacity = _checks.positive_int(name, capacity)
    least = MIN_CAPACITY.get(policy, 1)
    if capacity < least:
        raise ArgumentError(
            f"{name}={capacity} is not accepted for policy={policy!r}: it must be at least {least} "
            "(a queue of the policy would hold no object)"
        )
    return capacity


def _sizes(trace: Any, sizes: Any, policy: str, n: int) -> Optional[np.ndarray]:
    """Validated per-access sizes as uint64, or None for unit sizes."""
    if sizes is None:
        return None
    if policy not in SIZED_POLICIES:
        raise ArgumentError(f"sizes is not accepted for policy={policy!r}: sizes work with {', '.join(SIZED_POLICIES)}")
    if sizes is True:
        sizes = trace.sizes if isinstance(trace, Trace) else None
        if sizes is None:
            raise ArgumentError(
                "sizes=True is not accepted: the trace carries no sizes (pass an array, one size per access)"
            )
    arr = np.asarray(sizes)
    if arr.ndim != 1 or len(arr) != n:
        raise ArgumentError(
            f"sizes is not accepted: it must be 1-D with one size per access ({n}), got shape {arr.shape}"
        )
    if n and (arr.dtype.kind not in "iu" or arr.min() < 1):
        raise ArgumentError("sizes is not accepted: sizes must be positive integers (bytes)")
    return np.ascontiguousarray(arr, dtype=np.uint64)


def _costs(costs: Any, policy: str, n: int) -> Optional[np.ndarray]:
    """Validated per-access costs as float64, or None for none (GDSF's fixed scale)."""
    if costs is None:
        return None
    if policy not in COSTED_POLICIES:
        raise ArgumentError(
            f"costs is not accepted for policy={policy!r}: costs are taken by {', '.join(COSTED_POLICIES)} only"
        )
    arr = np.asarray(costs)
    if arr.ndim != 1 or len(arr) != n:
        raise ArgumentError(
            f"costs is not accepted: it must be 1-D with one cost per access ({n}), got shape {arr.shape}"
        )
    if arr.dtype.kind not in "iuf":
        raise ArgumentTypeError(f"costs is not accepted: costs must be numbers, got dtype {arr.dtype}")
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    bad = ~(np.isfinite(arr) & (arr > 0))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ArgumentError(
            f"costs is not accepted: costs must be finite positive numbers, got {arr[i]!r} at access {i}"
        )
    return arr


def _reference_keys(trace: Any) -> list[Hashable]:
    keys = trace.keys if isinstance(trace, Trace) else trace
    if isinstance(keys, np.ndarray):
        if keys.ndim != 1:
            raise ArgumentError(f"trace is not accepted: it must be 1-D, got an array of shape {keys.shape}")
        return keys.tolist()
    return list(keys)


def _result(policy: str, capacity: int, accesses: int, hits: int, mask: Optional[np.ndarray]) -> Replay:
    hit_ratio = hits / accesses if accesses else 0.0
    miss_ratio = (accesses - hits) / accesses if accesses else 0.0
    return Replay(policy, capacity, accesses, hits, accesses - hits, hit_ratio, miss_ratio, mask)


def stream(policy: str, capacity: int, *, bit_on_insert: bool = False) -> _native.CacheStream:
    """A native replay fed chunk by chunk: ``s.feed(keys, next_access=None)`` returns the
    chunk's hits; ``s.hits``, ``s.accesses``, ``s.n_distinct`` so far. The key map and the
    policy live across chunks, so the pieces of a trace give exactly the hits of one replay
    of the whole. Offline policies (``opt``) need ``next_access`` (int64, one per key: the
    time of the key's next access, negative for never)."""
    policy = _policy(policy)
    capacity = _capacity("capacity", policy, capacity)
    return _native.CacheStream(policy, capacity, bit_on_insert)


def _replay_file(
    path: Any,
    policy: str,
    capacity: int,
    engine: str,
    bit_on_insert: bool,
    chunk_size: int,
    read_options: dict[str, Any],
    sized: bool,
) -> Replay:
    from osbench.traces import formats

    if engine == "reference":
        whole = formats.read(path, **read_options)
        keys = _reference_keys(whole)
        size_arr = _sizes(whole, True if sized else None, policy, len(keys))
        flags = reference.replay(keys, policy, capacity, bit_on_insert, None if size_arr is None else size_arr.tolist())
        return _result(policy, capacity, len(flags), sum(flags), None)
    s = _native.CacheStream(policy, capacity, bit_on_insert)
    for piece in formats.iter_chunks(path, chunk_size=chunk_size, **read_options):
        next_access = None
        if s.needs_future:
            next_access = piece.fields.get("next_access")
            if next_access is None:
                raise ArgumentError(
                    f"policy={policy!r} needs each access's next use: stream an oracleGeneral file (its "
                    "next_access field) or replay the trace in memory"
                )
            next_access = np.ascontiguousarray(next_access, dtype=np.int64)
        size_arr = _sizes(piece, True, policy, len(piece)) if sized else None
        s.feed(piece.native_keys(), next_access, size_arr)
    return _result(policy, capacity, s.accesses, s.hits, None)


def replay(
    trace: Any,
    policy: str,
    capacity: int,
    *,
    mask: bool = False,
    engine: str = "native",
    bit_on_insert: bool = False,
    chunk_size: int = 1 << 20,
    sizes: Any = None,
    costs: Any = None,
    **read_options: Any,
) -> Replay:
    """Replay ``trace`` through a fresh cache of ``capacity`` objects under ``policy``.

    ``trace``: a :class:`~osbench.traces.Trace`, a 1-D array-like of integer keys (the
    reference engine also takes any hashable keys), or the path of a trace file. A file is
    streamed ``chunk_size`` accesses at a time in bounded memory (npy, oracleGeneral and
    struct-binary files, zstd-compressed or not; other formats are read whole), with
    ``read_options`` as :func:`osbench.traces.read` takes them (``format=``, ``struct=``...);
    OPT streams oracleGeneral files, using their ``next_access`` field.
    ``sizes``: one object size per access (an array, or True for the trace's own sizes, a
    file's included), for the policies in ``SIZED_POLICIES``: ``capacity`` then counts bytes,
    as in libCacheSim (an object larger than the cache is never admitted; a miss evicts until
    the newcomer fits; a hit keeps the size the object entered with).
    ``costs``: one cost per access (finite, positive, any unit), for the policies in
    ``COSTED_POLICIES`` (``gdsf``): the price of bringing the object in, e.g. the prefill
    recompute cost of a KV block. GDSF's priority becomes ``L + count * cost / size``; an
    object keeps the cost (and size) it entered with. Without costs, every cost is
    ``reference.GDSF_SCALE`` (1e6, libCacheSim's). Not for files.
    ``mask=True`` keeps per-access hit flags (not for files).
    ``bit_on_insert`` selects the textbook CLOCK (a newcomer's reference bit starts set).
    """
    policy = _policy(policy)
    capacity = _capacity("capacity", policy, capacity)
    engine = _checks.engine(engine)
    if isinstance(trace, (str, os.PathLike)):
        if mask:
            raise ArgumentError(
                "mask=True is not accepted when replaying a file: it streams; read it with osbench.traces.read"
            )
        if costs is not None:
            raise ArgumentError(
                "costs is not accepted when replaying a file: read it with osbench.traces.read and replay it in memory"
            )
        chunk_size = _checks.positive_int("chunk_size", chunk_size)
        if sizes is not None and sizes is not True:
            raise ArgumentError(
                "sizes is not accepted as an array when replaying a file: pass sizes=True for the file's sizes"
            )
        if sizes is True and policy not in SIZED_POLICIES:
            _sizes(None, sizes, policy, 0)
        return _replay_file(trace, policy, capacity, engine, bit_on_insert, chunk_size, read_options, sizes is True)
    if read_options:
        raise ArgumentTypeError(
            f"{', '.join(sorted(read_options))} is not accepted: file options apply when trace is a path"
        )
    if engine == "reference":
        keys = _reference_keys(trace)
        size_arr = _sizes(trace, sizes, policy, len(keys))
        cost_arr = _costs(costs, policy, len(keys))
        flags = reference.replay(
            keys,
            policy,
            capacity,
            bit_on_insert,
            None if size_arr is None else size_arr.tolist(),
            None if cost_arr is None else cost_arr.tolist(),
        )
        hit_mask = np.array(flags, dtype=bool) if mask else None
        return _result(policy, capacity, len(flags), sum(flags), hit_mask)
    t = as_trace(trace)
    ids, n_ids = t.dense()
    size_arr = _sizes(t, sizes, policy, len(ids))
    cost_arr = _costs(costs, policy, len(ids))
    next_use = t.next_use() if policy in OFFLINE else None
    hits, native_mask = _native.cache_replay(
        policy, ids, n_ids, capacity, next_use, mask, bit_on_insert, size_arr, cost_arr
    )
    return _result(policy, capacity, len(ids), int(hits), native_mask)


SAMPLE_BITS = 24
"""Spatial sampling keeps a key when the low 24 bits of its hash fall below rate * 2**24."""

SHARDS_MIN_OBJECTS = 100
"""A spatial sample stands for a capacity only where it holds at least this many objects
(capacity * rate >= 100). Below that, one hot key in or out of the sample moves the hit
ratio by many points, so sampled curves use a larger sample there (see :func:`curve`)."""


def spatial_sample(keys: Any, rate: float, seed: int = 0) -> np.ndarray:
    """The boolean mask of accesses kept by SHARDS spatial sampling (Waldspurger et al.,
    FAST 2015): a key is kept, in all its accesses, when hash(key) mod 2**24 < rate * 2**24.
    The hash is splitmix64 of the key's 64-bit pattern plus ``seed``."""
    rate = _sample_rate(rate)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise ArgumentTypeError(f"seed={seed!r} is not accepted: it must be an integer")
    return _native.cache_spatial_sample(as_trace(keys).native_keys(), rate, int(seed) & (2**64 - 1))


def _sample_rate(rate: Any) -> float:
    if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not 0.0 < float(rate) <= 1.0:
        raise ArgumentError(f"sample={rate!r} is not accepted: it must be a sampling rate in (0, 1]")
    return float(rate)


def _shards_estimate(hits_at: dict[int, float], scaled: float, expected: float, kept: int) -> float:
    """SHARDS_adj: the sample's hits at ``scaled`` objects (linear between the two whole
    capacities around it), counted against the expected sample size, with the difference
    between expected and actual sample size credited to the smallest distances."""
    lo = int(np.floor(scaled))
    frac = scaled - lo
    if lo not in hits_at or (frac > 0 and lo + 1 not in hits_at):
        return float("nan")  # the scaled cache is below the policy's minimum
    h = hits_at[lo] * (1 - frac) + (hits_at[lo + 1] * frac if frac > 0 else 0.0)
    return (h + expected - kept) / expected if expected else 0.0


def _sampled_curve(
    t: Trace, policy: str, caps: list[int], rate: float, bit_on_insert: bool, threads: Optional[int]
) -> np.ndarray:
    """SHARDS (see :func:`curve`). A capacity c holding at least ``SHARDS_MIN_OBJECTS`` objects
    of the sample (c * rate >= 100) is read off the rate sample at c * rate objects, with
    SHARDS_adj. Smaller capacities take a larger sample: for LRU, the exact hits of the
    whole trace, from a stack bounded at the largest such capacity that runs in the same
    pass as the sampling; for other policies, a mini-simulation at the power-of-two rate
    that leaves 100 to 200 objects (the whole trace when c < 200). Ratios are clipped to [0, 1]."""
    keys = t.native_keys()
    n = len(keys)
    if n == 0:
        return np.zeros(len(caps))
    small = [c for c in caps if c * rate < SHARDS_MIN_OBJECTS]
    if policy == "lru":
        kept, exact_hits = _native.cache_lru_shards(keys, rate, 0, max(small, default=0))
        estimates = {c: exact_hits[c - 1] / n for c in small}
    else:
        # Rates in powers of two, so few samples serve many capacities: the scaled cache
        # holds 100 to 200 objects, or the whole trace is replayed from 100 objects down.
        rates = {c: min(1.0, 2.0 ** -int(np.floor(np.log2(c / SHARDS_MIN_OBJECTS)))) for c in small}
        whole = [c for c in small if rates[c] == 1.0]
        estimates = dict(zip(whole, curve(t, policy, whole, bit_on_insert=bit_on_insert, threads=threads).tolist()))
        kept = keys[spatial_sample(keys, rate)]
        for r in sorted(set(rates.values()) - {1.0}):
            at = [c for c in small if rates[c] == r]
            sample = keys[spatial_sample(keys, r)]
            estimates.update(
                zip(at, _sample_ratios(sample, policy, [c * r for c in at], n * r, bit_on_insert, threads))
            )
    large = [c for c in caps if c not in estimates]
    estimates.update(
        zip(large, _sample_ratios(kept, policy, [c * rate for c in large], n * rate, bit_on_insert, threads))
    )
    return np.clip(np.array([estimates[c] for c in caps], dtype=np.float64), 0.0, 1.0)


def _sample_ratios(
    kept: np.ndarray, policy: str, scaled: list[float], expected: float, bit_on_insert: bool, threads: Optional[int]
) -> list[float]:
    """SHARDS_adj estimates at each scaled (fractional) capacity from one sample."""
    least = MIN_CAPACITY.get(policy, 1)
    wanted = sorted({w for s in scaled for w in (int(np.floor(s)), int(np.floor(s)) + 1) if w >= least})
    hits_at: dict[int, float] = {0: 0.0}
    if wanted and len(kept):
        ratios = curve(Trace(kept), policy, wanted, bit_on_insert=bit_on_insert, threads=threads)
        hits_at.update(zip(wanted, (ratios * len(kept)).tolist()))
    return [_shards_estimate(hits_at, s, expected, len(kept)) for s in scaled]


def curve(
    trace: Any,
    policy: str,
    capacities: Iterable[int],
    *,
    engine: str = "native",
    bit_on_insert: bool = False,
    threads: Optional[int] = None,
    sizes: Any = None,
    costs: Any = None,
    sample: Optional[float] = None,
) -> np.ndarray:
    """Hit ratios of ``policy`` at each capacity (a float array, in the order given).

    LRU and OPT are stack algorithms: the native engine computes all capacities in one pass
    over the trace (Mattson stack distances). Other policies replay once per capacity, on
    ``threads`` threads (default: every core). ``sizes`` and ``costs`` as in :func:`replay`
    (with sizes, capacities count bytes; with either, every policy replays once per capacity).

    ``sample=rate`` (0 < rate <= 1) estimates the curve from a SHARDS spatial sample
    (:func:`spatial_sample`, Waldspurger et al., FAST 2015): the accesses to about ``rate``
    of the keys, replayed at capacities ``capacity * rate`` (LRU: the paper's scaled stack
    distances; other policies: a mini-simulation), with the paper's SHARDS_adj correction.
    Where ``capacity * rate`` would be under ``SHARDS_MIN_OBJECTS`` (100) objects, a sample
    that small is dominated by whether a few hot keys fell in it, so a larger one is used:
    LRU counts those capacities exactly, with a stack bounded at the largest of them in the
    same pass as the sampling (memory ~ that capacity, time ~ one replay); other policies
    sample at the power-of-two rate that leaves 100 to 200 objects (the whole trace under 200). Asking only for
    capacities of at least ``100 / rate`` objects keeps the whole estimate on the small
    sample. Native engine, unit sizes.
    """
    policy = _policy(policy)
    engine = _checks.engine(engine)
    caps = [_capacity("capacities", policy, c) for c in capacities]
    if threads is not None:
        threads = _checks.positive_int("threads", threads, maximum=1024)
    if sample is not None:
        sample = _sample_rate(sample)
        if sizes is not None or costs is not None or engine != "native":
            raise ArgumentError(
                "sample is not accepted with sizes, costs or engine='reference': sampled curves are native, unit-size"
            )
        if policy in OFFLINE:
            raise ArgumentError(f"sample is not accepted for policy={policy!r}: offline policies need the whole future")
        return _sampled_curve(as_trace(trace), policy, caps, sample, bit_on_insert, threads)
    if engine == "reference":
        keys = _reference_keys(trace)
        n = len(keys)
        size_arr = _sizes(trace, sizes, policy, n)
        cost_arr = _costs(costs, policy, n)
        size_list = None if size_arr is None else size_arr.tolist()
        cost_list = None if cost_arr is None else cost_arr.tolist()
        return np.array(
            [
                sum(reference.replay(keys, policy, c, bit_on_insert, size_list, cost_list)) / n if n else 0.0
                for c in caps
            ]
        )
    t = as_trace(trace)
    ids, n_ids = t.dense()
    size_arr = _sizes(t, sizes, policy, len(ids))
    cost_arr = _costs(costs, policy, len(ids))
    next_use = t.next_use() if policy in OFFLINE else None
    hits = _native.cache_curve(
        policy, ids, n_ids, np.array(caps, dtype=np.uint64), next_use, bit_on_insert, threads, size_arr, cost_arr
    )
    n = len(ids)
    return hits / n if n else np.zeros(len(caps))


class _ReferenceOnline:
    """A reference-engine cache behind the online interface of the native ``OnlineCache``:
    the same ``access(key, size=None, cost=None)``, and the same argument checks (the native
    ones), so both engines fail the same way."""

    def __init__(self, policy: str, capacity: int, bit_on_insert: bool, sizes: bool, costs: bool) -> None:
        self._cache = reference.make(policy, capacity, bit_on_insert)
        self.capacity, self.name, self.sizes, self.costs = capacity, policy, sizes, costs

    def access(self, key: Any, size: Optional[int] = None, cost: Optional[float] = None) -> bool:
        size, cost = _native.cache_online_args(size, cost, self.sizes, self.costs)
        if cost is not None:
            return bool(self._cache.access(key, None, 1 if size is None else size, cost))
        if size is not None:
            return bool(self._cache.access(key, None, size))
        return bool(self._cache.access(key))

    @property
    def used(self) -> int:
        return int(self._cache.used) if self.sizes else len(self._cache)

    def __len__(self) -> int:
        return len(self._cache)

    def __contains__(self, key: Any) -> bool:
        return key in self._cache


def new(
    policy: str,
    capacity: int,
    *,
    engine: str = "native",
    bit_on_insert: bool = False,
    sizes: bool = False,
    costs: bool = False,
) -> OnlineCache:
    """An online cache: ``c.access(key)`` returns True on a hit; ``len(c)``, ``key in c``,
    ``c.used``.

    ``sizes=True``: ``capacity`` counts bytes and every access gives the object's size,
    ``c.access(key, size)`` (a positive integer), as in :func:`replay` (an object larger than
    the cache is never admitted; a hit keeps the size the object entered with); ``c.used``
    is the bytes held (without sizes: the objects held).
    ``costs=True`` (``gdsf`` only, see ``COSTED_POLICIES``): every access gives the object's
    cost, ``c.access(key, cost=c)`` or ``c.access(key, size, c)`` (finite, positive); an
    object keeps the cost it entered with.
    Native keys are integers in [-2**63, 2**64); reference keys are any hashable.
    ``opt`` needs the future and has no online form."""
    policy = _policy(policy)
    capacity = _capacity("capacity", policy, capacity)
    engine = _checks.engine(engine)
    for name, flag in (("sizes", sizes), ("costs", costs)):
        if not isinstance(flag, bool):
            raise ArgumentTypeError(f"{name}={flag!r} is not accepted: it must be True or False")
    if policy in OFFLINE:
        raise ArgumentError(
            f"policy={policy!r} needs the future (each access's next use), so it has no online form; "
            "use osbench.cache.replay"
        )
    if costs and policy not in COSTED_POLICIES:
        raise ArgumentError(f"costs=True is not accepted for policy={policy!r}: only gdsf takes costs")
    if engine == "reference":
        return _ReferenceOnline(policy, capacity, bit_on_insert, sizes, costs)
    return _native.OnlineCache(policy, capacity, bit_on_insert, sizes, costs)


from osbench.cache import sweep  # noqa: E402  (studies over many cells; needs the names above)

__all__ = [
    "COSTED_POLICIES",
    "LIBCACHESIM_NAMES",
    "MIN_CAPACITY",
    "OFFLINE",
    "POLICIES",
    "SHARDS_MIN_OBJECTS",
    "SIZED_POLICIES",
    "Replay",
    "curve",
    "new",
    "reference",
    "replay",
    "spatial_sample",
    "stream",
    "sweep",
]
