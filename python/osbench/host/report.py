"""The whole host measurement: :func:`measure` -> :class:`~osbench.host.results.HostReport`, and
:func:`write` (JSON, Markdown, figures)."""

from __future__ import annotations

import dataclasses
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Optional

from osbench import _files
from osbench._format import duration, number
from osbench.errors import ArgumentError, ArgumentTypeError
from osbench.host.faults import LatencyPoint, cow_faults, latency_sizes, memory_latency, page_faults
from osbench.host.gil import gil_scaling, isolation
from osbench.host.info import info
from osbench.host.results import HostReport
from osbench.host.roundtrip import MECHANISMS, PLACEMENTS, perf_available, round_trip
from osbench.host.stats import human_ns

Progress = Callable[[str], None]


@dataclass(frozen=True)
class Plan:
    """How much :func:`measure` does; ``Plan.quick()`` finishes in seconds."""

    python_rounds: int
    native_rounds: int
    perf_rounds: int
    warmup: int
    gil_python_n: int
    gil_numpy_n: int
    gil_repeats: int
    fault_bytes: int
    fault_repeats: int
    cow_buffer: int
    cow_pages: tuple[int, ...]
    latency_sizes: tuple[int, ...]
    latency_loads: int
    latency_repeats: int

    @classmethod
    def quick(cls) -> Plan:
        return cls(
            300,
            2000,
            300,
            100,
            200_000,
            30,
            1,
            32 << 20,
            3,
            32 << 20,
            (0, 64, 1024),
            tuple(latency_sizes(quick=True)[::2]),
            200_000,
            3,
        )

    @classmethod
    def full(cls) -> Plan:
        return cls(
            3000,
            20000,
            4000,
            500,
            2_000_000,
            300,
            3,
            256 << 20,
            5,
            256 << 20,
            (0, 64, 1024, 16384),
            tuple(latency_sizes()),
            1_000_000,
            5,
        )


def measure(quick: bool = False, progress: Optional[Progress] = None, plan: Optional[Plan] = None) -> HostReport:
    """Measure this host: isolation, GIL scaling, round trips at every placement, page faults,
    copy-on-write and memory latency (issue items 1-6). ``quick=True`` finishes in seconds (for
    tests and CI); ``progress`` receives one line per step. Probes that cannot run here are
    kept with their reason (and listed in ``notes``), never raised."""
    plan = plan or (Plan.quick() if quick else Plan.full())
    say = progress or (lambda _msg: None)
    t0 = time.perf_counter()
    facts = info()
    load_before = _load()
    say("isolation: a thread's write and a child's write")
    iso = isolation()
    say("GIL: 4 units sequentially, on threads, on processes")
    gil = gil_scaling(4, plan.gil_python_n, plan.gil_numpy_n, plan.gil_repeats)
    trips = []
    has_perf = perf_available() is not None
    names = list(MECHANISMS)
    for k, name in enumerate(names, 1):
        m = MECHANISMS[name]
        rounds = {"native": plan.native_rounds, "perf": plan.perf_rounds}.get(m.engine, plan.python_rounds)
        for placement in PLACEMENTS:
            if m.engine == "perf" and not has_perf and placement != "same":
                continue  # one "not available" row is enough
            say(f"round trips [{k}/{len(names)}]: {m.label}, {placement}")
            trips.append(round_trip(name, placement, rounds, plan.warmup))
    refused: list[str] = []  # probes the OS refused here: reported, not raised
    faults = []
    for prefault in ("none", "populate", "hugepage"):
        if prefault == "hugepage" and facts.thp_enabled in (None, "never"):
            continue
        say(f"page faults: {prefault}")
        try:
            faults.append(page_faults(plan.fault_bytes, prefault, plan.fault_repeats))
        except OSError as exc:
            refused.append(f"page faults ({prefault}): not available: {exc}")
    cows = []
    for k in plan.cow_pages:
        say(f"copy-on-write: child writes {k} pages")
        try:
            cows.append(cow_faults(k, plan.cow_buffer))
        except OSError as exc:
            refused.append(f"copy-on-write ({k} pages): not available: {exc}")
    # Each working set on 4 KiB pages and then on huge pages, back to back, so that the two
    # curves see the same background load.
    lat: list[LatencyPoint] = []
    kinds = [False] + ([True] if facts.thp_enabled not in (None, "never") else [])
    for size in plan.latency_sizes:
        say(f"memory latency: {size:,} bytes")
        for huge in kinds:
            lat += memory_latency([size], plan.latency_loads, plan.latency_repeats, facts=facts, huge_pages=huge)
    notes = [f"{r.label} ({r.placement}): {r.reason}" for r in trips if r.spread is None] + refused
    notes += [f"memory latency at {p.bytes:,} bytes ({p.pages} pages): {p.reason}" for p in lat if p.ns is None]
    if facts.thp_enabled in (None, "never"):
        notes.append("transparent huge pages are off or absent: the MADV_HUGEPAGE probes did not run")
    load = (load_before, _load())
    if max(load) > len(facts.usable_cpus):
        notes.append(
            f"the load average ({load[0]:.1f} before, {load[1]:.1f} after) exceeded the {len(facts.usable_cpus)} usable CPUs: "
            "other work competed for them, so parallel speedups and cross-CPU figures are pessimistic"
        )
    return HostReport(
        quick,
        facts,
        iso,
        gil,
        tuple(trips),
        tuple(faults),
        tuple(cows),
        tuple(lat),
        tuple(notes),
        time.perf_counter() - t0,
        load,
    )


def _load() -> float:
    """The 1-minute load average (runnable and running tasks), or -1 where unknown."""
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return -1.0


# --- files -----------------------------------------------------------------------------------


def round_trip_figure(report: HostReport) -> Any:
    """Bar chart of round-trip medians (log axis, p25-p75 whiskers); unpinned runs as dots, one
    per mode, sized by their share of the samples. Returns a matplotlib Figure (Agg)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    bars = report.figures()["round_trips"]
    pinned = [b for b in bars if b["placement"] != "as scheduled"]
    loose = {b["mechanism"]: b for b in bars if b["placement"] == "as scheduled"}
    rows = list(dict.fromkeys(b["mechanism"] for b in bars))
    labels = {b["mechanism"]: b["label"] for b in bars}
    fig = Figure(figsize=(9, 0.38 * len(rows) + 1.5))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    colors = {"same CPU": "tab:blue", "different CPUs": "tab:orange"}
    height = 0.38
    for b in pinned:
        y = rows.index(b["mechanism"]) + (-height / 2 if b["placement"] == "same CPU" else height / 2)
        err = [[b["median_ns"] - b["p25_ns"]], [b["p75_ns"] - b["median_ns"]]]
        ax.barh(y, b["median_ns"], height=height, color=colors.get(b["placement"], "gray"), xerr=err, capsize=2)
    for name, b in loose.items():
        y = rows.index(name)
        for m in b["modes"] or [{"median_ns": b["median_ns"], "fraction": 1.0}]:
            ax.scatter([m["median_ns"]], [y], s=20 + 120 * m["fraction"], color="black", zorder=3, marker="D")
    ax.set_yticks(range(len(rows)), [labels[r] for r in rows], fontsize=8)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlabel("round trip, ns (median, p25-p75)")
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    ax.legend(
        handles=[Patch(color=c, label=k) for k, c in colors.items()]
        + [Line2D([], [], marker="D", color="black", linestyle="", label="as scheduled: each mode")],
        fontsize=8,
        loc="lower right",
    )
    ax.set_title("Round trips on this host")
    return fig


def memory_latency_figure(report: HostReport) -> Any:
    """The memory latency curve (median, p25-p75 band), cache sizes as vertical lines."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    data = report.figures()["memory_latency"]
    fig = Figure(figsize=(8, 4.5))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    for curve, color in zip(data["curves"], ("tab:blue", "tab:green", "tab:red")):
        if not curve["bytes"]:
            continue
        ax.plot(curve["bytes"], curve["median_ns"], marker="o", color=color, label=f"{curve['pages']} pages")
        ax.fill_between(curve["bytes"], curve["p25_ns"], curve["p75_ns"], alpha=0.25, color=color)
    ax.set_yscale("log")
    top = ax.get_ylim()[1]
    for name, size in data["caches"].items():
        ax.axvline(size, color="gray", linestyle="--", linewidth=0.8)
        ax.text(size, top, f" {name}", fontsize=8, va="top")
    ax.legend(fontsize=8, loc="upper left")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("working set, bytes")
    ax.set_ylabel("ns per dependent load")
    ax.set_title("Memory latency (pointer chasing)")
    return fig


def markdown(report: HostReport, images: bool = True) -> str:
    """The report as Markdown: every table, then the figures."""
    parts = [f"# Host report{' (quick)' if report.quick else ''}", ""]
    parts += [t.to_markdown() + "\n" for t in report.tables()]
    if report.notes:
        parts += ["**Not available here**", ""] + [f"- {n}" for n in report.notes] + [""]
    if images:
        parts += ["![Round trips](round_trips.png)", "", "![Memory latency](memory_latency.png)", ""]
    parts.append(
        f"Measured in {duration(report.seconds)}; 1-minute load average {number(report.load_average[0])} before, "
        f"{number(report.load_average[1])} after, on {len(report.info.usable_cpus)} usable CPUs."
    )
    return "\n".join(parts) + "\n"


def write(report: HostReport, out_dir: str | os.PathLike[str], figures: bool = True) -> dict[str, Path]:
    """Write ``host.json``, ``host.md`` and (with matplotlib) ``round_trips.png`` and
    ``memory_latency.png`` into ``out_dir`` (created if needed), each atomically. Returns the
    paths written, by kind."""
    if not isinstance(report, HostReport):
        raise ArgumentTypeError(
            f"report={report!r:.60} is not accepted: a HostReport, as osbench.host.measure() returns"
        )
    if not isinstance(out_dir, (str, os.PathLike)) or not os.fspath(out_dir):
        raise ArgumentTypeError(f"out_dir={out_dir!r} is not accepted: a folder path")
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise ArgumentError(f"out_dir={os.fspath(out_dir)!r} is not accepted: it exists and is no folder")
    out.mkdir(parents=True, exist_ok=True)
    paths = {"json": out / "host.json", "markdown": out / "host.md"}
    _files.write_bytes(paths["json"], json.dumps(report.to_dict(), indent=1, default=_jsonable).encode())
    drew = False
    if figures:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            pass
        else:
            paths["round_trips_png"] = out / "round_trips.png"
            paths["memory_latency_png"] = out / "memory_latency.png"
            _files.write_bytes(paths["round_trips_png"], _files.figure_png(round_trip_figure(report)))
            _files.write_bytes(paths["memory_latency_png"], _files.figure_png(memory_latency_figure(report)))
            drew = True
    _files.write_bytes(paths["markdown"], markdown(report, images=drew).encode())
    return paths


def _jsonable(v: Any) -> Any:
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return dataclasses.asdict(v)
    if hasattr(v, "tolist"):
        return v.tolist()
    return str(v)


__all__ = [
    "HostReport",
    "Plan",
    "human_ns",
    "markdown",
    "measure",
    "memory_latency_figure",
    "round_trip_figure",
    "write",
]
