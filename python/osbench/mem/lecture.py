"""Lecture demo 03: virtual memory and paging (section 3), reproduced, with the exercises.

1. Translation through a page table and a block table (3.2), plus what the lecture only
   mentions: multi-level tables (x86-64) and the TLB.
2. Allocation with sizes known (3.3): first, best, worst fit, paging at 1 and 16, and
   reserving 400 because the final size is unknown; then the same with requests that grow.
3. The page-size sweep (3.4): internal waste against page-table entries.
4. Copy-on-write (3.5): parallel sampling and beam search (exercise 4).
5. Thrashing (3.6): fault rate and mean access time against memory size, LRU.
Exercises 3 (block-table size) and 7 (how low must the fault rate be).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from osbench._format import number, percent, size
from osbench._table import Table
from osbench.mem.alloc import simulate, workload
from osbench.mem.cow import beam_search, parallel_sampling
from osbench.mem.paging import X86_64, table_memory, tlb
from osbench.mem.thrashing import max_fault_rate, thrashing, working_set_trace
from osbench.mem.translation import block_table_size, slot_mapping, translate

PAGE_TABLE = {0: 7, 1: 3, 2: 12, 3: 5}
BLOCK_TABLE = {0: 9, 1: 2, 2: 31}
CAPACITY = 20_000
# What the lecture prints, for the side-by-side columns (section 3.3 and 3.6).
LECTURE_DEMO2 = {
    "first fit": "1.2 % rejected",
    "paged, page 16": "about 14 % internal",
    "reserve 400": "86 % rejected, 12 % data",
}
ACCESS_NS, FAULT_NS = 100.0, 100_000.0


def pct(x: float) -> float:
    return round(100.0 * x, 2)


def _lookup_rows(
    addresses: list[int], table: dict[int, int], unit: int, results: list[int], miss: str
) -> list[list[Any]]:
    """One row per address looked up through ``table`` in pages of ``unit``: the address, its page
    and offset, the page's entry ("-" where none) and the result (``miss`` where it is -1)."""
    rows = []
    for address, result in zip(addresses, results):
        page, offset = divmod(address, unit)
        entry = table.get(page)
        rows.append([address, page, offset, "-" if entry is None else entry, miss if result < 0 else result])
    return rows


def translation_table(engine: str = "native") -> Table:
    vaddrs = [5000, 20000, 0, 12345, 16383]
    r = translate(vaddrs, PAGE_TABLE, 4096, engine=engine)
    return Table(
        "Demo 1a: translation, page size 4096, page table {0: 7, 1: 3, 2: 12, 3: 5}",
        ["virtual address", "page", "offset", "frame", "physical address"],
        _lookup_rows(vaddrs, PAGE_TABLE, 4096, r.physical.tolist(), "page fault"),
        note="5,000 is page 1, offset 904: 3 x 4,096 + 904 = 13,192 (lecture). 20,000 is page 4, not in the table: a page fault.",
        key="translation",
    )


def slot_table(engine: str = "native") -> Table:
    positions = [0, 15, 16, 37, 47, 48]
    r = slot_mapping(BLOCK_TABLE, positions, 16, engine=engine)
    return Table(
        "Demo 1b: PagedAttention block table {0: 9, 1: 2, 2: 31}, 16 tokens a block",
        ["token", "logical block", "offset", "physical block", "slot"],
        _lookup_rows(positions, BLOCK_TABLE, 16, r.slots.tolist(), "unallocated"),
        note="Token 37 is in logical block 2, position 5: physical block 31, slot 31 x 16 + 5 = 501. Blocks are pages, tokens are bytes.",
        key="slots",
    )


def multilevel_table(seed: int = 1) -> Table:
    rng = np.random.default_rng(seed)
    cases = {
        "1 page": np.array([0]),
        f"1,000 contiguous pages ({size(1000 * 4096)})": np.arange(1000),
        f"1,000 pages scattered over {size(2**36 * 4096)}": rng.integers(0, 2**36, 1000),
        f"262,144 contiguous pages ({size(2**18 * 4096)})": np.arange(2**18),
    }
    rows = []
    for name, vpns in cases.items():
        m = table_memory(vpns, X86_64)
        rows.append(
            [
                name,
                " / ".join(f"{t:,}" for t in m.tables),
                m.bytes,
                round(m.bytes / (len(np.unique(vpns)) * 4096) * 100, 3),
            ]
        )
    flat = table_memory([0], X86_64).flat_bytes
    return Table(
        "Demo 1c: x86-64 four-level page tables (9+9+9+9 bits, 4 KiB pages, 8-byte entries)",
        ["mapped pages", "tables per level (root first)", "tables", "tables / mapped memory %"],
        rows,
        note=f"A flat table for 48-bit addresses would take {size(flat)}; four levels allocate only the tables some mapped page needs. Sparse mappings cost most per page.",
        key="multilevel",
        units={"tables": "B"},
        setup="the scattered pages drawn at random",
        seed=seed,
    )


def tlb_table(engine: str = "native", quick: bool = False, seed: int = 2) -> Table:
    pages = working_set_trace(20_000 if quick else 100_000, working_set=200, seed=seed)
    vaddrs = pages * 4096 + 64
    rows = []
    for entries in (16, 64, 128, 256, 1024):
        t = tlb(vaddrs, entries, levels=4, memory_ns=100.0, tlb_ns=1.0, engine=engine)
        rows.append([entries, pct(t.hit_ratio), round(t.effective_ns, 1)])
    return Table(
        "Demo 1d: an LRU TLB on the demo 5 trace (working set 200 pages); 4-level walk, 100 ns per memory access",
        ["TLB entries", "hit %", "effective access ns"],
        rows,
        note="A hit costs the TLB lookup and one memory access; a miss adds a walk of four memory accesses. A TLB smaller than the working set makes every access several times slower; one that covers it costs about 20 %.",
        key="tlb",
        setup=f"{len(pages):,} accesses over a 200-page working set",
        seed=seed,
    )


def allocation_table(engine: str = "native", quick: bool = False, seed: int = 1) -> Table:
    w = workload(5_000 if quick else 20_000, capacity=CAPACITY, seed=seed)
    runs = {
        "first fit": simulate(w, "first", CAPACITY, engine=engine),
        "best fit": simulate(w, "best", CAPACITY, engine=engine),
        "worst fit": simulate(w, "worst", CAPACITY, engine=engine),
        "paged, page 1": simulate(w, "paged", CAPACITY, page_size=1, engine=engine),
        "paged, page 16": simulate(w, "paged", CAPACITY, page_size=16, engine=engine),
        "reserve 400": simulate(w, "reserve", CAPACITY, bound=400, engine=engine),
    }
    rows = [
        [
            name,
            pct(r.rejected_fraction),
            pct(r.utilization),
            pct(r.internal),
            pct(r.external),
            LECTURE_DEMO2.get(name, ""),
        ]
        for name, r in runs.items()
    ]
    # Per strategy, as percentages: what the figure of the report draws.
    shares = {
        name: {
            "rejected": pct(r.rejected_fraction),
            "holds_data": pct(r.utilization),
            "internal": pct(r.internal),
            "external": pct(r.external),
        }
        for name, r in runs.items()
    }
    return Table(
        f"Demo 2: capacity {CAPACITY:,}, {len(w):,} requests, lognormal sizes (mean 50, cap 400), offered load 0.9, sizes known",
        ["strategy", "rejected %", "holds data %", "internal %", "external %", "lecture"],
        rows,
        note=(
            "Sizes known and small: external fragmentation costs first fit about 1 % of requests, worst fit "
            "the most. Pages of 16 waste about 14 % inside the last page and reject more than first fit; "
            "pages of 1 have neither kind of fragmentation. Reserving 400 for a final size nobody knows "
            "rejects most requests while the memory holds almost nothing."
        ),
        key="allocation",
        extra={"strategies": shares},
        setup=f"{len(w):,} requests, Poisson arrivals, capacity {CAPACITY:,}",
        seed=seed,
    )


def growth_table(engine: str = "native", quick: bool = False, seed: int = 1) -> Table:
    w = workload(5_000 if quick else 20_000, capacity=CAPACITY, prompt_fraction=0.2, seed=seed)
    runs = {
        "first fit, told the final size": simulate(w, "first", CAPACITY, engine=engine),
        "paged, page 16, on demand": simulate(w, "paged", CAPACITY, page_size=16, engine=engine),
        "reserve 400": simulate(w, "reserve", CAPACITY, bound=400, engine=engine),
    }
    rows = [
        [name, pct(r.rejected_fraction), pct(r.preempted_fraction), pct(r.utilization), pct(r.internal)]
        for name, r in runs.items()
    ]
    return Table(
        "Demo 2b: the same requests growing like a KV cache (20 % prompt at arrival, the rest decoded)",
        ["strategy", "rejected %", "preempted %", "holds data %", "internal %"],
        rows,
        note=(
            "Only paging can allocate as a request grows without knowing its final size; reserving the bound "
            "is what contiguous allocation must do instead. (Paged requests that cannot get a page while "
            "growing are preempted.)"
        ),
        key="growth",
        setup=f"{len(w):,} requests, capacity {CAPACITY:,}",
        seed=seed,
    )


def page_size_table(engine: str = "native", quick: bool = False, seed: int = 1) -> Table:
    w = workload(5_000 if quick else 20_000, capacity=CAPACITY, seed=seed)
    rows = []
    for p in (1, 2, 4, 8, 16, 32, 64, 128, 256):
        r = simulate(w, "paged", CAPACITY, page_size=p, engine=engine)
        entries = float(np.mean(-(-w.final_size.astype(np.int64) // p)))
        rows.append([p, pct(r.internal), pct(r.rejected_fraction), round(entries, 2), CAPACITY // p])
    return Table(
        "Demo 3: the page-size sweep (same requests as demo 2)",
        ["page size", "internal %", "rejected %", "table entries per request", "pages in memory"],
        rows,
        note="Bigger pages waste more of the last page; smaller pages need more table entries (more memory, more metadata to read per access).",
        key="page_size",
        setup=f"{len(w):,} requests, capacity {CAPACITY:,}",
        seed=seed,
    )


def cow_table() -> Table:
    s = parallel_sampling(8, 1024, 200, 16)
    b = beam_search(4, 1000, steps=1, block_size=16)[0]
    scenarios = (
        ("parallel sampling: 8 answers x 200 tokens, 1,024-token prompt", s, "672 vs 168 pages"),
        ("beam search, beam 4, 1,000-token prompt: one step (exercise 4)", b, "about 189 vs 3 blocks copied"),
    )
    rows = [
        [scenario, r.naive_blocks, r.cow_blocks, r.naive_copied, r.cow_copied, lecture]
        for scenario, r, lecture in scenarios
    ]
    return Table(
        "Demo 4: copy-on-write, 16 tokens a block",
        ["scenario", "naive blocks", "copy-on-write blocks", "naive copied", "copy-on-write copied", "lecture"],
        rows,
        note=(
            "Copy-on-write shares the prompt (reference counts) and copies a block only when a shared one is "
            "written. Parallel sampling: 64 prompt blocks + 8 x 13 generated = 168 (the lecture's 168); copying "
            "naively holds 64 + 8 x (64 + 13) = 680 (the lecture's 672 counts 12 generated pages per answer, "
            "200 // 16). Beam search: the 1,000-token prompt ends in a half-full block, so three of four "
            "candidates copy it; naive forks copy all 63 blocks three times."
        ),
        key="cow",
    )


def thrashing_table(engine: str = "native", quick: bool = False, seed: int = 1) -> Table:
    trace = working_set_trace(50_000 if quick else 200_000, working_set=200, phases=10, p_random=0.04, seed=seed)
    sizes = [25, 50, 100, 150, 180, 190, 200, 210, 250, 400, 1000]
    t = thrashing(trace, sizes, access_ns=ACCESS_NS, fault_ns=FAULT_NS, engine=engine)
    rows = [
        [int(m), pct(f), round(float(ns)), round(float(s), 1)]
        for m, f, ns, s in zip(t.memory_pages, t.fault_rate, t.mean_ns, t.slowdown)
    ]
    curve_sizes = np.unique(np.geomspace(10, 1000, 60).astype(int)).tolist()
    c = thrashing(trace, curve_sizes, access_ns=ACCESS_NS, fault_ns=FAULT_NS, engine=engine)
    return Table(
        "Demo 5: thrashing. Working set 200 pages in 10 phases, 4 % random accesses; LRU; 100 ns an access, 100 us a fault",
        ["memory (pages)", "faults %", "mean access ns", "slowdown x"],
        rows,
        note=(
            "Below the working set the fault rate climbs steeply and the machine does little but page: thrashing. "
            "The knee is at the working set. "
            "Above it, phase changes and stray accesses still fault about 5 % of the time, and at 1,000x the "
            "cost of a hit that keeps the mean access tens of times slower (exercise 7)."
        ),
        key="thrashing",
        setup=f"{len(trace):,} accesses",
        seed=seed,
        extra={
            "figure": {
                "kind": "line",
                "x": c.memory_pages.tolist(),
                "y": (100.0 * c.fault_rate).tolist(),
                "xlabel": "memory (pages)",
                "ylabel": "page faults %",
                "xscale": "log",
                "vline": 200,
            }
        },
    )


def exercises_table() -> Table:
    b16 = block_table_size(128 * 1024, 16, batch=256)
    b1 = block_table_size(128 * 1024, 1, batch=256)
    beam = beam_search(4, 1000, steps=1, block_size=16)[0]
    f100 = max_fault_rate(ACCESS_NS, 100_000.0, 2.0)
    f10 = max_fault_rate(ACCESS_NS, 10_000.0, 2.0)
    rows = [
        [
            "3",
            "block table of 128K tokens, block 16 (4-byte entries)",
            f"{number(b16['entries'])} entries, {size(b16['bytes'])}; batch 256: {size(b16['batch_bytes'])}",
        ],
        [
            "3",
            "same, block 1",
            f"{number(b1['entries'])} entries, {size(b1['bytes'])}; batch 256: {size(b1['batch_bytes'])}",
        ],
        [
            "4",
            "beam 4, 1,000-token prompt: blocks copied in one step",
            f"naive {beam.naive_copied}, copy-on-write {beam.cow_copied}",
        ],
        [
            "7",
            "fault rate for at most 2x the in-memory time, 100 ns / 100 us",
            f"{number(f100)} ({percent(f100)}) = 100 / 99,900",
        ],
        ["7", "same with a 10 us fault (KV block over PCIe)", f"{number(f10)} ({percent(f10)}) = 100 / 9,900"],
    ]
    return Table(
        "Exercises 3, 4 and 7",
        ["exercise", "question", "answer"],
        rows,
        key="exercises",
        setup=f"the lecture's inputs; {ACCESS_NS:g} ns a memory access",
    )


def tables(quick: bool = False, engine: str = "native") -> list[Table]:
    """Every table of demo 03 and the memory exercises. ``quick`` shrinks the simulations."""
    return [
        translation_table(engine),
        slot_table(engine),
        multilevel_table(),
        tlb_table(engine, quick),
        allocation_table(engine, quick),
        growth_table(engine, quick),
        page_size_table(engine, quick),
        cow_table(),
        thrashing_table(engine, quick),
        exercises_table(),
    ]
