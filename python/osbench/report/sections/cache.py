"""Section 04: caching and eviction. Lecture demo 04, which policy wins where (every policy on
the lecture's access patterns and the real traces), then hit-ratio curves of every policy on a
large Zipf trace, SHARDS against the exact LRU curve, and the CloudPhysics trace when it can be had."""

from __future__ import annotations

import functools
import time
from typing import Any, Optional

import numpy as np

from osbench import cache, datasets, traces
from osbench._files import figure_png
from osbench._format import number, ratio, size
from osbench._table import Table
from osbench.cache import lecture as cache_lecture
from osbench.cache import study
from osbench.report.findings import leading, names
from osbench.report.model import Figure, Progress, Section
from osbench.report.sections._shared import pyplot, timed

KEY = "04-cache"
ORDER = 40


def _leaders(capacities: np.ndarray, curves: dict[str, np.ndarray], unit: str) -> str:
    """Which online policy hits most at the smallest and at the largest size."""

    def best(i: int) -> str:
        online = {p: float(c[i]) for p, c in curves.items() if p not in cache.OFFLINE}
        top = [p.upper() for p in leading(online)]
        if len(top) == len(online):
            return "every policy ties"
        return f"{names(top)} {'tie' if len(top) > 1 else 'hits most'}"

    def at(i: int) -> str:
        c = int(capacities[i])
        return size(c) if unit == "bytes" else f"{number(c)} {unit}" if i == 0 else number(c)

    return f"OPT is the ceiling; among the online policies {best(0)} at {at(0)} and {best(-1)} at {at(-1)}"


def _curves_figure(
    name: str, title: str, capacities: np.ndarray, curves: dict[str, np.ndarray], xlabel: str, setup: str, unit: str
) -> Figure:
    plt = pyplot()
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


LOWEST = max(32, *(p.min_capacity for p in cache.TABLE.values()))
"""The smallest capacity of the curves: one that every policy takes (W-TinyLFU's window holds
one object from 100 on; below 20, libCacheSim's S3-FIFO, and so ours, caches nothing)."""


def build(quick: bool, seed: int, progress: Optional[Progress] = None) -> Section:
    section = Section(
        "04-cache",
        "04 Caching and eviction",
        "Lecture demo 04 reproduced, every policy side by side on the lecture's access patterns and real traces, "
        "then hit-ratio curves of every policy on a large Zipf trace "
        "and on real traces. LRU and OPT curves come from one pass (stack distances); the other "
        "policies replay each capacity.",
        tables=[*cache_lecture.tables(quick=quick), study.wins_table(quick, seed)],
    )
    n_keys, length = (10_000, 200_000) if quick else (1_000_000, 10_000_000)
    trace = traces.zipf(n_keys, 1.0, length, seed=seed)
    capacities = np.unique(np.geomspace(LOWEST, n_keys // 2, 12 if quick else 16).astype(np.int64))
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
        caps = np.unique(np.geomspace(LOWEST, t.n_distinct, 12).astype(np.int64))
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
    plt = pyplot()
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
    seconds, exact = timed(lambda: cache.curve(traces.Trace(trace.keys), "lru", capacities))
    curves = {"exact": exact}
    rows: list[list[Any]] = [["exact (one pass, from the raw keys)", "-", "-", seconds]]
    for rate in (0.1, 0.01):
        took, est = timed(functools.partial(cache.curve, trace, "lru", capacities, sample=rate))
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
