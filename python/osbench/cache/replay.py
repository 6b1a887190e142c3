"""Replaying a trace through one cache: in memory (either engine) or streamed from a file; through
many (policy, capacity) cells at once on every CPU (:func:`replay_grid`)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from osbench import _checks, _native
from osbench._record import Record
from osbench.cache import _args, reference
from osbench.cache import admission as _admission
from osbench.cache.policies import HASHES_KEYS, OFFLINE, PARAMETERS, TABLE
from osbench.cache.reference import admission as ref_admission
from osbench.errors import ArgumentError, ArgumentTypeError, TraceFileError
from osbench.traces import as_trace, formats


@dataclass(frozen=True)
class Replay(Record):
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
        d = super().to_dict()
        d["mask"] = None if self.mask is None else self.mask.tolist()
        return d


def _result(policy: str, capacity: int, accesses: int, hits: int, mask: Optional[np.ndarray]) -> Replay:
    hit_ratio = hits / accesses if accesses else 0.0
    miss_ratio = (accesses - hits) / accesses if accesses else 0.0
    return Replay(policy, capacity, accesses, hits, accesses - hits, hit_ratio, miss_ratio, mask)


def stream(
    policy: str,
    capacity: int,
    *,
    admission: Optional[str] = None,
    admission_params: Optional[dict[str, Any]] = None,
    **parameters: Any,
) -> _native.CacheStream:
    """A native replay fed chunk by chunk: ``s.feed(keys, next_access=None)`` returns the
    chunk's hits; ``s.hits``, ``s.accesses``, ``s.n_distinct`` so far. The key map and the
    policy live across chunks, so the pieces of a trace give exactly the hits of one replay
    of the whole; memory is the policy's state and a compact key map (``s.key_map_bytes``,
    13 to 19 bytes a distinct key). Offline policies (``opt``) need ``next_access`` (int64,
    one per key: the index of the key's next access, counted from the start of the stream
    plus a fixed offset, 0 as osbench writes it or 1 as libCacheSim does; negative for
    never): it is checked against the keys as they come, and ``s.finish()`` at the end checks
    that every promised access came (``s.bad_access`` is the access a refusal is about).
    Chunks go in one at a time, in order: a ``feed`` while another thread's runs raises
    ``RuntimeError``. ``parameters``: the policy's, and ``admission``, ``admission_params``: a
    filter in front of the cache, as for :func:`replay`."""
    policy = _args.policy(policy)
    capacity = _checks.positive_int("capacity", capacity)
    parameters = _args.parameters(policy, parameters, [capacity])
    name, filter_params = _admission.check(admission, admission_params)
    return _native.CacheStream(policy, capacity, parameters, name, filter_params)


def _replay_file(
    path: Any,
    policy: str,
    capacity: int,
    engine: str,
    parameters: dict[str, Any],
    chunk_size: int,
    read_options: dict[str, Any],
    sized: bool,
    admission: tuple[Optional[str], dict[str, Any]],
) -> Replay:
    if engine == "reference":
        whole = formats.read(path, **read_options)
        keys = _args.reference_keys(whole)
        size_arr = _args.sizes(whole, True if sized else None, len(keys))
        sizes = None if size_arr is None else size_arr.tolist()
        flags = _reference_replay(keys, policy, capacity, sizes, None, parameters, admission)
        return _result(policy, capacity, len(flags), sum(flags), None)
    s = _native.CacheStream(policy, capacity, parameters, *admission)
    fmt = read_options.pop("format", None)
    where = os.fspath(path)
    for piece in formats.file_pieces(path, fmt, chunk_size, read_options):
        where = piece.path
        _feed(s, policy, piece, sized)
    try:
        s.finish()
    except ArgumentError as exc:
        raise TraceFileError(f"{where}: the end of the data: {exc}") from None
    return _result(policy, capacity, s.accesses, s.hits, None)


def _feed(s: _native.CacheStream, policy: str, piece: formats.Piece, sized: bool) -> None:
    """One piece of a file into the stream; its data refused names the file and the place."""
    t = piece.trace
    next_access = None
    if s.needs_future:
        next_access = t.fields.get("next_access")
        if next_access is None:
            raise ArgumentError(
                f"policy={policy!r} needs each access's next use: stream an oracleGeneral file (its "
                "next_access field) or replay the trace in memory"
            )
        next_access = np.ascontiguousarray(next_access, dtype=np.int64)
    size_arr = None
    if sized:
        if t.sizes is None:
            raise ArgumentError("sizes=True is not accepted: the file's format carries no sizes")
        bad = np.flatnonzero(t.sizes < 1) if t.sizes.dtype.kind in "iu" else np.arange(len(t.sizes))
        if len(bad):
            raise piece.error(int(bad[0]), f"size {t.sizes[bad[0]]!r} is not a size (>= 1)")
        size_arr = np.ascontiguousarray(t.sizes, dtype=np.uint64)
    try:
        s.feed(t.native_keys(), next_access, size_arr)
    except ArgumentError as exc:
        at = s.bad_access
        if at is None:
            raise
        raise piece.error(at - piece.start, str(exc)) from None


def _reference_replay(
    keys: list[Any],
    policy: str,
    capacity: int,
    sizes: Optional[list[int]],
    costs: Optional[list[float]],
    parameters: dict[str, Any],
    admission: tuple[Optional[str], dict[str, Any]],
) -> list[bool]:
    """The reference engine's hit flags, behind the filter if one is named."""
    name, filter_params = admission
    if name is None:
        return reference.replay(keys, policy, capacity, sizes, costs, **parameters)
    return ref_admission.replay(keys, policy, capacity, name, filter_params, sizes, costs, **parameters)


def replay(
    trace: Any,
    policy: str,
    capacity: int,
    *,
    mask: bool = False,
    engine: str = "native",
    chunk_size: int = 1 << 20,
    sizes: Any = None,
    costs: Any = None,
    admission: Optional[str] = None,
    admission_params: Optional[dict[str, Any]] = None,
    **options: Any,
) -> Replay:
    """Replay ``trace`` through a fresh cache of ``capacity`` objects under ``policy``.

    ``trace``: a :class:`~osbench.traces.Trace`, a 1-D array-like of integer keys (the
    reference engine also takes any hashable keys), or the path of a trace file. A file is
    streamed ``chunk_size`` accesses at a time in bounded memory (npy, oracleGeneral and
    struct-binary files, zstd-compressed or not; other formats are read whole), with
    ``read_options`` as :func:`osbench.traces.read` takes them (``format=``, ``struct=``...);
    OPT streams oracleGeneral files, using their ``next_access`` field.
    ``sizes``: one object size per access (an array, or True for the trace's own sizes, a
    file's included), for every policy: ``capacity`` then counts bytes, as in libCacheSim (an
    object larger than the cache is never admitted; a miss evicts until the newcomer fits; a
    hit keeps the size the object entered with).
    ``costs``: one cost per access (finite, positive, any unit), for the policies in
    ``COSTED_POLICIES`` (``gdsf``): the price of bringing the object in, e.g. the prefill
    recompute cost of a KV block. GDSF's priority becomes ``L + count * cost / size``; an
    object keeps the cost (and size) it entered with. Without costs, every cost is
    ``reference.GDSF_SCALE`` (1e6, libCacheSim's). Not for files.
    ``admission``: an admission filter (``ADMISSIONS``: ``size``, ``prob``, ``sizeprob``,
    ``bloom``, ``adaptsize``) in front of the cache, with its parameters in
    ``admission_params`` (``ADMISSION_TABLE[name].params``: ``{"size": 4096}``,
    ``{"prob": 0.1, "seed": 3}``...): on a miss the filter decides whether the object
    enters; a rejected object is a miss left out of the cache (libCacheSim's admissioners,
    miss for miss where they draw no random numbers).
    ``mask=True`` keeps per-access hit flags (not for files).
    ``options``: the policy's parameters (``PARAMETERS``, with their defaults and ranges in
    ``TABLE[policy].params``: ``bit_on_insert=True`` the textbook CLOCK, ``k=`` LRU-K's K...;
    the policies that do not read one refuse it), and for a file the read options.
    """
    policy = _args.policy(policy)
    capacity = _checks.positive_int("capacity", capacity)
    given, read_options = _args.split(options)
    parameters = _args.parameters(policy, given, [capacity])
    gate = _admission.check(admission, admission_params)
    engine = _checks.engine(engine)
    mask = _checks.flag("mask", mask)
    if isinstance(trace, (str, os.PathLike)):
        if mask:
            raise ArgumentError(
                "mask=True is not accepted when replaying a file: it streams; read it with osbench.traces.read"
            )
        if costs is not None:
            raise ArgumentError(
                "costs is not accepted when replaying a file: read it with osbench.traces.read and replay it in memory"
            )
        chunk_size = _checks.positive_int("chunk_size", chunk_size, maximum=formats.MAX_CHUNK)
        if sizes is not None and sizes is not True:
            raise ArgumentError(
                "sizes is not accepted as an array when replaying a file: pass sizes=True for the file's sizes"
            )
        return _replay_file(trace, policy, capacity, engine, parameters, chunk_size, read_options, sizes is True, gate)
    if read_options:
        name = sorted(read_options)[0]
        own = ", ".join(TABLE[policy].params) or "none"
        raise ArgumentTypeError(
            f"{name}={read_options[name]!r} is not accepted: it is not a parameter of {policy} (its parameters: "
            f"{own}), and the file options apply only when trace is a path"
        )
    if engine == "reference":
        keys = _args.reference_keys(trace)
        size_arr = _args.sizes(trace, sizes, len(keys))
        cost_arr = _args.costs(costs, policy, len(keys))
        flags = _reference_replay(
            keys,
            policy,
            capacity,
            None if size_arr is None else size_arr.tolist(),
            None if cost_arr is None else cost_arr.tolist(),
            parameters,
            gate,
        )
        hit_mask = np.array(flags, dtype=bool) if mask else None
        return _result(policy, capacity, len(flags), sum(flags), hit_mask)
    t = as_trace(trace)
    ids, n_ids = t.dense()
    size_arr = _args.sizes(t, sizes, len(ids))
    cost_arr = _args.costs(costs, policy, len(ids))
    next_use = t.next_use() if policy in OFFLINE else None
    original = t.id_keys() if policy in HASHES_KEYS else None
    hits, native_mask = _native.cache_replay(
        policy, ids, n_ids, capacity, next_use, mask, parameters, size_arr, cost_arr, *gate, keys=original
    )
    return _result(policy, capacity, len(ids), int(hits), native_mask)


def replay_grid(
    trace: Any,
    policies: Iterable[str],
    capacities: Iterable[int],
    *,
    threads: Optional[int] = None,
    sizes: Any = None,
    costs: Any = None,
    admission: Optional[str] = None,
    admission_params: Optional[dict[str, Any]] = None,
    **parameters: Any,
) -> list[Replay]:
    """Replay ``trace`` through a fresh cache for every pair of a policy in ``policies`` and a
    capacity in ``capacities``: a list of :class:`Replay`, policy by policy, each policy's
    capacities in the order given. The same numbers as one :func:`replay` per pair, computed
    in parallel by the native engine on ``threads`` threads (default: every CPU this process
    may use, ``len(os.sched_getaffinity(0))``), the trace mapped to dense ids once.

    ``trace`` as for :func:`replay` in memory (a Trace or an array of keys; not a file);
    ``sizes``, ``costs`` and the policy ``parameters`` as for :func:`replay`, and every policy
    must accept them; ``admission`` and ``admission_params`` as for :func:`replay` (each cell
    behind its own fresh filter)."""
    policies = [_args.policy(p) for p in ([policies] if isinstance(policies, str) else policies)]
    caps = [
        _checks.positive_int("capacities", c)
        for c in (capacities if isinstance(capacities, Iterable) else [capacities])
    ]
    for p in policies:
        _args.parameters(p, parameters, caps, "capacities")
    # Every policy reads these (the others were flags at their defaults, dropped by the check).
    given = {k: v for k, v in parameters.items() if all(k in PARAMETERS[p] for p in policies)}
    gate = _admission.check(admission, admission_params)
    cells = [(p, c) for p in policies for c in caps]
    if threads is not None:
        threads = _checks.positive_int("threads", threads, maximum=1024)
    if isinstance(trace, (str, os.PathLike)):
        raise ArgumentError(
            "trace is not accepted as a path by replay_grid: read it with osbench.traces.read and pass the Trace"
        )
    t = as_trace(trace)
    ids, n_ids = t.dense()
    size_arr = _args.sizes(t, sizes, len(ids))
    cost_arr = None
    for p in policies:
        cost_arr = _args.costs(costs, p, len(ids))
    next_use = t.next_use() if any(p in OFFLINE for p in policies) else None
    hits = _native.cache_replay_grid(
        [p for p, _ in cells],
        np.array([c for _, c in cells], dtype=np.uint64),
        ids,
        n_ids,
        next_use,
        given,
        threads,
        size_arr,
        cost_arr,
        *gate,
        keys=t.id_keys() if any(p in HASHES_KEYS for p in policies) else None,
    )
    return [_result(p, c, len(ids), int(h), None) for (p, c), h in zip(cells, hits.tolist())]
