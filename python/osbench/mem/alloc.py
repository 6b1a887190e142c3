"""The event-driven allocation simulator (lecture section 3.3, demos 2 and 3).

Requests arrive, hold memory while they live, possibly grow, and leave. Strategies
(``STRATEGIES``):

- ``first``, ``best``, ``worst``: contiguous blocks from a free list with coalescing. They are
  told each request's final size at arrival (the best case for contiguous allocation).
- ``paged``: pages of ``page_size`` units, allocated on demand as a request grows; the unused
  tail of each request's last page is internal fragmentation.
- ``reserve``: contiguous, reserving ``bound`` units for every request because the final size
  is unknown (a KV cache grows a token at a time); a request whose final size exceeds the
  bound is refused.

A request larger than the capacity is refused and counted, never an error.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

from osbench import _checks, _native
from osbench.errors import ArgumentError, ArgumentTypeError
from osbench.mem import reference

STRATEGIES: tuple[str, ...] = tuple(name for name, _ in _native.MEM_STRATEGIES)
"""Every allocation strategy, lower case (from the native core's table)."""

PARAMETERS: dict[str, frozenset[str]] = {name: frozenset(reads) for name, reads in _native.MEM_STRATEGIES}
"""The parameters each strategy reads (``page_size``, ``bound``); it ignores the others."""

SERVED, REJECTED, PREEMPTED = 0, 1, 2


@dataclass(frozen=True)
class Workload:
    """A stream of requests, one entry per request in each array (arrival order).

    ``initial`` units are held at arrival; the request grows one unit at a time to
    ``final_size`` (``initial == final_size``: the size is known and fixed) and leaves at
    ``arrival + duration``."""

    arrival: np.ndarray
    duration: np.ndarray
    initial: np.ndarray
    final_size: np.ndarray

    def __len__(self) -> int:
        return int(self.arrival.size)

    @classmethod
    def of(cls, arrival: Any, duration: Any, initial: Any, final_size: Any = None) -> Workload:
        """Build a workload from array-likes, with checks; ``final_size`` defaults to ``initial``."""
        a = np.ascontiguousarray(arrival, dtype=np.float64).reshape(-1)
        d = np.ascontiguousarray(duration, dtype=np.float64).reshape(-1)
        u = _sizes("initial", initial)
        f = u if final_size is None else _sizes("final_size", final_size)
        n = a.size
        for name, arr in (("duration", d), ("initial", u), ("final_size", f)):
            if arr.size != n:
                raise ArgumentError(f"{name} is not accepted: {arr.size} entries for {n} arrivals")
        bad = np.flatnonzero(~np.isfinite(a) | (a < 0) | (np.diff(a, prepend=0.0) < 0))
        if bad.size:
            raise ArgumentError(
                f"arrival={a[bad[0]]} at index {bad[0]} is not accepted: finite times >= 0 in non-decreasing order"
            )
        bad = np.flatnonzero(~np.isfinite(d) | (d <= 0))
        if bad.size:
            raise ArgumentError(f"duration={d[bad[0]]} at index {bad[0]} is not accepted: finite positive durations")
        bad = np.flatnonzero((u == 0) | (u > f))
        if bad.size:
            i = bad[0]
            raise ArgumentError(f"initial={u[i]} at index {i} is not accepted: sizes in [1, final_size={f[i]}]")
        return cls(a, d, u, f)

    def to_dict(self) -> dict[str, Any]:
        return {k: v.tolist() for k, v in dataclasses.asdict(self).items()}


def _sizes(name: str, value: Any) -> np.ndarray:
    arr = np.asarray(value)
    if arr.ndim != 1:
        raise ArgumentError(f"{name} is not accepted: it must be 1-D, got shape {arr.shape}")
    if arr.size and arr.dtype.kind not in "iu":
        raise ArgumentTypeError(f"{name} is not accepted: sizes are integers, got dtype {arr.dtype}")
    if arr.size and arr.dtype.kind == "i" and arr.min() < 1:
        i = int(np.argmin(arr))
        raise ArgumentError(f"{name}={arr[i]} at index {i} is not accepted: sizes are positive integers")
    return np.ascontiguousarray(arr, dtype=np.uint64)


def workload(
    n: int,
    *,
    capacity: int = 20_000,
    mean_size: float = 50.0,
    sigma: float = 1.0,
    max_size: int = 400,
    load: float = 0.9,
    mean_duration: float = 1.0,
    prompt_fraction: float = 1.0,
    seed: int = 0,
) -> Workload:
    """Poisson arrivals, exponential lifetimes, lognormal sizes (lecture demo 2).

    Sizes: lognormal with mean ``mean_size`` and shape ``sigma``, rounded up, capped at
    ``max_size``. The arrival rate makes the offered memory ``load * capacity``
    (rate = load * capacity / (mean_size * mean_duration)). ``prompt_fraction`` < 1 makes
    requests grow: each arrives holding ``ceil(prompt_fraction * size)`` units (its prompt)
    and grows to its full size while it lives (decoding)."""
    n = _checks.non_negative_int("n", n)
    capacity = _checks.positive_int("capacity", capacity)
    mean_size = _checks.positive_float("mean_size", mean_size)
    sigma = _checks.positive_float("sigma", sigma)
    max_size = _checks.positive_int("max_size", max_size)
    load = _checks.positive_float("load", load)
    mean_duration = _checks.positive_float("mean_duration", mean_duration)
    prompt_fraction = _checks.probability("prompt_fraction", prompt_fraction)
    rng = np.random.default_rng(seed)
    rate = load * capacity / (mean_size * mean_duration)
    arrival = np.cumsum(rng.exponential(1.0 / rate, n))
    duration = rng.exponential(mean_duration, n)
    duration = np.where(duration > 0, duration, mean_duration)  # an exact 0 is possible in principle
    mu = np.log(mean_size) - sigma**2 / 2
    size = np.minimum(np.ceil(rng.lognormal(mu, sigma, n)), max_size).astype(np.uint64)
    size = np.maximum(size, 1)
    initial = np.maximum(np.ceil(prompt_fraction * size), 1).astype(np.uint64)
    initial = np.minimum(initial, size)
    return Workload(arrival, duration, initial, size)


@dataclass(frozen=True)
class Allocation:
    """The outcome of one simulation.

    - ``rejected_fraction``: requests refused at arrival / requests;
      ``preempted_fraction``: requests that could not grow (paged only) / requests.
    - ``utilization``: units holding data / capacity, averaged over arrival instants.
    - ``allocated_fraction``: units allocated / capacity, same average.
    - ``internal``: share of allocated units that hold no data (the last page's tail, or an
      unused reservation).
    - ``external``: ``1 - largest free block / free units``, averaged over arrivals that saw
      free memory (0 when the free memory is one block).

    The arrays are per request (in arrival order): ``status`` (0 served, 1 rejected,
    2 preempted) and the memory each saw at its arrival: ``data``, ``allocated``,
    ``largest_free``."""

    strategy: str
    capacity: int
    page_size: int
    bound: int
    requests: int
    rejected: int
    preempted: int
    rejected_fraction: float
    preempted_fraction: float
    utilization: float
    allocated_fraction: float
    internal: float
    external: float
    status: np.ndarray
    data: np.ndarray
    allocated: np.ndarray
    largest_free: np.ndarray

    def over_time(self) -> dict[str, np.ndarray]:
        """The memory at each arrival, as fractions: ``utilization`` (data / capacity),
        ``allocated`` (allocated / capacity), ``internal`` (allocated units holding no data,
        / capacity) and ``external`` (1 - largest free block / free units; 0 when nothing is
        free). Pair them with the workload's arrival times to plot them."""
        cap = float(self.capacity)
        data = self.data.astype(np.float64)
        alloc = self.allocated.astype(np.float64)
        free = cap - alloc
        external = np.zeros_like(free)
        np.divide(self.largest_free.astype(np.float64), free, out=external, where=free > 0)
        external = np.where(free > 0, 1.0 - external, 0.0)
        return {
            "utilization": data / cap,
            "allocated": alloc / cap,
            "internal": (alloc - data) / cap,
            "external": external,
        }

    def to_dict(self, arrays: bool = False) -> dict[str, Any]:
        d = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        for k in ("status", "data", "allocated", "largest_free"):
            d[k] = d[k].tolist() if arrays else None
        return d


def _summary(
    strategy: str,
    capacity: int,
    page_size: int,
    bound: int,
    status: np.ndarray,
    data: np.ndarray,
    allocated: np.ndarray,
    largest: np.ndarray,
) -> Allocation:
    n = int(status.size)
    rejected = int(np.count_nonzero(status == REJECTED))
    preempted = int(np.count_nonzero(status == PREEMPTED))
    total_alloc = int(allocated.sum(dtype=np.uint64)) if n else 0
    total_data = int(data.sum(dtype=np.uint64)) if n else 0
    free = capacity - allocated.astype(np.int64)
    seen = free > 0
    external = float(np.mean(1.0 - largest[seen] / free[seen])) if seen.any() else 0.0
    return Allocation(
        strategy=strategy,
        capacity=capacity,
        page_size=page_size,
        bound=bound,
        requests=n,
        rejected=rejected,
        preempted=preempted,
        rejected_fraction=rejected / n if n else 0.0,
        preempted_fraction=preempted / n if n else 0.0,
        utilization=total_data / (n * capacity) if n else 0.0,
        allocated_fraction=total_alloc / (n * capacity) if n else 0.0,
        internal=(total_alloc - total_data) / total_alloc if total_alloc else 0.0,
        external=external,
        status=status,
        data=data,
        allocated=allocated,
        largest_free=largest,
    )


def simulate(
    workload: Workload,
    strategy: str,
    capacity: int = 20_000,
    *,
    page_size: int = 16,
    bound: int = 400,
    engine: str = "native",
    check: bool = False,
) -> Allocation:
    """Run ``workload`` through one allocation strategy on ``capacity`` units.

    ``page_size`` is used by ``paged`` (any positive size up to the capacity), ``bound`` by
    ``reserve`` (``PARAMETERS`` says which strategy reads which). ``check=True`` (native engine) verifies after every event that no two live
    blocks overlap, that free and allocated units add up to the capacity, and that no two free
    blocks are adjacent (slow; for tests). Tie-breaks and event order: see
    :func:`osbench.mem.reference.simulate`.

    >>> import osbench as ob
    >>> w = ob.mem.workload(2000, seed=1)
    >>> r = ob.mem.simulate(w, "first")
    >>> 0 <= r.rejected_fraction < 0.1
    True
    """
    if not isinstance(workload, Workload):
        raise ArgumentTypeError(
            f"workload={type(workload).__name__} is not accepted: build one with osbench.mem.workload or Workload.of"
        )
    strategy = _checks.choice("strategy", strategy, STRATEGIES)
    capacity = _checks.positive_int("capacity", capacity, maximum=2**62)
    page_size = _checks.positive_int("page_size", page_size, maximum=2**62)
    if "page_size" in PARAMETERS[strategy] and page_size > capacity:
        raise ArgumentError(f"page_size={page_size} is not accepted: it must be at most capacity={capacity}")
    bound = _checks.positive_int("bound", bound, maximum=2**62)
    engine = _checks.engine(engine)
    w = workload
    if engine == "reference":
        alloc = reference.make(strategy, capacity, page_size, bound)
        s, d, a, lf = reference.simulate(
            alloc, w.arrival.tolist(), w.duration.tolist(), w.initial.tolist(), w.final_size.tolist(), capacity
        )
        status = np.array(s, dtype=np.uint8)
        data, allocated, largest = (np.array(x, dtype=np.uint64) for x in (d, a, lf))
    else:
        f64 = lambda x: np.ascontiguousarray(x, dtype=np.float64)  # noqa: E731
        u64 = lambda x: np.ascontiguousarray(x, dtype=np.uint64)  # noqa: E731
        status, data, allocated, largest = _native.mem_simulate(
            strategy,
            f64(w.arrival),
            f64(w.duration),
            u64(w.initial),
            u64(w.final_size),
            capacity,
            page_size,
            bound,
            check,
        )
    return _summary(strategy, capacity, page_size, bound, status, data, allocated, largest)
