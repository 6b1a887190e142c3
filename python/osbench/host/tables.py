"""A :class:`HostReport` as tables (no printing, no files).

Cells hold raw numbers with the unit of their column (``Table.units``): nanoseconds, seconds,
bytes, ratios; the one formatter (:mod:`osbench._format`) picks the unit a person reads. Each
note opens with a sentence computed from the measurements (the table's takeaway).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

from osbench._format import UNKNOWN, duration_ns, number, quantity, ratio, size, span
from osbench._table import Table
from osbench.host.stats import Spread

if TYPE_CHECKING:  # for annotations only: results.py builds on this module
    from osbench.host.results import HostReport


def _known(v: Any) -> Any:
    """None for a fact that could not be read: absent, empty, or a 0 that no machine has."""
    return None if v in (None, 0, "", 0.0) else v


def _text(v: Any) -> str:
    v = _known(v)
    return UNKNOWN if v is None else str(v)


def _list(v: Any) -> list[Any]:
    return v if isinstance(v, list) else []


def fact_rows(info: dict[str, Any]) -> list[list[str]]:
    """The host facts (``HostInfo.to_dict()``, or the same read back from results.json) as
    (fact, value) rows; a fact that could not be read says ``unknown``."""
    freq: dict[str, Any] = info["freq_mhz"] if isinstance(info.get("freq_mhz"), dict) else {}
    current, top = _known(freq.get("current")), _known(freq.get("max"))
    frequency = UNKNOWN if current is None else quantity(current, "MHz")
    if current is not None:
        frequency += f" (max {UNKNOWN if top is None else quantity(top, 'MHz')})"
    caches = ", ".join(
        f"{c.get('name', '?')} {size(_known(c.get('size_bytes')))}"
        for c in _list(info.get("caches"))
        if isinstance(c, dict)
    )
    usable = _list(info.get("usable_cpus"))
    python = (
        f"{_text(info.get('python'))} {_text(info.get('python_implementation'))}, {_text(info.get('python_build'))} "
        f"(GIL {'on' if info.get('gil_enabled', True) else 'off'}); numpy {_text(info.get('numpy'))}"
    )
    return [
        ["CPU", _text(info.get("cpu_model"))],
        [
            "cores",
            f"{number(_known(info.get('logical_cpus')))} logical, {number(_known(info.get('physical_cores')))} physical; "
            f"usable here (affinity): {', '.join(map(str, usable)) or UNKNOWN}",
        ],
        ["frequency", frequency],
        ["caches (cpu0)", caches or UNKNOWN],
        [
            "memory",
            f"{size(_known(info.get('memory_total')))} total, {size(_known(info.get('memory_available')))} available; "
            f"page {size(_known(info.get('page_size')))}",
        ],
        [
            "kernel",
            f"{_text(info.get('kernel'))} ({_text(info.get('os'))}); clocksource {_text(info.get('clocksource'))}",
        ],
        ["virtualization", info.get("virtualization") or "none detected"],
        [
            "transparent huge pages",
            f"enabled={_text(info.get('thp_enabled'))}, defrag={_text(info.get('thp_defrag'))}",
        ],
        ["Python", python],
        ["osbench build", _text(info.get("osbench_build"))],
    ]


def _setup(r: HostReport) -> str:
    before, after = r.load_average
    load = "unknown" if before < 0 else f"{number(before)} before, {number(after)} after"
    return (
        f"{'quick' if r.quick else 'full'} run on {len(r.info.usable_cpus)} usable CPUs; 1-minute load average {load}"
    )


def host_table(r: HostReport) -> Table:
    return Table(
        "Host",
        ["fact", "value"],
        fact_rows(r.info.to_dict()),
        note="What this machine is; every measurement below depends on it.",
        key="host",
    )


def isolation_table(r: HostReport) -> Table:
    iso = r.isolation
    rows = [
        ["a thread of this process", iso.thread_wrote, iso.seen_after_thread, "yes" if iso.thread_write_seen else "no"],
        ["a forked child process", iso.child_wrote, iso.seen_after_child, "yes" if iso.child_write_seen else "no"],
    ]
    shared = iso.thread_write_seen and not iso.child_write_seen
    return Table(
        "Demo 1: who sees a write to data = [0]",
        ["writer", "wrote", "main then sees", "write seen by main"],
        rows,
        note=(
            (
                "Threads share memory, processes do not: main sees the thread's write and not the child's. "
                if shared
                else "Unexpected: a thread's write should be seen by main and a child's should not. "
            )
            + f"The child saw its own write ({iso.child_saw}): it wrote its private copy."
        ),
        key="isolation",
        setup="one thread, then one forked child, each writing data[0]",
    )


def gil_table(r: HostReport) -> Table:
    g = r.gil
    rows = [
        [row.workload, row.way, row.units, row.seconds.median, span(row.seconds.min, row.seconds.max, "s"), row.speedup]
        for row in g.rows
    ]
    speed = {(row.workload, row.way): row.speedup for row in g.rows}
    return Table(
        "Demo 2: 4 units of work, sequentially, on 4 threads, on 4 processes",
        ["workload", "way", "units", "time (median)", "min - max", "speedup"],
        rows,
        note=(
            f"Pure Python runs at {ratio(speed.get(('python', 'threads')))} the sequential speed on threads and at "
            f"{ratio(speed.get(('python', 'processes')))} on processes; numpy at {ratio(speed.get(('numpy', 'threads')))} "
            f"on threads. Usable CPUs here: {g.usable_cpus} (of {g.logical_cpus}), so no speedup can pass {g.usable_cpus}. "
            f"Pure Python on threads stays near 1x: {'this build has no GIL' if g.free_threaded else 'the GIL lets one thread run bytecode at a time'}; "
            "numpy releases the GIL inside sin(), so its threads run in parallel. Processes include the cost of forking. "
            f"Above {g.usable_cpus} runnable tasks (the load average), other work takes CPU time from the parallel runs."
        ),
        key="gil",
        units={"time (median)": "s", "speedup": "x"},
        setup=_setup(r),
    )


def _modes(rt: Any) -> str:
    if not rt.modes or (len(rt.modes) == 1 and rt.modes[0].label == "all"):
        return "one mode" if rt.modes else ""
    return "; ".join(f"{m.fraction:.0%} {m.label} {duration_ns(m.spread.median)}" for m in rt.modes)


def _hops(r: HostReport, mechanism: str) -> str:
    """ "N calls on one CPU and M across CPUs" for one mechanism."""
    same, cross = r.find(mechanism), r.find(mechanism, "different CPUs")
    one = None if same is None else r.ratio_to_call(same)
    two = None if cross is None else r.ratio_to_call(cross)
    return f"{number(one, 2)} function calls on one CPU and {number(two, 2)} across CPUs"


def round_trip_table(r: HostReport) -> Table:
    rows: list[list[Any]] = []
    for rt in r.round_trips:
        if rt.spread is None:
            rows.append([rt.label, rt.between, rt.placement, "-", "-", "-", "-", "-", f"not available: {rt.reason}"])
            continue
        rows.append(
            [
                rt.label,
                rt.between,
                f"{rt.placement} ({rt.cpus})",
                rt.spread.median,
                span(rt.spread.p25, rt.spread.p75, "ns"),
                rt.spread.p99,
                rt.spread.n,
                r.ratio_to_call(rt),
                _modes(rt),
            ]
        )
    same_p = r.find("native-process-pipe")
    cross_p = r.find("native-process-pipe", "different CPUs")
    cross = ""
    if same_p and cross_p and same_p.spread and cross_p.spread:
        cross = f" A cross-CPU native pipe round trip costs {ratio(cross_p.spread.median / same_p.spread.median)} a same-CPU one here."
    # The rows a reader looks for first: the call, and the pipes between threads and between processes.
    key_rows = [
        i
        for i, rt in enumerate(r.round_trips)
        if rt.mechanism in ("call", "thread-pipe", "process-pipe", "native-process-pipe") and rt.spread is not None
    ]
    return Table(
        "Demo 3: round trips (send, and get the answer back)",
        [
            "mechanism",
            "between",
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
            f"A pipe round trip between Python threads costs {_hops(r, 'thread-pipe')}; between processes "
            f"{_hops(r, 'process-pipe')}. Each round trip wakes the other side twice. The native rows (Rust, no Python "
            "in the loop) show how much of a Python hop is Python, and perf bench cross-checks the native pipe."
            + cross
            + " Unpinned runs are split by where their ends ran, not averaged."
        ),
        key="round_trips",
        units={"median": "ns", "p99": "ns", "x call": "x"},
        setup=_setup(r),
        key_rows=key_rows,
    )


def checks_table(r: HostReport) -> Table:
    checked = [rt for rt in r.round_trips if rt.checks]
    rows = [
        [
            rt.label,
            rt.placement,
            rt.checks["round_trips"],
            rt.checks["received_a"],
            rt.checks["received_b"],
            rt.checks["mismatched"],
        ]
        for rt in checked
    ]
    faulty = [
        rt.label
        for rt in checked
        if rt.checks["mismatched"] or not rt.checks["received_a"] == rt.checks["received_b"] == rt.checks["round_trips"]
    ]
    return Table(
        "Native ping-pong: messages counted on both sides",
        ["mechanism", "placement", "round trips", "received by A", "received by B", "out of order"],
        rows,
        note=(
            "Both sides received every message, in order: the two ends really alternated."
            if not faulty
            else f"Messages were lost or reordered in: {', '.join(faulty)}."
        ),
        key="pingpong_checks",
        setup=_setup(r),
    )


def page_fault_table(r: HostReport) -> Table:
    rows = [
        [
            p.label,
            p.bytes,
            p.pages,
            p.map_faults,
            p.touch_faults,
            p.ns_per_page.median,
            span(p.ns_per_page.p25, p.ns_per_page.p75, "ns"),
            "-" if p.ns_per_fault is None else p.ns_per_fault,
        ]
        for p in r.page_faults
    ]
    i = r.info
    first = next((p for p in r.page_faults if p.prefault == "none"), None)
    takeaway = (
        f"A first touch of fresh memory costs {duration_ns(first.ns_per_page.median)} a page, one fault each. "
        if first is not None
        else ""
    )
    return Table(
        "Page faults: first touches of fresh memory",
        ["how", "size", "pages", "faults in mmap", "faults in touches", "per page", "p25 - p75", "per fault"],
        rows,
        note=(
            takeaway
            + f"Transparent huge pages: enabled={i.thp_enabled}, defrag={i.thp_defrag}. MAP_POPULATE takes the same faults inside "
            "mmap, in one batch without a trap per page, so the touches take none; MADV_HUGEPAGE maps 2 MiB per fault "
            "(each fault zeroes 512 pages at once)."
        ),
        key="page_faults",
        units={"size": "B", "per page": "ns", "per fault": "ns"},
        setup=_setup(r),
    )


def cow_table(r: HostReport) -> Table:
    rows = [
        [
            c.buffer_bytes,
            c.pages_written,
            c.child_minor_faults,
            c.child_minor_faults - c.pages_written,
            "-" if c.ns_per_page is None else c.ns_per_page,
        ]
        for c in r.cow
    ]
    extra = [c.child_minor_faults - c.pages_written for c in r.cow]
    takeaway = (
        f"A child that writes k pages of its parent's buffer takes k + {min(extra)} to k + {max(extra)} faults, "
        "whatever the buffer's size. "
        if extra
        else ""
    )
    return Table(
        "fork and copy-on-write: the child writes k pages of the parent's buffer",
        ["buffer", "pages written (k)", "child minor faults", "extra", "per written page"],
        rows,
        note=takeaway + "After fork the two share every page; each first write copies one.",
        key="cow",
        units={"buffer": "B", "per written page": "ns"},
        setup=_setup(r),
    )


def latency_table(r: HostReport) -> Table:
    kinds = list(dict.fromkeys(p.pages for p in r.memory_latency))
    by = {(p.bytes, p.pages): p for p in r.memory_latency}
    rows: list[list[Any]] = []
    for working_set in dict.fromkeys(p.bytes for p in r.memory_latency):
        row: list[Any] = [working_set, next(p.fits for p in r.memory_latency if p.bytes == working_set)]
        for k in kinds:
            p = by.get((working_set, k))
            if p is None or p.ns is None:
                row += ["-", p.reason if p else "-"]
            else:
                row += [p.ns.median, span(p.ns.min, p.ns.max, "ns")]
        rows.append(row)
    columns = ["working set", "fits in"]
    for k in kinds:
        columns += [f"per load, {k} pages", "min - max"]
    caches = ", ".join(f"{c.name} {size(c.size_bytes)}" for c in r.info.caches if c.kind != "Instruction")
    measured = [p for p in r.memory_latency if p.ns is not None and p.pages == (kinds[0] if kinds else "")]
    takeaway = ""
    if measured:
        small, large = measured[0], measured[-1]
        takeaway = (
            f"A dependent load takes {duration_ns(_median(small.ns))} in a {size(small.bytes)} working set and "
            f"{duration_ns(_median(large.ns))} in a {size(large.bytes)} one ({small.pages} pages). "
        )
    return Table(
        "Memory latency: one dependent load (pointer chasing, random order)",
        columns,
        rows,
        note=(
            takeaway + f"Caches of cpu0: {caches or UNKNOWN}. The latency steps up as the working set outgrows each "
            "level. With 4 KiB pages the larger sets also miss the TLB (and, in a virtual machine, walk two page "
            "tables); huge pages take most of that away and leave the caches' own latency."
        ),
        key="memory_latency",
        units={"working set": "B", **{f"per load, {k} pages": "ns" for k in kinds}},
        setup=_setup(r),
        # Folded in the HTML: the largest working set that fits in each level stays in view.
        key_rows=[i for i, row in enumerate(rows) if i + 1 == len(rows) or rows[i + 1][1] != row[1]],
    )


def _median(s: Optional[Spread]) -> Optional[float]:
    return None if s is None else s.median


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
