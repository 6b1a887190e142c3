"""osbench.mem: golden facts from lecture section 3, native == reference, invariants, bad input."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import osbench as ob
from osbench.mem import reference

ENGINES = ("native", "reference")
SETTINGS = settings(max_examples=120, deadline=None)


# --- translation: golden facts ---------------------------------------------------------


@pytest.mark.parametrize("engine", ENGINES)
def test_demo1_translation(engine: str) -> None:
    table = {0: 7, 1: 3, 2: 12, 3: 5}
    r = ob.mem.translate([5000, 20000, 0, 16383], table, 4096, engine=engine)
    assert r.physical.tolist() == [13192, -1, 7 * 4096, 5 * 4096 + 4095]
    assert r.faults == 1 and r.accesses == 4
    physical, faults = r  # unpacks as a pair
    assert faults == 1 and physical[0] == 3 * 4096 + 904


@pytest.mark.parametrize("engine", ENGINES)
def test_demo1_slot_mapping(engine: str) -> None:
    r = ob.mem.slot_mapping({0: 9, 1: 2, 2: 31}, [37, 0, 15, 16, 48], 16, engine=engine)
    assert r.slots.tolist() == [31 * 16 + 5, 9 * 16, 9 * 16 + 15, 2 * 16, -1]
    assert r.unmapped == 1


@pytest.mark.parametrize("engine", ENGINES)
def test_slot_mapping_batch_forms_agree(engine: str) -> None:
    table = [[3, 1], [7], [2, 5, 4]]  # ragged: padded with -1
    pos = np.array([[0, 17, 20], [1, 15, 16], [40, 33, 2]])
    grid = ob.mem.slot_mapping(table, pos, 16, engine=engine)
    assert grid.slots.shape == (3, 3)
    assert grid.slots.tolist() == [[48, 17, 20], [113, 127, -1], [72, 65, 34]]
    flat = ob.mem.slot_mapping(table, pos.reshape(-1), 16, seq_ids=np.repeat([0, 1, 2], 3), engine=engine)
    assert flat.slots.tolist() == grid.slots.reshape(-1).tolist() and flat.unmapped == grid.unmapped == 1


def test_exercise3_block_table_size() -> None:
    b16 = ob.mem.block_table_size(128 * 1024, 16, batch=256)
    assert (b16["entries"], b16["bytes"], b16["batch_bytes"]) == (8192, 32 * 1024, 8 * 2**20)
    b1 = ob.mem.block_table_size(128 * 1024, 1, batch=256)
    assert (b1["entries"], b1["bytes"], b1["batch_bytes"]) == (131072, 512 * 1024, 128 * 2**20)


def test_x86_64_walk_and_table_memory() -> None:
    layout = ob.mem.X86_64
    assert (layout.levels, layout.page_size, layout.address_bits) == (4, 4096, 48)
    w = ob.mem.walk((1 << 39) * 3 + (1 << 30) * 2 + (1 << 21) * 5 + 4096 * 7 + 9)
    assert w.indices == (3, 2, 5, 7) and w.offset == 9
    one = ob.mem.table_memory([0])
    assert one.tables == (1, 1, 1, 1) and one.bytes == 4 * 4096 and one.flat_bytes == 2**36 * 8
    # 512 consecutive pages share one leaf table; 513 need two.
    assert ob.mem.table_memory(np.arange(512)).tables == (1, 1, 1, 1)
    assert ob.mem.table_memory(np.arange(513)).tables == (1, 1, 1, 2)
    pt = ob.mem.MultiLevelPageTable()
    pt.map(5, 42)
    assert pt.translate(5 * 4096 + 3) == (42 * 4096 + 3, 4)
    assert pt.translate(6 * 4096)[0] == -1
    assert pt.bytes == ob.mem.table_memory([5]).bytes


@pytest.mark.parametrize("engine", ENGINES)
def test_tlb_through_the_cache_engine(engine: str) -> None:
    # Pages 0..3 in a loop: a 4-entry TLB misses only the first time round, a 3-entry one always.
    vaddrs = np.tile(np.arange(4) * 4096 + 8, 10)
    big = ob.mem.tlb(vaddrs, 4, engine=engine)
    small = ob.mem.tlb(vaddrs, 3, engine=engine)
    assert (big.hits, big.misses) == (36, 4) and small.hits == 0
    assert big.effective_ns == pytest.approx(1 + 100 + 0.1 * 4 * 100)
    assert small.effective_ns == pytest.approx(1 + 5 * 100)


# --- translation: native == reference --------------------------------------------------

tables = st.lists(st.integers(-1, 2**20), max_size=40)
addresses = st.lists(st.integers(0, 2**24), max_size=200)


@SETTINGS
@given(tables, addresses, st.integers(0, 14))
def test_translate_engines_agree(table: list[int], vaddrs: list[int], shift: int) -> None:
    a = ob.mem.translate(vaddrs, table, 1 << shift)
    b = ob.mem.translate(vaddrs, table, 1 << shift, engine="reference")
    assert a.physical.tolist() == b.physical.tolist() and a.faults == b.faults
    expect = [
        (
            -1
            if v >> shift >= len(table) or table[v >> shift] < 0
            else table[v >> shift] * (1 << shift) + v % (1 << shift)
        )
        for v in vaddrs
    ]
    assert a.physical.tolist() == expect


@SETTINGS
@given(
    st.lists(st.lists(st.integers(-1, 5000), max_size=8), min_size=1, max_size=6),
    st.lists(st.tuples(st.integers(0, 5), st.integers(0, 200)), max_size=100),
    st.integers(1, 40),
)
def test_slot_mapping_engines_agree(table: list[list[int]], tokens: list[tuple[int, int]], block_size: int) -> None:
    rows = [r % len(table) for r, _ in tokens]
    pos = [p for _, p in tokens]
    a = ob.mem.slot_mapping(table, pos, block_size, seq_ids=rows)
    b = ob.mem.slot_mapping(table, pos, block_size, seq_ids=rows, engine="reference")
    assert a.slots.tolist() == b.slots.tolist() and a.unmapped == b.unmapped


# --- allocation: native == reference, invariants ----------------------------------------


@st.composite
def request_streams(draw: st.DrawFn) -> ob.mem.Workload:
    n = draw(st.integers(0, 60))
    gaps = draw(st.lists(st.sampled_from([0.0, 0.25, 0.5, 1.0, 2.5]), min_size=n, max_size=n))
    durations = draw(st.lists(st.sampled_from([0.25, 0.5, 1.0, 3.0, 7.5, 20.0]), min_size=n, max_size=n))
    initial = draw(st.lists(st.integers(1, 70), min_size=n, max_size=n))
    growth = draw(st.lists(st.sampled_from([0, 0, 1, 3, 17, 40]), min_size=n, max_size=n))
    arrival = np.cumsum(gaps) if n else np.zeros(0)
    return ob.mem.Workload.of(
        arrival,
        durations,
        np.array(initial, dtype=np.int64),
        np.array(initial, dtype=np.int64) + np.array(growth, dtype=np.int64),
    )


@SETTINGS
@given(
    request_streams(), st.sampled_from(ob.mem.STRATEGIES), st.integers(20, 300), st.integers(1, 20), st.integers(1, 90)
)
def test_allocation_engines_agree(w: ob.mem.Workload, strategy: str, capacity: int, page_size: int, bound: int) -> None:
    page_size = min(page_size, capacity)
    a = ob.mem.simulate(w, strategy, capacity, page_size=page_size, bound=bound, check=True)
    b = ob.mem.simulate(w, strategy, capacity, page_size=page_size, bound=bound, engine="reference")
    for name in ("status", "data", "allocated", "largest_free"):
        assert getattr(a, name).tolist() == getattr(b, name).tolist(), name
    assert a.to_dict() == b.to_dict()
    assert np.all(a.data <= a.allocated) and np.all(a.allocated <= capacity)
    if strategy != "paged":
        assert a.preempted == 0


def _check_free_list(fl: reference.FreeList, live: dict[int, tuple[int, int]]) -> None:
    blocks = fl.blocks()
    for (a1, s1), (a2, _) in zip(blocks, blocks[1:]):
        assert a1 + s1 < a2, "two free blocks touch: coalescing missed them"
    spans = sorted(list(live.values()) + blocks)
    end = 0
    for a, s in spans:
        assert a == end, "live and free blocks must tile memory without overlap"
        end = a + s
    assert end == fl.capacity
    assert fl.free + sum(s for _, s in live.values()) == fl.capacity


@SETTINGS
@given(
    st.sampled_from(["first", "best", "worst", "reserve"]),
    st.lists(st.tuples(st.booleans(), st.integers(1, 40)), max_size=120),
)
def test_reference_free_list_invariants(strategy: str, ops: list[tuple[bool, int]]) -> None:
    alloc = reference.make(strategy, 200, bound=25)
    live: dict[int, tuple[int, int]] = {}
    for rid, (release, size) in enumerate(ops):
        if release and live:
            victim = sorted(live)[size % len(live)]
            assert alloc.release(victim) == live.pop(victim)[1]
        elif alloc.admit(rid, size, size) is not None:
            live[rid] = alloc.placed[rid]
        _check_free_list(alloc.list, live)


def test_fits_choose_as_documented() -> None:
    # Free holes of 10 @0, 5 @20, 10 @40, 40 @60 after these placements and releases.
    for name, size, expect in (("first", 6, 0), ("best", 4, 20), ("best", 6, 0), ("worst", 6, 60)):
        a = reference.make(name, 100)
        for rid, s in enumerate([10, 10, 5, 15, 10, 10]):
            a.admit(rid, s, s)
        for rid in (0, 2, 4):
            a.release(rid)
        assert a.list.blocks() == [(0, 10), (20, 5), (40, 10), (60, 40)]
        a.admit(99, size, size)
        assert a.placed[99][0] == expect, name


def test_paging_grows_on_demand_and_preempts() -> None:
    # Capacity 8 pages of 4; the first request grows from 1 to 30 units (8 pages); the second
    # arrives holding 4 units and takes a page, so the first cannot finish growing.
    w = ob.mem.Workload.of([0.0, 0.1], [10.0, 10.0], [1, 4], [30, 4])
    for engine in ENGINES:
        r = ob.mem.simulate(w, "paged", 32, page_size=4, engine=engine)
        assert r.status.tolist() == [2, 0] and r.preempted == 1
        assert r.data.tolist() == [0, 1] and r.allocated.tolist() == [0, 4]


# --- allocation: the lecture's demo 2 ---------------------------------------------------


def test_demo2_shape() -> None:
    w = ob.mem.workload(20_000, seed=1)
    r = {s: ob.mem.simulate(w, s) for s in ob.mem.STRATEGIES}
    p1 = ob.mem.simulate(w, "paged", page_size=1)
    assert 0.003 < r["first"].rejected_fraction < 0.03  # lecture: about 1.2 %
    assert r["worst"].rejected_fraction > r["first"].rejected_fraction  # worst fit is the worst fit
    assert 0.11 < r["paged"].internal < 0.17  # lecture: about 14 % at page size 16
    assert r["paged"].rejected_fraction > r["first"].rejected_fraction  # internal waste costs more here
    assert p1.rejected_fraction <= r["best"].rejected_fraction and p1.internal == 0.0 and p1.external < 1e-12
    assert 0.80 < r["reserve"].rejected_fraction < 0.92  # lecture: about 86 %
    assert 0.09 < r["reserve"].utilization < 0.15  # lecture: about 12 %


def test_fragmentation_over_time() -> None:
    w = ob.mem.workload(3000, seed=4)
    r = ob.mem.simulate(w, "first")
    series = r.over_time()
    assert all(v.shape == (3000,) for v in series.values())
    assert series["utilization"].mean() == pytest.approx(r.utilization)
    assert np.all((series["external"] >= 0) & (series["external"] < 1))
    assert series["external"].mean() == pytest.approx(r.external)
    assert np.all(series["internal"] == 0)  # contiguous fits allocate exactly the size
    p = ob.mem.simulate(w, "paged", page_size=16).over_time()
    assert np.all(p["internal"] >= 0) and p["internal"].max() > 0


def test_oversized_requests_are_counted_not_fatal() -> None:
    w = ob.mem.Workload.of([0.0, 1.0, 2.0], [1.0, 1.0, 1.0], [5, 500, 5])
    for s in ob.mem.STRATEGIES:
        r = ob.mem.simulate(w, s, 100, page_size=4, bound=50)
        assert r.status.tolist() == [0, 1, 0] and r.rejected == 1


# --- copy-on-write ------------------------------------------------------------------------


def test_demo4_parallel_sampling() -> None:
    s = ob.mem.parallel_sampling(8, 1024, 200, 16)
    assert s.cow_blocks == 64 + 8 * 13 == 168  # lecture: 168
    assert s.naive_copied == 8 * 64 and s.cow_copied == 0
    assert s.naive_blocks == 64 + 8 * (64 + 13)


def test_exercise4_beam_search() -> None:
    steps = ob.mem.beam_search(4, 1000, steps=9, block_size=16)
    assert (steps[0].naive_copied, steps[0].cow_copied) == (3 * 63, 3)  # lecture: 189 vs 3
    # 1000 + 8 tokens fill block 63; step 9 starts a fresh block: nothing shared to copy.
    assert steps[8].cow_copied == 0 and steps[8].naive_copied == 3 * 63


def test_reference_counts_are_inspectable() -> None:
    m = ob.mem.BlockManager(4)
    a = m.new_sequence(6)  # blocks 0 (full) and 1 (2 of 4)
    b = m.fork(a)
    assert m.block_table(b) == [0, 1] and m.refcount(0) == m.refcount(1) == 2
    assert m.append(b) == 1  # writing into shared block 1 copies it
    assert m.block_table(b) == [0, 2] and m.refcount(1) == 1 and m.refcount(2) == 1
    assert m.append(a) == 0  # a now owns block 1 alone
    m.free(a)
    assert m.refcount(0) == 1 and m.refcount(1) == 0 and m.in_use == 2
    with pytest.raises(ValueError, match="seq"):
        m.fork(a)


# --- thrashing ----------------------------------------------------------------------------


def test_demo5_knee_at_the_working_set() -> None:
    trace = ob.mem.working_set_trace(60_000, working_set=200, seed=3)
    t = ob.mem.thrashing(trace, [100, 150, 190, 200, 250, 400])
    f = dict(zip(t.memory_pages.tolist(), t.fault_rate.tolist()))
    assert f[100] > 0.4 and f[150] > 0.2  # below the working set: thrashing
    assert 0.03 < f[250] < 0.10  # above it: phase changes and stray accesses only (about 5 %)
    assert f[400] <= f[250] <= f[200] <= f[190]
    assert t.slowdown[-1] > 20  # even then the faults dominate the mean access time
    ref = ob.mem.thrashing(trace[:3000], [50, 200], engine="reference")
    nat = ob.mem.thrashing(trace[:3000], [50, 200])
    np.testing.assert_allclose(ref.mean_ns, nat.mean_ns, rtol=1e-12)


def test_exercise7() -> None:
    assert ob.mem.max_fault_rate(100, 100_000, 2) == pytest.approx(100 / 99_900)
    assert ob.mem.max_fault_rate(100, 10_000, 2) == pytest.approx(100 / 9_900)
    f = ob.mem.max_fault_rate()
    assert ob.mem.mean_access_ns(f) == pytest.approx(200.0)


# --- bad input ------------------------------------------------------------------------------


@pytest.mark.parametrize("engine", ENGINES)
def test_translation_bad_input(engine: str) -> None:
    with pytest.raises(ValueError, match="page_size=3000"):
        ob.mem.translate([1], [0], 3000, engine=engine)
    with pytest.raises(ValueError, match="vaddrs=-5"):
        ob.mem.translate([1, -5], [0], 4096, engine=engine)
    with pytest.raises(ValueError, match="page_table"):
        ob.mem.translate([1], [-2], 4096, engine=engine)
    with pytest.raises(TypeError, match="vaddrs"):
        ob.mem.translate([1.5], [0], 4096, engine=engine)
    with pytest.raises(ValueError, match="positions=-1"):
        ob.mem.slot_mapping([1, 2], [-1], 16, engine=engine)
    with pytest.raises(ValueError, match="block_size"):
        ob.mem.slot_mapping([1, 2], [1], 0, engine=engine)
    with pytest.raises(ValueError, match="seq_ids"):
        ob.mem.slot_mapping([[1], [2]], [1], 16, seq_ids=[2], engine=engine)
    with pytest.raises(ValueError, match="engine"):
        ob.mem.translate([1], [0], 4096, engine="gpu")


def test_allocation_bad_input() -> None:
    w = ob.mem.workload(10, seed=0)
    with pytest.raises(ValueError, match="capacity"):
        ob.mem.simulate(w, "first", 0)
    with pytest.raises(ValueError, match="strategy"):
        ob.mem.simulate(w, "buddy")
    with pytest.raises(ValueError, match="page_size"):
        ob.mem.simulate(w, "paged", 100, page_size=101)
    with pytest.raises(ValueError, match="bound"):
        ob.mem.simulate(w, "reserve", bound=0)
    with pytest.raises(TypeError, match="workload"):
        ob.mem.simulate([1, 2], "first")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="arrival"):
        ob.mem.Workload.of([1.0, 0.0], [1.0, 1.0], [1, 1])
    with pytest.raises(ValueError, match="duration"):
        ob.mem.Workload.of([0.0], [0.0], [1])
    with pytest.raises(ValueError, match="initial"):
        ob.mem.Workload.of([0.0], [1.0], [5], [4])
    with pytest.raises(ValueError, match="initial"):
        ob.mem.Workload.of([0.0], [1.0], [0])
    with pytest.raises(TypeError, match="initial"):
        ob.mem.Workload.of([0.0], [1.0], [1.5])
    # The core checks too, when a Workload is built without Workload.of.
    raw = ob.mem.Workload(np.array([1.0, 0.0]), np.ones(2), np.ones(2, np.uint64), np.ones(2, np.uint64))
    with pytest.raises(ValueError, match="arrival"):
        ob.mem.simulate(raw, "first")


def test_other_bad_input() -> None:
    with pytest.raises(ValueError, match="level_bits"):
        ob.mem.PageTableLayout((9, 0))
    with pytest.raises(ValueError, match="vaddr"):
        ob.mem.walk(1 << 48)
    with pytest.raises(ValueError, match="vpns"):
        ob.mem.table_memory([-1])
    with pytest.raises(ValueError, match="entries"):
        ob.mem.tlb([0], 0)
    with pytest.raises(ValueError, match="fault_ns"):
        ob.mem.max_fault_rate(100, 50)
    with pytest.raises(ValueError, match="p_random"):
        ob.mem.working_set_trace(10, p_random=1.5)
    with pytest.raises(ValueError, match="working_set"):
        ob.mem.working_set_trace(10, working_set=10, n_pages=5)
    with pytest.raises(ValueError, match="block_size"):
        ob.mem.BlockManager(0)


# --- the lecture tables ---------------------------------------------------------------------


def test_lecture_tables_quick() -> None:
    from osbench.mem import lecture

    tables = lecture.tables(quick=True)
    keys = [t.key for t in tables]
    assert keys == [
        "translation",
        "slots",
        "multilevel",
        "tlb",
        "allocation",
        "growth",
        "page_size",
        "cow",
        "thrashing",
        "exercises",
    ]
    by_key = {t.key: t for t in tables}
    assert by_key["translation"].rows[0][-1] == 13192 and by_key["translation"].rows[1][-1] == "page fault"
    assert by_key["slots"].rows[3][-1] == 501
    assert by_key["cow"].rows[0][2] == 168 and by_key["cow"].rows[1][3:5] == [189, 3]
    assert "figure" in by_key["thrashing"].to_dict()
    for t in tables:
        assert t.to_text() and t.to_markdown() and t.to_html()


def test_lecture_tables_engines_agree() -> None:
    from osbench.mem import lecture

    for make in (lecture.translation_table, lecture.slot_table):
        assert make("native").rows == make("reference").rows
    assert lecture.allocation_table("native", quick=True).rows == lecture.allocation_table("reference", quick=True).rows


def test_large_inputs_split_across_threads() -> None:
    # Above 2**20 items the native loops split the work over threads: same answers, same errors.
    rng = np.random.default_rng(5)
    table = rng.integers(-1, 1000, 300)
    v = rng.integers(0, 310 * 4096, 1_300_000)
    r = ob.mem.translate(v, table, 4096)
    vpn = v >> 12
    frame = np.where(vpn < table.size, table[np.minimum(vpn, table.size - 1)], -1)
    expect = np.where(frame < 0, -1, frame * 4096 + (v & 4095))
    np.testing.assert_array_equal(r.physical, expect)
    assert r.faults == int(np.count_nonzero(frame < 0))
    v[-3] = -7
    with pytest.raises(ValueError, match=f"vaddrs=-7 at index {v.size - 3}"):
        ob.mem.translate(v, table, 4096)
    pos = np.arange(1_200_000) % 4000
    s = ob.mem.slot_mapping(np.arange(250) * 3, pos, 16)
    np.testing.assert_array_equal(s.slots, (pos // 16) * 3 * 16 + pos % 16)
