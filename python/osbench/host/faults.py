"""Page faults, copy-on-write and memory latency, measured by the native probes (lecture
sections 3.4-3.5 and the cache hierarchy of section 4)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from osbench import _checks, _native
from osbench._record import Record
from osbench.errors import ArgumentError, ArgumentTypeError
from osbench.host import reference
from osbench.host.info import HostInfo
from osbench.host.info import info as host_info
from osbench.host.stats import Spread

PREFAULTS: tuple[str, ...] = ("none", "populate", "hugepage")
PREFAULT_LABELS = {
    "none": "touch a fresh mapping",
    "populate": "MAP_POPULATE, then touch",
    "hugepage": "MADV_HUGEPAGE, then touch",
}


@dataclass(frozen=True)
class PageFaults:
    """Map ``bytes`` of fresh anonymous memory and write one byte per page, ``repeats`` times.

    ``faults`` is the median minor-fault count of mmap + touches (getrusage of the thread);
    ``ns_per_page`` the time of mmap + touches per small page; ``ns_per_fault`` the touch time
    divided by the faults taken while touching (None when the touches took no fault)."""

    prefault: str
    label: str
    bytes: int
    pages: int
    map_faults: int
    touch_faults: int
    ns_per_page: Spread
    ns_per_fault: Optional[float]

    def to_dict(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "ns_per_page": self.ns_per_page.to_dict()}


def page_faults(nbytes: int = 64 << 20, prefault: str = "none", repeats: int = 3) -> PageFaults:
    """The cost of first touches of fresh memory (see :data:`PREFAULTS`)."""
    nbytes = _checks.positive_int("nbytes", nbytes, 1 << 36)
    _checks.choice("prefault", prefault, PREFAULTS)
    repeats = _checks.positive_int("repeats", repeats, 1000)
    runs = [_native.host_page_touch(nbytes, prefault) for _ in range(repeats)]
    pages = runs[0]["pages"]
    per_page = [(r["map_ns"] + r["touch_ns"]) / r["pages"] for r in runs]
    touch_faults = int(np.median([r["touch_minor_faults"] for r in runs]))
    map_faults = int(np.median([r["map_minor_faults"] for r in runs]))
    per_fault = [r["touch_ns"] / r["touch_minor_faults"] for r in runs if r["touch_minor_faults"] > 0]
    return PageFaults(
        prefault,
        PREFAULT_LABELS[prefault],
        nbytes,
        pages,
        map_faults,
        touch_faults,
        Spread.of(per_page),
        float(np.median(per_fault)) if per_fault else None,
    )


@dataclass(frozen=True)
class CopyOnWrite(Record):
    """A forked child writes ``pages_written`` pages of a ``buffer_bytes`` buffer it inherited;
    its minor faults grow by about that many (plus a few for its own stack)."""

    buffer_bytes: int
    pages_written: int
    child_minor_faults: int
    ns_per_page: Optional[float]


def cow_faults(pages_written: int, buffer_bytes: int = 64 << 20) -> CopyOnWrite:
    """Fork with a filled ``buffer_bytes`` buffer; the child writes ``pages_written`` pages."""
    pages_written = _checks.non_negative_int("pages_written", pages_written)
    buffer_bytes = _checks.positive_int("buffer_bytes", buffer_bytes, 1 << 36)
    faults, ns, _pages = _native.host_cow(buffer_bytes, pages_written)
    return CopyOnWrite(buffer_bytes, pages_written, faults, ns / pages_written if pages_written else None)


@dataclass(frozen=True)
class LatencyPoint:
    """Nanoseconds per dependent load over a working set of ``bytes`` (one sample per repeat);
    ``fits`` names the smallest cache that holds the working set ("memory" if none); ``pages``
    is "4 KiB" or "huge" (the working set advised MADV_HUGEPAGE, so few TLB misses)."""

    bytes: int
    ns: Optional[Spread]
    fits: str
    engine: str
    pages: str = "4 KiB"
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "ns": None if self.ns is None else self.ns.to_dict()}


def latency_sizes(quick: bool = False) -> list[int]:
    """16 KiB to 1 GiB in powers of two (quick: to 16 MiB)."""
    top = 24 if quick else 30
    return [1 << k for k in range(14, top + 1)]


def _fits(nbytes: int, facts: HostInfo) -> str:
    for name in ("L1d", "L2", "L3"):
        size = facts.cache_bytes(name)
        if size is not None and nbytes <= size:
            return name
    return "memory"


def memory_latency(
    sizes: Optional[Sequence[int]] = None,
    loads: int = 1_000_000,
    repeats: int = 3,
    seed: int = 0,
    engine: str = "native",
    facts: Optional[HostInfo] = None,
    huge_pages: bool = False,
) -> list[LatencyPoint]:
    """Pointer chasing over each working set (bytes, at least 128): ns per load.

    ``engine="reference"`` walks the same cycle in Python (interpreter cost per step).
    ``huge_pages=True`` (native only) puts the working set on transparent huge pages. A size
    that does not fit in a quarter of the available memory is reported as not available."""
    _checks.engine(engine)
    if not isinstance(huge_pages, bool):
        raise ArgumentTypeError(f"huge_pages={huge_pages!r} is not accepted: use True or False")
    if huge_pages and engine == "reference":
        raise ArgumentError(
            "huge_pages=True is not accepted with engine='reference': Python lists cannot choose their pages"
        )
    pages = "huge" if huge_pages else "4 KiB"
    sizes = latency_sizes() if sizes is None else list(sizes)
    loads = _checks.positive_int("loads", loads, 1 << 36)
    repeats = _checks.positive_int("repeats", repeats, 10_000)
    seed = _checks.non_negative_int("seed", seed)
    facts = facts or host_info()
    out = []
    for s in sizes:
        s = _checks.positive_int("sizes", s, 1 << 36)
        if s < 2 * reference.LINE:
            raise ArgumentError(f"sizes={s!r} is not accepted: a working set is at least 128 bytes")
        if facts.memory_available is not None and 4 * s > facts.memory_available:
            out.append(LatencyPoint(s, None, _fits(s, facts), engine, pages, "not available: not enough free memory"))
            continue
        if engine == "native":
            v = _native.host_chase(s, loads, repeats, seed, huge_pages)
        else:
            v = reference.chase_latency(s, loads, repeats, seed)
        out.append(LatencyPoint(s, Spread.of(v), _fits(s, facts), engine, pages))
    return out


def chase_cycle(lines: int, seed: int = 0, engine: str = "native") -> np.ndarray:
    """The random cycle the memory-latency probe follows (uint32 ``next`` per line); both
    engines give the same array."""
    _checks.engine(engine)
    lines = _checks.positive_int("lines", lines, 2**32 - 1)
    if lines < 2:
        raise ArgumentError(f"lines={lines!r} is not accepted: a cycle needs at least 2 lines")
    seed = _checks.non_negative_int("seed", seed)
    if seed >= 2**64:
        raise ArgumentError(f"seed={seed!r} is not accepted: it must be below 2**64")
    if engine == "native":
        return _native.host_chase_cycle(lines, seed)
    return reference.chase_cycle(lines, seed)
