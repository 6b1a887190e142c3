"""The report's sections, in the lecture's order. Each builder returns a :class:`Section`."""

from __future__ import annotations

import functools
import time
from typing import Any, Callable, Optional

import numpy as np

from osbench import cache, datasets, host, mem, radix, sched, serve, traces
from osbench._files import figure_png
from osbench._format import duration, duration_ns, number, percent, ratio
from osbench._table import Table
from osbench.cache import lecture as cache_lecture
from osbench.host.report import memory_latency_figure, round_trip_figure
from osbench.mem import lecture as mem_lecture
from osbench.radix import lecture as radix_lecture
from osbench.report.model import Figure, Progress, Section
from osbench.sched import lecture as sched_lecture
from osbench.serve import lecture as serve_lecture
from osbench.serve import source as serve_source


def _plt() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _leaders(capacities: np.ndarray, curves: dict[str, np.ndarray], unit: str) -> str:
    """Which online policy hits most at the smallest and at the largest size."""

    def best(i: int) -> str:
        online = {p: float(c[i]) for p, c in curves.items() if p != "opt"}
        return max(online, key=lambda p: online[p]).upper()

    return (
        f"OPT is the ceiling; among the online policies {best(0)} hits most at {number(int(capacities[0]))} {unit} "
        f"and {best(-1)} at {number(int(capacities[-1]))}"
    )


def _curves_figure(
    name: str, title: str, capacities: np.ndarray, curves: dict[str, np.ndarray], xlabel: str, setup: str, unit: str
) -> Figure:
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for policy, ratios in curves.items():
        ax.plot(capacities, 100 * ratios, marker="o", markersize=3, label=policy)
    ax.set_xscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("hit ratio (%)")
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend()
    return Figure(name, _leaders(capacities, curves, unit), figure_png(fig), setup)


def cache_section(quick: bool, seed: int, progress: Optional[Progress] = None) -> Section:
    section = Section(
        "04-cache",
        "04 Caching and eviction",
        "Lecture demo 04 reproduced, then hit-ratio curves of every policy on a large Zipf trace "
        "and on real traces. LRU and OPT curves come from one pass (stack distances); the other "
        "policies replay each capacity.",
        tables=cache_lecture.tables(quick=quick),
    )
    n_keys, length = (10_000, 200_000) if quick else (1_000_000, 10_000_000)
    trace = traces.zipf(n_keys, 1.0, length, seed=seed)
    # From 32 objects up: below 20, libCacheSim's S3-FIFO (and so ours) caches nothing at all.
    capacities = np.unique(np.geomspace(32, n_keys // 2, 12 if quick else 16).astype(np.int64))
    curves = {}
    timing = {}
    for p in cache.POLICIES:
        if progress:
            progress(f"  curve {p} on Zipf(1.0), {length:,} accesses")
        started = time.perf_counter()
        curves[p] = cache.curve(trace, p, capacities)
        timing[p] = round(time.perf_counter() - started, 3)
    section.figures.append(
        _curves_figure(
            "cache-zipf-curves",
            f"Zipf(1.0), {n_keys:,} keys, {length:,} accesses",
            capacities,
            curves,
            "cache size (objects)",
            f"Zipf(1.0), {n_keys:,} keys, {length:,} accesses, {len(capacities)} sizes; seed {seed}",
            "objects",
        )
    )
    section.results["zipf_curves"] = {
        "trace": {"kind": "zipf", "alpha": 1.0, "n_keys": n_keys, "length": length, "seed": seed},
        "capacities": capacities.tolist(),
        "hit_ratio": {p: v.tolist() for p, v in curves.items()},
        "seconds": timing,
        "engine": "native",
    }
    _sampled_curves(section, trace, seed, progress)
    real, _ = datasets.try_fetch("cloudphysics")
    if real is None:
        section.skipped.append(
            "The hit-ratio curves of every policy on the CloudPhysics block I/O trace (by objects and by bytes) "
            f"are not shown: {datasets.missing_note(['cloudphysics'])}"
        )
    else:
        section.results["datasets"] = {"cloudphysics": datasets.sha256(real)}
        t = traces.read_oracle_general(real)
        caps = np.unique(np.geomspace(32, t.n_distinct, 12).astype(np.int64))
        real_curves = {p: cache.curve(t, p, caps) for p in cache.POLICIES}
        section.figures.append(
            _curves_figure(
                "cache-cloudphysics-curves",
                f"CloudPhysics block I/O trace, {len(t):,} accesses (unit sizes)",
                caps,
                real_curves,
                "cache size (objects)",
                f"CloudPhysics block I/O trace, {len(t):,} accesses, {t.n_distinct:,} objects, unit sizes",
                "objects",
            )
        )
        section.results["cloudphysics_curves"] = {
            "capacities": caps.tolist(),
            "hit_ratio": {p: v.tolist() for p, v in real_curves.items()},
        }
        if t.sizes is not None:
            # The same trace with its real object sizes: capacity in bytes, as libCacheSim counts,
            # from 0.1% of the bytes of all its distinct objects to all of them.
            first = np.unique(t.keys, return_index=True)[1]
            footprint = int(t.sizes[first].sum())
            byte_caps = np.unique(np.geomspace(footprint / 1000, footprint, 12).astype(np.int64))
            sized = {p: cache.curve(t, p, byte_caps, sizes=True) for p in cache.POLICIES}
            section.figures.append(
                _curves_figure(
                    "cache-cloudphysics-bytes",
                    "CloudPhysics with its real object sizes",
                    byte_caps,
                    sized,
                    "cache size (bytes)",
                    "CloudPhysics block I/O trace with its real object sizes; capacity in bytes, from 0.1% of the "
                    "distinct objects' bytes to all of them",
                    "bytes",
                )
            )
            section.results["cloudphysics_curves"]["byte_capacities"] = byte_caps.tolist()
            section.results["cloudphysics_curves"]["hit_ratio_with_sizes"] = {p: v.tolist() for p, v in sized.items()}
    return section


def _shards_figure(capacities: np.ndarray, curves: dict[str, np.ndarray], setup: str) -> Figure:
    """The curves, and under them each estimate's error: on the curves alone they overlap."""
    plt = _plt()
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(7, 5.6), sharex=True, height_ratios=[3, 2])
    exact = curves["exact"]
    for name, ratios in curves.items():
        (line,) = top.plot(capacities, 100 * ratios, marker="o", markersize=3, label=name)
        if name != "exact":
            bottom.plot(capacities, 100 * (ratios - exact), marker="o", markersize=3, color=line.get_color())
    top.set_ylabel("hit ratio (%)")
    top.set_title("LRU: SHARDS estimates against the exact curve")
    top.legend()
    bottom.axhline(0, color="black", linewidth=0.8)
    bottom.set_ylabel("estimate - exact (points)")
    bottom.set_xlabel("cache size (objects)")
    bottom.set_xscale("log")
    for ax in (top, bottom):
        ax.grid(True, alpha=0.3)
    error = float(np.abs(curves["SHARDS rate 0.01"] - exact).mean() * 100)
    return Figure(
        "cache-shards",
        f"SHARDS on a 1% sample stays within {number(error)} points of the exact LRU curve on average"
        if error > 0
        else "SHARDS on a 1% sample gives the exact LRU curve here: every size is small enough to be counted exactly",
        figure_png(fig),
        setup,
    )


def _sampled_curves(section: Section, trace: traces.Trace, seed: int, progress: Optional[Progress]) -> None:
    """SHARDS beside the exact LRU curve: error and time at two sampling rates."""
    capacities = np.unique(np.geomspace(10, trace.n_distinct, 60).astype(np.int64))
    setup = f"Zipf(1.0), {trace.n_distinct:,} keys, {len(trace):,} accesses, {len(capacities)} sizes"
    if progress:
        progress(f"  SHARDS vs exact LRU curve, {len(trace):,} accesses")
    seconds, exact = _timed(lambda: cache.curve(traces.Trace(trace.keys), "lru", capacities))
    curves = {"exact": exact}
    rows: list[list[Any]] = [["exact (one pass, from the raw keys)", "-", "-", seconds]]
    for rate in (0.1, 0.01):
        took, est = _timed(functools.partial(cache.curve, trace, "lru", capacities, sample=rate))
        sampled = capacities * rate >= cache.SHARDS_MIN_OBJECTS
        error = np.abs(est - exact) * 100
        curves[f"SHARDS rate {rate:g}"] = est
        rows.append(
            [
                f"SHARDS, rate {rate:g}",
                float(error.mean()),
                float(error[sampled].mean()) if sampled.any() else "-",
                took,
            ]
        )
    section.tables.append(
        Table(
            f"SHARDS sampled LRU curves against the exact one ({len(trace):,} accesses, {len(capacities)} capacities from 10 up)",
            ["curve", "mean error, all capacities (points)", "mean error, sampled capacities (points)", "time"],
            rows,
            f"On a 1% sample SHARDS is off by {number(rows[-1][1])} points on average, in {ratio(rows[-1][3] / seconds)} "
            "the time of the exact curve. Capacities under 100 / rate objects are counted exactly (a sample that small "
            "hinges on a few hot keys); the rest come from the sample. The error of the sampled capacities is SHARDS' own.",
            key="shards",
            units={"time": "s"},
            setup=setup,
            seed=seed,
        )
    )
    section.figures.append(_shards_figure(capacities, curves, f"{setup}; seed {seed}"))
    section.results["shards"] = {
        "capacities": capacities.tolist(),
        "hit_ratio": {k: v.tolist() for k, v in curves.items()},
    }


def _timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    out = fn()
    return time.perf_counter() - started, out


def engine_section(quick: bool, seed: int, progress: Optional[Progress] = None) -> Section:
    """Native vs reference on the same inputs, timed in this run, results checked equal."""
    rows: list[list[Any]] = []

    def row(loop: str, items: int, unit: str, run: Callable[..., Any], same: Callable[[Any, Any], bool]) -> None:
        """Time ``run(engine=...)`` on both engines and check they agree."""
        if progress:
            progress(f"  {loop}")
        t_native, a = _timed(functools.partial(run, engine="native"))
        t_ref, b = _timed(functools.partial(run, engine="reference"))
        if not same(a, b):
            raise AssertionError(f"engines disagree on {loop}")
        rows.append([loop, f"{items:,} {unit}", items / t_native, items / t_ref, t_ref / t_native])

    def same(attribute: str) -> Callable[[Any, Any], bool]:
        """The engines agree on ``attribute`` (arrays element for element)."""
        return lambda a, b: bool(np.array_equal(getattr(a, attribute), getattr(b, attribute)))

    length = 50_000 if quick else 300_000
    trace = traces.zipf(10_000, 1.0, length, seed=seed)
    trace.next_use()  # prepared once, as a reused Trace would be
    for p in cache.POLICIES:
        row(f"cache replay: {p}", length, "accesses", functools.partial(cache.replay, trace, p, 1000), same("hits"))
    jobs = 20_000 if quick else 100_000
    w = sched.workload(jobs, load=0.8, sizes="lognormal", seed=seed)
    for p in sched.POLICIES:
        params: dict[str, Any] = {"quantum": 0.1} if "quantum" in sched.PARAMETERS[p] else {}
        row(f"scheduling: {p}", jobs, "jobs", functools.partial(sched.simulate, w, p, **params), same("completion"))
    n_addr = 200_000 if quick else 2_000_000
    rng = np.random.default_rng(seed)
    page_table = rng.integers(-1, 1 << 20, size=1 << 12)
    vaddrs = rng.integers(0, (1 << 12) * 4096, size=n_addr)
    translate = functools.partial(mem.translate, vaddrs, page_table, 4096)
    row("address translation", n_addr, "addresses", translate, same("physical"))
    n_req = 5_000 if quick else 20_000
    mw = mem.workload(n_req, capacity=20_000, seed=seed)
    for strategy in ("first", "best", "paged"):
        allocate = functools.partial(mem.simulate, mw, strategy, 20_000)
        row(f"allocation: {strategy}", n_req, "requests", allocate, same("rejected_fraction"))
    requests = radix.conversations(100 if quick else 400, seed=seed)
    replay = functools.partial(radix.replay, requests, 2000)
    row("radix prefix-cache replay", len(requests), "requests", replay, lambda a, b: a.to_dict() == b.to_dict())
    served = serve.Requests.poisson(
        150 if quick else 400,
        8.0,
        prompt_len=serve_lecture.CHAT_PROMPT,
        output_len=serve_lecture.CHAT_OUTPUT,
        seed=seed,
    )
    serving = functools.partial(serve.simulate, served, **serve_lecture.SMALL_GPU)
    row("serving engine (vLLM v1 steps)", len(served), "requests", serving, same("finish"))
    speedups = [r[-1] for r in rows]
    groups = [r[0].split(":")[0] for r in rows]
    table = Table(
        "Native vs reference, measured in this run (results checked equal)",
        ["hot loop", "work", "native", "reference", "native / reference"],
        rows,
        note=(
            f"The Rust core runs {ratio(min(speedups))} to {ratio(max(speedups))} as fast as the reference. The ratio "
            "is the speed of the Rust core over the readable Python that defines the results; one timing each, on a "
            "shared machine."
        ),
        key="engines",
        units={"native": "/s", "reference": "/s", "native / reference": "x"},
        setup=(
            "cache: Zipf(1.0) over 10,000 keys, capacity 1,000; scheduling: lognormal sizes at load 0.8; "
            "allocation: capacity 20,000; radix: multi-turn conversations, capacity 2,000 tokens; serving: chat-like "
            "requests at 8/s, Llama-3-8B on an L40S"
        ),
        seed=seed,
        key_rows=[i for i, g in enumerate(groups) if i == 0 or groups[i - 1] != g],
    )
    return Section(
        "engines",
        "Engines: native vs reference",
        "Every hot loop timed on both engines in this run, on the same inputs.",
        tables=[table],
    )


def _cross_cpu_cost(report: host.HostReport) -> Optional[float]:
    """The median, over mechanisms, of a round trip across CPUs over the same on one CPU."""
    ratios = []
    for rt in report.round_trips:
        cross = report.find(rt.mechanism, "different CPUs")
        if rt.placement == "same CPU" and rt.spread and cross and cross.spread:
            ratios.append(cross.spread.median / rt.spread.median)
    return float(np.median(ratios)) if ratios else None


def host_section(quick: bool, seed: int, progress: Optional[Progress] = None) -> Section:
    report = host.measure(quick=quick, progress=progress)
    setup = f"{'quick' if quick else 'full'} run on {len(report.info.usable_cpus)} usable CPUs"
    section = Section(
        "01-host",
        "01 Processes, threads and the host",
        "Measured on this host, not simulated: isolation, the GIL, round trips between threads and "
        "processes (as multiples of a function call, with where both ends ran), page faults, "
        "copy-on-write and memory latency. Every figure is a median with its spread. The host's own "
        "facts are in the run manifest at the end.",
        # The host facts table is the manifest's machine table: shown once, at the end.
        tables=[t for t in report.tables() if t.key != "host"],
        results={"report": report.to_dict()},
    )
    section.figures.append(
        Figure(
            "host-round-trips",
            f"Crossing CPUs makes a round trip {ratio(_cross_cpu_cost(report))} as long as on one CPU (median over "
            "mechanisms); every hop costs many function calls",
            figure_png(round_trip_figure(report)),
            setup + "; bars: both ends pinned, diamonds: as scheduled (each mode); log axis",
        )
    )
    latency = [p for p in report.memory_latency if p.ns is not None and p.pages == "4 KiB"]
    section.figures.append(
        Figure(
            "host-memory-latency",
            (
                f"A dependent load takes {duration_ns(latency[0].ns.median)} in the smallest working set and "
                f"{duration_ns(latency[-1].ns.median)} in the largest: each cache level outgrown is a step"
                if latency and latency[0].ns and latency[-1].ns
                else "Memory latency by working-set size"
            ),
            figure_png(memory_latency_figure(report)),
            setup + "; pointer chasing in random order, median and p25-p75 band",
        )
    )
    return section


def sched_section(quick: bool, seed: int, progress: Optional[Progress] = None) -> Section:
    if progress:
        progress("  lecture 02 tables" + ("" if quick else " (1M jobs per policy and distribution)"))
    tables = sched_lecture.tables(quick=quick)
    for t in tables:
        if t.key == "distributions":  # folded in the HTML: the heavy tail's rows stay in view
            t.key_rows = [i for i, row in enumerate(t.rows) if str(row[0]).startswith("lognormal")]
    section = Section(
        "02-sched",
        "02 CPU scheduling",
        "Lecture demo 02 with M/G/1 theory beside every simulation; the distributions table runs "
        + ("100k" if quick else "1M")
        + " jobs per policy and distribution, with 95% confidence intervals.",
        tables=tables,
    )
    # Response time against load, simulation points on theory lines.
    plt = _plt()
    loads = [0.3, 0.5, 0.7, 0.8, 0.9] if quick else [0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95]
    n = 50_000 if quick else 1_000_000
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    curves: dict[str, Any] = {}
    deviation = 0.0  # the largest relative distance of a simulated point from theory
    lowest = True  # SRPT has the lowest simulated mean at every load
    for ax, dist in zip(axes, ("exp", "lognormal")):
        by_policy = {}
        for policy, color in (("fcfs", "C0"), ("ps", "C1"), ("srpt", "C2")):
            if progress:
                progress(f"  response vs load: {policy}, {dist} sizes, {n:,} jobs x {len(loads)} loads")
            sim = [
                sched.simulate(sched.workload(n, load=rho, sizes=dist, seed=seed), policy).summary().mean_response
                for rho in loads
            ]
            by_policy[policy] = sim
            at = [sched.theory(policy, dist, float(rho)) for rho in loads]
            deviation = max([deviation] + [abs(a - b) / b for a, b in zip(sim, at)])
            fine = np.linspace(min(loads), max(loads), 60)
            th = [sched.theory(policy, dist, float(rho)) for rho in fine]
            ax.plot(fine, th, color=color, label=f"{policy} theory")
            ax.plot(loads, sim, "o", color=color, label=f"{policy} simulated")
            curves[f"{dist}/{policy}"] = {"loads": loads, "simulated": sim}
        ax.set_yscale("log")
        ax.set_xlabel("load")
        ax.set_ylabel("mean response time (mean size = 1)")
        ax.set_title(f"{dist} sizes")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
        lowest = lowest and all(
            by_policy["srpt"][i] <= min(v[i] for v in by_policy.values()) for i in range(len(loads))
        )
    section.figures.append(
        Figure(
            "sched-response-vs-load",
            ("SRPT has the lowest mean response at every load" if lowest else "SRPT is not the lowest at every load")
            + f"; every simulated point lies within {percent(deviation)} of M/G/1 theory",
            figure_png(fig),
            f"{n:,} jobs per point, Poisson arrivals, mean size 1, exponential and lognormal sizes; seed {seed}",
        )
    )
    section.results["response_vs_load"] = {"jobs": n, "seed": seed, "curves": curves}
    sweep = next((t.extra["sweep"] for t in tables if t.key == "quantum_sweep"), None)
    if sweep is not None:
        fig, ax = plt.subplots(figsize=(7, 4.2))
        ax.plot(sweep["quantum"], sweep["mean_response"], marker="o", label="mean response")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("quantum")
        ax.set_ylabel("mean response time")
        ax2 = ax.twinx()
        switching = [100 * x for x in sweep["switching_fraction"]]
        ax2.plot(sweep["quantum"], switching, color="C3", marker="s", label="time switching (%)")
        ax2.set_ylabel("time switching (%)")
        ax.set_title("Round robin quantum sweep (switch cost 0.005)")
        ax.grid(True, alpha=0.3)
        smallest = int(np.argmin(sweep["quantum"]))
        best = int(np.argmin(sweep["mean_response"]))
        section.figures.append(
            Figure(
                "sched-quantum-sweep",
                f"Too small a quantum is eaten by switching ({percent(sweep['switching_fraction'][smallest])} of the "
                f"time at {number(sweep['quantum'][smallest])}); the mean response is lowest at quantum "
                f"{number(sweep['quantum'][best])}",
                figure_png(fig),
                next(t.setup_line for t in tables if t.key == "quantum_sweep"),
            )
        )
    return section


def mem_section(quick: bool, seed: int, progress: Optional[Progress] = None) -> Section:
    if progress:
        progress("  lecture 03 tables")
    tables = mem_lecture.tables(quick=quick)
    by_key = {t.key: t for t in tables}
    section = Section(
        "03-mem",
        "03 Virtual memory and paging",
        "Translation and PagedAttention block tables, multi-level page tables and the TLB, "
        "allocation strategies and their fragmentation, the page-size sweep, copy-on-write, and "
        "the thrashing knee.",
        tables=tables,
    )
    plt = _plt()
    alloc = by_key.get("allocation")
    if alloc is not None:
        shares = alloc.extra["strategies"]
        names = list(shares)
        data, internal, external, rejected = (
            [shares[n][k] for n in names] for k in ("holds_data", "internal", "external", "rejected")
        )
        x = np.arange(len(names))
        fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
        left.bar(x - 0.2, data, 0.4, label="holds data")
        left.bar(x + 0.2, internal, 0.4, label="internal fragmentation (allocated, unused)")
        left.set_ylabel("% of capacity")
        left.set_title("What memory holds")
        right.bar(
            x - 0.2,
            external,
            0.4,
            color="C2",
            label="external fragmentation (% of free memory\noutside the largest free block)",
        )
        right.bar(x + 0.2, rejected, 0.4, color="C3", label="requests rejected (%)")
        right.set_title("Fragmentation of the free space, and rejections")
        for ax in (left, right):
            ax.set_xticks(x, names, rotation=20, fontsize=8)
            ax.set_ylim(0, 118)  # room for the legend above the bars
            ax.legend(fontsize=7, loc="upper left")
            ax.grid(True, axis="y", alpha=0.3)
        least = min(names, key=lambda n: shares[n]["rejected"])
        most = max(names, key=lambda n: shares[n]["rejected"])
        section.figures.append(
            Figure(
                "mem-fragmentation",
                f"The strategy that rejects most ({most}) turns away {number(shares[most]['rejected'])}% of "
                f"requests, the one that rejects least ({least}) {number(shares[least]['rejected'])}%, with "
                f"{number(shares[least]['internal'])}% internal and {number(shares[least]['external'])}% external "
                "fragmentation",
                figure_png(fig),
                alloc.setup_line,
            )
        )
    thrash = by_key.get("thrashing")
    if thrash is not None and "figure" in thrash.extra:
        f = thrash.extra["figure"]
        fig, ax = plt.subplots(figsize=(7, 4.2))
        ax.plot(f["x"], f["y"], marker=".")
        ax.set_yscale("log")
        ax.axvline(f["vline"], color="C3", linestyle="--", label=f"working set ({f['vline']} pages)")
        ax.set_xlabel(f["xlabel"])
        ax.set_ylabel(f["ylabel"])
        ax.set_title("Thrashing: faults fall off a cliff once memory holds the working set")
        ax.grid(True, alpha=0.3)
        ax.legend()
        x, y = np.asarray(f["x"]), np.asarray(f["y"])
        knee = float(f["vline"])
        below, above = int(np.argmin(np.abs(x - knee / 2))), int(np.argmin(np.abs(x - 2 * knee)))
        section.figures.append(
            Figure(
                "mem-thrashing-knee",
                f"Faults fall off a cliff at the working set: {number(float(y[below]))}% of accesses at "
                f"{number(int(x[below]))} pages, {number(float(y[above]))}% at {number(int(x[above]))}",
                figure_png(fig),
                thrash.setup_line + "; LRU, one pass over every memory size",
            )
        )
    return section


def radix_section(quick: bool, seed: int, progress: Optional[Progress] = None) -> Section:
    tables = radix_lecture.tables(quick=quick)
    section = Section(
        "05-radix",
        "05 Prefix caching with radix trees",
        "SGLang's RadixAttention: the tree drawing, sharing across multi-turn conversations, "
        "reference counts, prefix vs whole-prompt matching, and the block-level hit-ratio curve of "
        "Mooncake's production traces.",
        tables=tables,
    )
    plt = _plt()
    # Sharing: tokens stored one copy per request against the tree, as requests arrive (the
    # workload of table 05-2, whose seed it takes).
    sharing_seed = 0
    w = radix.conversations(200, seed=sharing_seed)
    tree = radix.RadixCache()
    per_request, in_tree = [], []
    total = 0
    for i in range(len(w)):
        prompt = w.prompt(i)
        tree.insert(prompt)
        total += len(prompt)
        per_request.append(total)
        in_tree.append(tree.total_size)
    fig, ax = plt.subplots(figsize=(7, 4.2))
    ax.plot(per_request, label="one copy per request")
    ax.plot(in_tree, label="radix tree (shared prefixes)")
    ax.set_xlabel("requests served")
    ax.set_ylabel("tokens stored")
    ax.set_title(f"Multi-turn conversations: {per_request[-1]:,} tokens vs {in_tree[-1]:,} in the tree")
    ax.grid(True, alpha=0.3)
    ax.legend()
    section.figures.append(
        Figure(
            "radix-sharing",
            f"Shared prefixes store {ratio(per_request[-1] / in_tree[-1])} fewer tokens than one copy per request "
            f"({number(in_tree[-1])} vs {number(per_request[-1])})",
            figure_png(fig),
            f"{len(w):,} requests of 200 multi-turn conversations; seed {sharing_seed}",
        )
    )
    demo4 = next((t for t in tables if t.key == "05-4"), None)
    if demo4 is not None:
        curves = demo4.extra["curves"]
        limited = [i for i, c in enumerate(curves["capacities"]) if c is not None]  # a log axis has no "unlimited"
        fig, ax = plt.subplots(figsize=(7, 4.2))
        for name, label in (
            ("whole", "whole prompt"),
            ("prefix", "prefix (prompts)"),
            ("prefix_outputs", "prefix (prompts + outputs)"),
        ):
            ratios = curves[name]
            ax.plot(
                [curves["capacities"][i] for i in limited], [100 * ratios[i] for i in limited], marker="o", label=label
            )
        ax.set_xscale("log")
        ax.set_xlabel("capacity (tokens)")
        ax.set_ylabel("token hit ratio (%)")
        ax.set_title(demo4.title)
        ax.grid(True, alpha=0.3)
        ax.legend()
        at = curves["capacities"].index(500)
        section.figures.append(
            Figure(
                "radix-prefix-vs-whole",
                f"With room for 500 tokens a prefix cache hits {percent(curves['prefix'][at])} of prompt tokens, "
                f"whole-prompt matching {percent(curves['whole'][at])}",
                figure_png(fig),
                demo4.setup_line,
            )
        )
    files = {name: datasets.try_fetch(name)[0] for name in radix_lecture.MOONCAKE_DATASETS}
    missing = [name for name, path in files.items() if path is None]
    if missing:
        section.skipped.append(
            f"The block-level prefix-cache curves of Mooncake's traces are not shown: {datasets.missing_note(missing)}"
        )
    if len(missing) < len(files):
        fig, ax = plt.subplots(figsize=(7, 4.2))
        mooncake: dict[str, Any] = {}
        caps = [10, 30, 100, 300, 1_000, 3_000, 10_000, 30_000, 100_000]
        for name, path in files.items():
            if path is None:
                continue
            if progress:
                progress(f"  Mooncake block-cache curve: {name}")
            requests = radix.mooncake(path)
            ratios = radix.curve(requests, caps).tolist()
            ax.plot(caps, [100 * h for h in ratios], marker="o", label=name)
            mooncake[name] = {"capacities_blocks": caps, "hit_ratio": ratios, "sha256": datasets.sha256(path)}
            section.results.setdefault("datasets", {})[name] = mooncake[name]["sha256"]
        ax.set_xscale("log")
        ax.set_xlabel("capacity (512-token blocks)")
        ax.set_ylabel("block hit ratio (%)")
        ax.set_title("Mooncake traces: block-level prefix cache")
        ax.grid(True, alpha=0.3)
        ax.legend()
        at = caps.index(10_000)
        hits = " and ".join(f"{percent(m['hit_ratio'][at])} of {name}'s" for name, m in mooncake.items())
        section.figures.append(
            Figure(
                "radix-mooncake-curve",
                f"A prefix cache of {number(caps[at])} blocks ({number(caps[at] * 512)} tokens) hits {hits} prompt blocks",
                figure_png(fig),
                "Mooncake's traces, one token per 512-token block; a radix tree of page size 1, LRU leaf eviction",
            )
        )
        section.results["mooncake"] = mooncake
    return section


RATE_PRESET: dict[str, Any] = {"model": "llama-3-8b", "gpu": "h100"}
"""What the serving section's rate sweep serves on: Llama-3-8B on one H100, vLLM's defaults."""

RATE_TRACE = "azure-conv-2023"

RATE_COLUMNS = [
    "requests/s",
    "throughput",
    "TTFT p50",
    "TTFT p99",
    "TPOT p50",
    "TPOT p99",
    "goodput",
    "within the SLO",
    "preemptions",
    "KV blocks in use",
]


def _rate_workload(quick: bool, seed: int) -> tuple[serve.Requests, str, Optional[str]]:
    """The requests of the rate sweep, what they are in words, and why the trace is not used
    (None when it is): Azure's 2023 conversation trace, the requests that fit the model's context;
    without it, generated chat-like requests."""
    path, _ = datasets.try_fetch(RATE_TRACE)
    if path is None:
        n = 4_000 if quick else 20_000
        reqs = serve.Requests.poisson(
            n, 5.0, prompt_len=serve_lecture.CHAT_PROMPT, output_len=serve_lecture.CHAT_OUTPUT, seed=seed
        )
        what = f"{number(n)} generated chat requests (lognormal lengths, Poisson arrivals; seed {seed})"
        return reqs, what, datasets.missing_note([RATE_TRACE])
    reqs = serve.Requests.read(RATE_TRACE)
    if quick:
        reqs = reqs[:4_000]
    reqs, left_out = serve_source.fit(reqs, serve.MODELS[RATE_PRESET["model"]].max_model_len)
    what = (
        f"Azure's 2023 conversation trace ({'its first ' if quick else ''}{number(len(reqs))} requests"
        + (f"; {number(left_out)} longer than the model's context left out" if left_out else "")
        + ")"
    )
    return reqs, what, None


def highest_within_slo(rows: list[list[Any]]) -> Optional[list[Any]]:
    """The row (of the rate sweep table) of the highest rate whose p99 TTFT and p99 TPOT meet
    the SLO; None if none does."""
    ok = [r for r in rows if r[3] <= serve_lecture.SLO_TTFT and r[5] <= serve_lecture.SLO_TPOT]
    return max(ok, key=lambda r: r[0]) if ok else None


def _slo_words() -> str:
    return f"TTFT {duration(serve_lecture.SLO_TTFT)} and TPOT {duration(serve_lecture.SLO_TPOT)}"


def _latency_figure(rows: list[list[Any]], setup: str) -> Figure:
    plt = _plt()
    rates = [r[0] for r in rows]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for ax, (p50, p99, slo, name) in zip(
        axes, ((2, 3, serve_lecture.SLO_TTFT, "TTFT"), (4, 5, serve_lecture.SLO_TPOT, "TPOT"))
    ):
        ax.plot(rates, [r[p50] for r in rows], marker="o", markersize=3, label="p50")
        ax.plot(rates, [r[p99] for r in rows], marker="o", markersize=3, linestyle="--", label="p99")
        ax.axhline(slo, color="C3", linewidth=0.8, label=f"SLO {duration(slo)}")
        ax.set_yscale("log")
        ax.set_xlabel("request rate (requests/s)")
        ax.set_ylabel(f"{name} (s)")
        ax.set_title(name)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    best = highest_within_slo(rows)
    beyond = [r for r in rows if best is None or r[0] > best[0]]
    if best is not None:
        caption = (
            f"Up to {number(best[0])} requests/s the p99 TTFT ({duration(best[3])}) and p99 TPOT ({duration(best[5])}) "
            f"stay within the SLO"
            + (f"; at {number(beyond[0][0])} the p99 TTFT is {duration(beyond[0][3])}" if beyond else "")
        )
    else:
        caption = f"Even at {number(rows[0][0])} requests/s the p99 latencies miss the SLO ({_slo_words()})"
    return Figure("serve-latency-vs-rate", caption, figure_png(fig), setup)


def _goodput_figure(rows: list[list[Any]], setup: str) -> Figure:
    plt = _plt()
    rates = [r[0] for r in rows]
    fig, ax = plt.subplots(figsize=(7, 4.2))
    ax.plot(rates, rates, color="gray", linewidth=0.8, linestyle=":", label="offered")
    ax.plot(rates, [r[1] for r in rows], marker="o", markersize=3, label="throughput")
    ax.plot(rates, [r[6] for r in rows], marker="o", markersize=3, label=f"goodput ({_slo_words()})")
    ax.set_xlabel("request rate (requests/s)")
    ax.set_ylabel("requests/s")
    ax.set_title("Goodput: the requests that meet the SLO, per second")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    peak = max(rows, key=lambda r: r[6])
    last = rows[-1]
    return Figure(
        "serve-goodput-vs-rate",
        f"Goodput peaks at {number(peak[6])} requests/s at an offered {number(peak[0])}; past the knee the queue "
        f"takes the SLO, and at {number(last[0])} only {number(last[6])} requests/s meet it",
        figure_png(fig),
        setup,
    )


def _kv_figure(t: Table) -> Figure:
    """The batch and the KV blocks over time, from table 06-1's run."""
    plt = _plt()
    series = t.extra["series"]
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(9, 5.6), sharex=True)
    top.plot(series["time"], series["blocks_used"], label="held by requests")
    top.plot(series["time"], series["blocks_cached"], label="in the prefix cache", alpha=0.7)
    top.axhline(t.extra["num_blocks"], color="C3", linewidth=0.8, label=f"pool ({number(t.extra['num_blocks'])})")
    top.set_ylabel("KV blocks")
    top.legend(fontsize=8, loc="upper right")
    bottom.plot(series["time"], series["batch"], label="batch (running requests)")
    bottom.plot(series["time"], series["waiting"], label="waiting")
    bottom.axhline(t.extra["max_num_seqs"], color="C3", linewidth=0.8, label="max_num_seqs")
    bottom.set_ylabel("requests")
    bottom.set_xlabel("time (s)")
    bottom.legend(fontsize=8, loc="upper right")
    for ax in (top, bottom):
        ax.grid(True, alpha=0.3)
    top.set_title("The batch grows until the KV cache is full; then requests wait")
    caption = (
        f"Once the KV cache is full (from {number(t.extra['kv_full_from'])} s) the batch stops near "
        f"{number(t.extra['plateau_batch'])} requests, under max_num_seqs={number(t.extra['max_num_seqs'])}, while up "
        f"to {number(t.extra['peak_waiting'])} wait"
        if t.extra["kv_full_from"] is not None
        else "The KV cache never fills in this run: the batch follows the arrivals"
    )
    return Figure("serve-kv-over-time", caption, figure_png(fig), t.setup_line + "; time-weighted means over 240 bins")


def serve_section(quick: bool, seed: int, progress: Optional[Progress] = None) -> Section:
    if progress:
        progress("  lecture 06 tables")
    tables = serve_lecture.tables(quick=quick)
    by_key = {t.key: t for t in tables}
    reqs, workload, missing = _rate_workload(quick, seed)
    # Up to 24/s: past the knee of the Azure trace (near 16/s) and of the generated requests
    # that stand in for it without the dataset (near 20/s).
    rates = [2, 4, 8, 12, 16, 20, 24] if quick else [2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 24]
    rows: list[list[Any]] = []
    for qps in rates:
        if progress:
            progress(f"  rate sweep: {qps} requests/s, {len(reqs):,} requests")
        r = serve.simulate(reqs.at_rate(qps), **RATE_PRESET)
        s = r.summary(slo_ttft=serve_lecture.SLO_TTFT, slo_tpot=serve_lecture.SLO_TPOT)
        rows.append(
            [
                float(qps),
                s.request_throughput,
                s.ttft.p50,
                s.ttft.p99,
                s.tpot.p50,
                s.tpot.p99,
                s.goodput,
                s.slo_attainment,
                s.preemptions,
                s.kv_utilization,
            ]
        )
    setup = (
        f"{workload} rescaled to each rate; {serve.MODELS[RATE_PRESET['model']].name} on one "
        f"{serve.GPUS[RATE_PRESET['gpu']].name}, {number(r.num_blocks)} KV blocks of {r.config.block_size} tokens, "
        f"vLLM's defaults; SLO: {_slo_words()}"
    )
    best = highest_within_slo(rows)
    rate_table = Table(
        "Latency and goodput against the request rate",
        RATE_COLUMNS,
        rows,
        note=(
            (
                f"The p99 latencies stay within the SLO up to {number(best[0])} requests/s (p99 TTFT "
                f"{duration(best[3])}, p99 TPOT {duration(best[5])}); beyond, arrivals outrun the engine and the "
                "queue, not the step, sets the TTFT."
                if best is not None
                else f"No rate here keeps the p99 latencies within the SLO ({_slo_words()})."
            )
            + " Throughput counts every request finished over the run; goodput only those within both SLOs."
        ),
        key="rate_sweep",
        units=dict.fromkeys(RATE_COLUMNS[2:6], "s")
        | {"requests/s": "/s", "throughput": "/s", "goodput": "/s", "within the SLO": "%", "KV blocks in use": "%"},
        setup=setup,
        extra={
            "workload": workload,
            "served_on": f"{serve.MODELS[RATE_PRESET['model']].name} on one {serve.GPUS[RATE_PRESET['gpu']].name}",
            "slo_ttft": serve_lecture.SLO_TTFT,
            "slo_tpot": serve_lecture.SLO_TPOT,
        },
    )
    section = Section(
        "06-serve",
        "06 Serving: continuous batching bounded by the KV cache",
        "Section 2.8 in action, on the engine as vLLM 0.33.0 schedules (continuous batching, a paged KV cache with "
        "prefix caching, chunked prefill, preemption by recompute), each step timed by a roofline of the model on "
        f"the GPU: latency and goodput against the request rate on {workload}, then lecture demo 06.",
        tables=[rate_table, *tables],
        results={
            "rate_sweep": {
                "workload": workload,
                "preset": RATE_PRESET,
                "slo_ttft": serve_lecture.SLO_TTFT,
                "slo_tpot": serve_lecture.SLO_TPOT,
                "columns": RATE_COLUMNS,
                "rows": rows,
            }
        },
    )
    if missing is not None:
        section.skipped.append(f"The rate sweep runs on generated requests, not on Azure's trace: {missing}")
    else:
        section.results["datasets"] = {RATE_TRACE: datasets.sha256(datasets.fetch(RATE_TRACE))}
    mooncake = by_key["06-3"]
    if mooncake.rows:
        section.results.setdefault("datasets", {})[serve_lecture.MOONCAKE] = mooncake.extra["sha256"]
    else:
        section.skipped.append(
            "Prefix caching on Mooncake's conversation trace (table 06-3) is not shown: "
            + datasets.missing_note([serve_lecture.MOONCAKE])
        )
    section.figures.append(_latency_figure(rows, setup))
    section.figures.append(_goodput_figure(rows, setup))
    section.figures.append(_kv_figure(by_key["06-1"]))
    return section


BUILDERS = [
    ("01-host", host_section),
    ("02-sched", sched_section),
    ("03-mem", mem_section),
    ("04-cache", cache_section),
    ("05-radix", radix_section),
    ("06-serve", serve_section),
    ("engines", engine_section),
]
