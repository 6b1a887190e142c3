"""A :class:`HostReport` as tables (no printing, no files)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

from osbench._table import Table
from osbench.host.stats import Spread, human_ns

if TYPE_CHECKING:  # for annotations only: results.py builds on this module
    from osbench.host.results import HostReport


def _mib(n: Optional[int]) -> str:
    if n is None:
        return "?"
    if n >= 1 << 30:
        return f"{n / (1 << 30):.3g} GiB"
    if n >= 1 << 20:
        return f"{n / (1 << 20):.3g} MiB"
    return f"{n / 1024:.3g} KiB"


def _iqr(s: Optional[Spread]) -> str:
    return "-" if s is None else f"{human_ns(s.p25)} - {human_ns(s.p75)}"


def host_table(r: HostReport) -> Table:
    i = r.info
    freq = "not readable" if not i.freq_mhz else f"{i.freq_mhz['current']:.0f} MHz (max {i.freq_mhz['max']:.0f})"
    caches = ", ".join(f"{c.name} {_mib(c.size_bytes)}" for c in i.caches) or "not readable"
    rows: list[list[Any]] = [
        ["CPU", i.cpu_model or "?"],
        [
            "cores",
            f"{i.logical_cpus} logical, {i.physical_cores} physical; usable here (affinity): {list(i.usable_cpus)}",
        ],
        ["frequency", freq],
        ["caches (cpu0)", caches],
        ["memory", f"{_mib(i.memory_total)} total, {_mib(i.memory_available)} available; page {i.page_size} B"],
        ["kernel", f"{i.kernel} ({i.os}); clocksource {i.clocksource}"],
        ["virtualization", i.virtualization or "none detected"],
        ["transparent huge pages", f"enabled={i.thp_enabled}, defrag={i.thp_defrag}"],
        [
            "Python",
            f"{i.python} {i.python_implementation}, {i.python_build} (GIL {'on' if i.gil_enabled else 'off'}); numpy {i.numpy}",
        ],
        ["osbench", f"{i.osbench_build} build"],
    ]
    return Table("Host", ["fact", "value"], rows, key="host")


def isolation_table(r: HostReport) -> Table:
    iso = r.isolation
    rows = [
        ["a thread of this process", iso.thread_wrote, iso.seen_after_thread, "yes" if iso.thread_write_seen else "no"],
        ["a forked child process", iso.child_wrote, iso.seen_after_child, "yes" if iso.child_write_seen else "no"],
    ]
    return Table(
        "Demo 1: who sees a write to data = [0]",
        ["writer", "wrote", "main then sees", "write seen by main"],
        rows,
        note=f"The child saw its own write ({iso.child_saw}): it wrote its private copy. Threads share memory; processes do not.",
        key="isolation",
    )


def gil_table(r: HostReport) -> Table:
    g = r.gil
    rows = [
        [
            row.workload,
            row.way,
            row.units,
            row.seconds.median,
            f"{row.seconds.min:.3g}-{row.seconds.max:.3g}",
            row.speedup,
        ]
        for row in g.rows
    ]
    return Table(
        "Demo 2: 4 units of work, sequentially, on 4 threads, on 4 processes",
        ["workload", "way", "units", "seconds (median)", "min-max", "speedup"],
        rows,
        note=(
            f"Usable CPUs here: {g.usable_cpus} (of {g.logical_cpus}), so no speedup can pass {g.usable_cpus}. "
            f"Pure Python on threads stays near 1x: {'this build has no GIL' if g.free_threaded else 'the GIL lets one thread run bytecode at a time'}; "
            "numpy releases the GIL inside sin(), so its threads run in parallel. Processes include the cost of forking. "
            f"Load average while measuring: {r.load_average[0]:.1f} to {r.load_average[1]:.1f}; above {g.usable_cpus}, other work "
            "takes CPU time from the parallel runs."
        ),
        key="gil",
    )


def _modes(rt: Any) -> str:
    if not rt.modes or (len(rt.modes) == 1 and rt.modes[0].label == "all"):
        return "one mode" if rt.modes else ""
    return "; ".join(f"{m.fraction:.0%} {m.label} {human_ns(m.spread.median)}" for m in rt.modes)


def round_trip_table(r: HostReport) -> Table:
    rows: list[list[Any]] = []
    for rt in r.round_trips:
        if rt.spread is None:
            rows.append(
                [rt.label, rt.between, rt.engine, rt.placement, "-", "-", "-", "-", "-", f"not available: {rt.reason}"]
            )
            continue
        ratio = r.ratio_to_call(rt)
        rows.append(
            [
                rt.label,
                rt.between,
                rt.engine,
                f"{rt.placement} ({rt.cpus})",
                human_ns(rt.spread.median),
                _iqr(rt.spread),
                human_ns(rt.spread.p99),
                rt.spread.n,
                "-" if ratio is None else round(ratio, 1),
                _modes(rt),
            ]
        )
    same_p = r.find("native-process-pipe")
    cross_p = r.find("native-process-pipe", "different CPUs")
    cross = ""
    if same_p and cross_p and same_p.spread and cross_p.spread:
        cross = f" A cross-CPU native pipe round trip costs {cross_p.spread.median / same_p.spread.median:.1f}x a same-CPU one here."
    return Table(
        "Demo 3: round trips (send, and get the answer back)",
        [
            "mechanism",
            "between",
            "engine",
            "placement (CPUs)",
            "median",
            "p25 - p75",
            "p99",
            "samples",
            "x call",
            "as scheduled: modes",
        ],
        rows,
        note=(
            "Each round trip wakes the other side twice. Threads and processes cost hundreds to thousands of function calls; "
            "the native rows (Rust, no Python in the loop) show how much of a Python hop is Python, and perf bench cross-checks "
            "the native pipe." + cross + " Unpinned runs are split by where their ends ran, not averaged."
        ),
        key="round_trips",
    )


def checks_table(r: HostReport) -> Table:
    rows = [
        [
            rt.label,
            rt.placement,
            rt.checks["round_trips"],
            rt.checks["received_a"],
            rt.checks["received_b"],
            rt.checks["mismatched"],
        ]
        for rt in r.round_trips
        if rt.checks
    ]
    return Table(
        "Native ping-pong: messages counted on both sides",
        ["mechanism", "placement", "round trips", "received by A", "received by B", "out of order"],
        rows,
        note="Both sides received every message, in order: the two ends really alternated.",
        key="pingpong_checks",
    )


def page_fault_table(r: HostReport) -> Table:
    rows = [
        [
            p.label,
            _mib(p.bytes),
            p.pages,
            p.map_faults,
            p.touch_faults,
            human_ns(p.ns_per_page.median),
            _iqr(p.ns_per_page),
            "-" if p.ns_per_fault is None else human_ns(p.ns_per_fault),
        ]
        for p in r.page_faults
    ]
    i = r.info
    return Table(
        "Page faults: first touches of fresh memory",
        ["how", "size", "pages", "faults in mmap", "faults in touches", "ns per page", "p25 - p75", "ns per fault"],
        rows,
        note=(
            f"Transparent huge pages: enabled={i.thp_enabled}, defrag={i.thp_defrag}. MAP_POPULATE takes the same faults inside "
            "mmap, in one batch without a trap per page, so the touches take none; MADV_HUGEPAGE maps 2 MiB per fault "
            "(each fault zeroes 512 pages at once)."
        ),
        key="page_faults",
    )


def cow_table(r: HostReport) -> Table:
    rows = [
        [
            _mib(c.buffer_bytes),
            c.pages_written,
            c.child_minor_faults,
            c.child_minor_faults - c.pages_written,
            "-" if c.ns_per_page is None else human_ns(c.ns_per_page),
        ]
        for c in r.cow
    ]
    return Table(
        "fork and copy-on-write: the child writes k pages of the parent's buffer",
        ["buffer", "pages written (k)", "child minor faults", "extra", "ns per written page"],
        rows,
        note="The child's faults grow by about k whatever the buffer's size: fork copied the page table, and each first write copies one page.",
        key="cow",
    )


def latency_table(r: HostReport) -> Table:
    kinds = list(dict.fromkeys(p.pages for p in r.memory_latency))
    by = {(p.bytes, p.pages): p for p in r.memory_latency}
    rows: list[list[Any]] = []
    for size in dict.fromkeys(p.bytes for p in r.memory_latency):
        row: list[Any] = [_mib(size), next(p.fits for p in r.memory_latency if p.bytes == size)]
        for k in kinds:
            p = by.get((size, k))
            if p is None or p.ns is None:
                row += ["-", p.reason if p else "-"]
            else:
                row += [round(p.ns.median, 2), f"{p.ns.min:.3g}-{p.ns.max:.3g}"]
        rows.append(row)
    columns = ["working set", "fits in"]
    for k in kinds:
        columns += [f"ns per load, {k} pages", "min-max"]
    caches = ", ".join(f"{c.name} {_mib(c.size_bytes)}" for c in r.info.caches if c.kind != "Instruction")
    return Table(
        "Memory latency: one dependent load (pointer chasing, random order)",
        columns,
        rows,
        note=(
            f"Caches of cpu0: {caches}. The latency steps up as the working set outgrows each level. With 4 KiB pages "
            "the larger sets also miss the TLB (and, in a virtual machine, walk two page tables); huge pages take most of "
            "that away and leave the caches' own latency."
        ),
        key="memory_latency",
    )


def report_tables(r: HostReport) -> list[Table]:
    return [
        host_table(r),
        isolation_table(r),
        gil_table(r),
        round_trip_table(r),
        checks_table(r),
        page_fault_table(r),
        cow_table(r),
        latency_table(r),
    ]
