"""The report's sections, in the lecture's order. Each builder returns a :class:`Section`."""

from __future__ import annotations

import time
from typing import Any, Callable, Optional

import numpy as np

from osbench import cache, traces
from osbench.report import Figure, Section, figure_png



def _plt() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _curves_figure(name: str, title: str, capacities: np.ndarray, curves: dict[str, np.ndarray], xlabel: str) -> Figure:
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
    return Figure(name, title, figure_png(fig))


def cache_section(quick: bool, seed: int, progress: Optional[Callable[[str], None]] = None) -> Section:
    from osbench.cache import lecture

    section = Section(
        "04-cache",
        "04 Caching and eviction",
        "Lecture demo 04 reproduced, then hit-ratio curves of every policy on a large Zipf trace "
        "and on real traces. LRU and OPT curves come from one pass (stack distances); the other "
        "policies replay each capacity.",
        tables=lecture.tables(quick=quick),
    )
    n_keys, length = (10_000, 200_000) if quick else (1_000_000, 10_000_000)
    trace = traces.zipf(n_keys, 1.0, length, seed=seed)
    capacities = np.unique(np.geomspace(10, n_keys // 2, 12 if quick else 16).astype(np.int64))
    curves = {}
    timing = {}
    for p in cache.POLICIES:
        if progress:
            progress(f"  curve {p} on Zipf(1.0), {length:,} accesses")
        started = time.perf_counter()
        curves[p] = cache.curve(trace, p, capacities)
        timing[p] = round(time.perf_counter() - started, 3)
    section.figures.append(
        _curves_figure("cache-zipf-curves", f"Zipf(1.0), {n_keys:,} keys, {length:,} accesses", capacities, curves, "cache size (objects)")
    )
    section.results["zipf_curves"] = {
        "trace": {"kind": "zipf", "alpha": 1.0, "n_keys": n_keys, "length": length, "seed": seed},
        "capacities": capacities.tolist(),
        "hit_ratio": {p: v.tolist() for p, v in curves.items()},
        "seconds": timing,
        "engine": "native",
    }
    folder = traces.shared_traces()
    real = folder / "cloudphysics-io.oracleGeneral.bin" if folder else None
    if real is not None and real.exists():
        t = traces.read_oracle_general(real)
        caps = np.unique(np.geomspace(16, t.n_distinct, 12).astype(np.int64))
        real_curves = {p: cache.curve(t, p, caps) for p in cache.POLICIES}
        section.figures.append(
            _curves_figure("cache-cloudphysics-curves", f"CloudPhysics block I/O trace, {len(t):,} accesses (unit sizes)", caps, real_curves, "cache size (objects)")
        )
        section.results["cloudphysics_curves"] = {
            "capacities": caps.tolist(),
            "hit_ratio": {p: v.tolist() for p, v in real_curves.items()},
        }
    return section


def engine_section(quick: bool, seed: int, progress: Optional[Callable[[str], None]] = None) -> Section:
    """Native vs reference on the same inputs, timed in this run."""
    from osbench._table import Table

    length = 50_000 if quick else 300_000
    trace = traces.zipf(10_000, 1.0, length, seed=seed)
    trace.next_use()  # prepare once, as a reused Trace would be
    rows = []
    for p in cache.POLICIES:
        t0 = time.perf_counter()
        native = cache.replay(trace, p, 1000)
        t1 = time.perf_counter()
        ref = cache.replay(trace, p, 1000, engine="reference")
        t2 = time.perf_counter()
        assert native.hits == ref.hits, f"engines disagree on {p}"
        rows.append([f"cache replay {p}", round(length / (t1 - t0) / 1e6, 2), round(length / (t2 - t1) / 1e6, 3), round((t2 - t1) / (t1 - t0), 1)])
    table = Table(
        f"Native vs reference, Zipf(1.0) {length:,} accesses, capacity 1,000 (measured in this run)",
        ["hot loop", "native M acc/s", "reference M acc/s", "native / reference"],
        rows,
        note="Both engines give the same hits; the ratio is the speed of the Rust core over the readable Python.",
        key="engines",
    )
    return Section("engines", "Engines: native vs reference", "Every hot loop timed on both engines in this run.", tables=[table], results={"rows": rows})


BUILDERS = [("04-cache", cache_section), ("engines", engine_section)]
