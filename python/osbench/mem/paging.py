"""Multi-level page tables and the TLB (lecture section 3.2).

A one-level table for a 48-bit address space with 4 KB pages would need 2**36 entries; a
multi-level table splits the page number into one index per level and only allocates the
tables that some mapped page needs. The TLB is a small LRU cache of page numbers; here it is
simulated through the cache engine (:func:`osbench.cache.replay`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from osbench import _checks, cache
from osbench._record import Record
from osbench.errors import ArgumentError, ArgumentTypeError


@dataclass(frozen=True)
class PageTableLayout:
    """How a virtual address splits: ``level_bits`` from the root down, then the offset.

    ``entry_bytes`` is the size of one page-table entry."""

    level_bits: tuple[int, ...] = (9, 9, 9, 9)
    offset_bits: int = 12
    entry_bytes: int = 8

    def __post_init__(self) -> None:
        if not self.level_bits or any(
            isinstance(b, bool) or not isinstance(b, int) or not 1 <= b <= 32 for b in self.level_bits
        ):
            raise ArgumentError(f"level_bits={self.level_bits!r} is not accepted: one to many integers in [1, 32]")
        if (
            isinstance(self.offset_bits, bool)
            or not isinstance(self.offset_bits, int)
            or not 0 <= self.offset_bits <= 40
        ):
            raise ArgumentError(f"offset_bits={self.offset_bits!r} is not accepted: an integer in [0, 40]")
        if self.address_bits > 63:
            raise ArgumentError(
                f"level_bits={self.level_bits!r} with offset_bits={self.offset_bits} is not accepted: at most 63 address bits"
            )
        _checks.positive_int("entry_bytes", self.entry_bytes)

    @property
    def levels(self) -> int:
        return len(self.level_bits)

    @property
    def page_size(self) -> int:
        return 1 << self.offset_bits

    @property
    def address_bits(self) -> int:
        return sum(self.level_bits) + self.offset_bits

    def table_bytes(self, level: int) -> int:
        """Bytes of one table at ``level`` (0 = the root)."""
        return (1 << self.level_bits[level]) * self.entry_bytes

    def to_dict(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "page_size": self.page_size, "address_bits": self.address_bits}


X86_64 = PageTableLayout((9, 9, 9, 9), 12, 8)
"""x86-64 with 4-level paging: 48-bit addresses, 4 KB pages, 512 eight-byte entries per table."""


@dataclass(frozen=True)
class Walk(Record):
    """The indices a page walk uses, root first, and the offset in the page."""

    vaddr: int
    vpn: int
    indices: tuple[int, ...]
    offset: int


def walk(vaddr: int, layout: PageTableLayout = X86_64) -> Walk:
    """Split ``vaddr`` into one table index per level and the page offset."""
    vaddr = _checks.non_negative_int("vaddr", vaddr)
    if vaddr >> layout.address_bits:
        raise ArgumentError(f"vaddr={vaddr} is not accepted: it must fit in {layout.address_bits} bits")
    vpn = vaddr >> layout.offset_bits
    indices, shift = [], sum(layout.level_bits)
    for bits in layout.level_bits:
        shift -= bits
        indices.append((vpn >> shift) & ((1 << bits) - 1))
    return Walk(vaddr, vpn, tuple(indices), vaddr & (layout.page_size - 1))


@dataclass(frozen=True)
class TableMemory(Record):
    """The page tables a set of mapped pages needs: tables per level (root first), their
    bytes, and the bytes a flat one-level table for the whole address space would take."""

    mapped_pages: int
    tables: tuple[int, ...]
    bytes: int
    flat_bytes: int


def table_memory(vpns: Any, layout: PageTableLayout = X86_64) -> TableMemory:
    """Memory taken by the page tables when the virtual pages ``vpns`` are mapped.

    A table at level k exists for each distinct prefix of the page number above it: level k
    holds as many tables as there are distinct ``vpn >> (bits of levels k..last)``."""
    pages: Any
    if isinstance(vpns, np.ndarray):
        pages = vpns.reshape(-1)
    else:  # nested sequences flattened as Python objects, so that a huge int is named, not overflowed
        try:
            pages = np.asarray(vpns, dtype=object).reshape(-1).tolist()
        except (TypeError, ValueError):
            raise ArgumentTypeError(f"vpns={vpns!r:.60} is not accepted: page numbers (integers)") from None
    v = np.unique(_checks.int_array("vpns", pages, "integer page numbers"))
    if v.size and (v[0] < 0 or int(v[-1]) >> sum(layout.level_bits)):
        bad = int(v[0]) if v[0] < 0 else int(v[-1])
        raise ArgumentError(f"vpns={bad} is not accepted: page numbers in [0, 2**{sum(layout.level_bits)})")
    tables, shift = [], sum(layout.level_bits)
    for bits in layout.level_bits:
        tables.append(int(np.unique(v >> shift).size) if v.size else 0)
        shift -= bits
    total = sum(t * layout.table_bytes(k) for k, t in enumerate(tables))
    flat = (1 << sum(layout.level_bits)) * layout.entry_bytes
    return TableMemory(int(v.size), tuple(tables), total, flat)


@dataclass(frozen=True)
class TLB(Record):
    """A TLB replay: hits, misses, and the effective access time in ns.

    A hit costs ``tlb_ns + memory_ns``; a miss also walks the page table, one memory access
    per level: ``tlb_ns + (levels + 1) * memory_ns``."""

    entries: int
    accesses: int
    hits: int
    misses: int
    hit_ratio: float
    effective_ns: float
    levels: int
    memory_ns: float
    tlb_ns: float


def tlb(
    vaddrs: Any,
    entries: int,
    *,
    page_size: int = 4096,
    levels: int = 4,
    memory_ns: float = 100.0,
    tlb_ns: float = 1.0,
    engine: str = "native",
) -> TLB:
    """Replay the page numbers of ``vaddrs`` through an LRU TLB of ``entries`` entries (the
    cache engine), and price each access."""
    entries = _checks.positive_int("entries", entries)
    page_size = _checks.power_of_two("page_size", page_size)
    levels = _checks.positive_int("levels", levels, maximum=64)
    memory_ns = _checks.positive_float("memory_ns", memory_ns)
    tlb_ns = _checks.positive_float("tlb_ns", tlb_ns)
    engine = _checks.engine(engine)
    v = np.asarray(vaddrs)
    if v.ndim != 1 or (v.size and v.dtype.kind not in "iu"):
        raise ArgumentTypeError(f"vaddrs is not accepted: a 1-D integer array, got dtype {v.dtype} and shape {v.shape}")
    v = v.astype(np.int64)
    if v.size and v.min() < 0:
        raise ArgumentError(f"vaddrs={int(v.min())} is not accepted: addresses are non-negative")
    vpns = v >> (page_size.bit_length() - 1)
    r = cache.replay(vpns, "lru", entries, engine=engine)
    miss = r.miss_ratio
    eat = tlb_ns + memory_ns + miss * levels * memory_ns if r.accesses else 0.0
    return TLB(entries, r.accesses, r.hits, r.misses, r.hit_ratio, eat, levels, memory_ns, tlb_ns)


class MultiLevelPageTable:
    """A multi-level page table you can fill and walk: tables are created on demand.

    ``map(vpn, frame)`` creates the tables on the way down; ``translate(vaddr)`` returns
    ``(physical address or -1, memory references made)``; ``tables`` counts tables per level."""

    def __init__(self, layout: PageTableLayout = X86_64):
        self.layout = layout
        self.root: dict[int, Any] = {}
        self.tables = [1] + [0] * (layout.levels - 1)

    def map(self, vpn: int, frame: int) -> None:
        frame = _checks.non_negative_int("frame", frame)
        w = walk(_checks.non_negative_int("vpn", vpn) << self.layout.offset_bits, self.layout)
        table = self.root
        for level, index in enumerate(w.indices[:-1]):
            if index not in table:
                table[index] = {}
                self.tables[level + 1] += 1
            table = table[index]
        table[w.indices[-1]] = frame

    def translate(self, vaddr: int) -> tuple[int, int]:
        w = walk(vaddr, self.layout)
        node: Optional[Any] = self.root
        refs = 0
        for index in w.indices:
            refs += 1  # one memory reference per level
            node = node.get(index) if isinstance(node, dict) else None
            if node is None:
                return -1, refs
        assert isinstance(node, int)
        return node * self.layout.page_size + w.offset, refs

    @property
    def bytes(self) -> int:
        return sum(t * self.layout.table_bytes(k) for k, t in enumerate(self.tables))
