"""Routers compared on Mooncake's conversation trace (lecture section 4.5: send a request to the
machine that already caches its prefix): the trace sped up to load ``replicas`` engines as one
is loaded at its own rate, each router's prefix hit rate, TTFT and the load imbalance it makes."""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from osbench import datasets
from osbench._files import figure_png
from osbench._format import number, percent
from osbench._optional import require
from osbench._table import Table
from osbench.serve.cluster import simulate_cluster
from osbench.serve.lecture import MOONCAKE, MOONCAKE_GPU
from osbench.serve.models import MODELS
from osbench.serve.requests import Requests
from osbench.serve.routers import ROUTERS, PrefixAware
from osbench.serve.source import fit

COLUMNS = [
    "router",
    "prompt tokens from the cache",
    "TTFT p50",
    "TTFT p99",
    "imbalance mean",
    "imbalance p99",
    "fewest requests",
    "most requests",
    "imbalance, worst stretch",
]
UNITS = {"prompt tokens from the cache": "%", "TTFT p50": "s", "TTFT p99": "s", "imbalance mean": "x"}
UNITS["imbalance p99"] = "x"
UNITS["imbalance, worst stretch"] = "x"

KEY = "routers"
"""The table's key (in the report's serving section)."""

STRETCHES = 60
"""The stretches of time the imbalance over time is averaged over (the trace's span cut in 60)."""

OVER_TIME = ("prefix-aware", "round-robin", "least-tokens")
"""The routers whose imbalance over time the figure draws."""


def routers_on_mooncake(replicas: int = 8, quick: bool = False) -> Table:
    """Every router of :data:`~osbench.serve.routers.ROUTERS` on Mooncake's conversation trace at
    ``replicas`` times its own rate over ``replicas`` engines (Qwen2.5-7B on an H200 each, as in
    the lecture's demo 06-3), the native engine; ``prefix-aware`` keeps its record in the trace's
    own 512-token blocks (its content's granularity). ``quick``: the first 3,000 requests."""
    title = f"Routers on Mooncake's conversation trace, {replicas} replicas"
    path, _ = datasets.try_fetch(MOONCAKE)
    if path is None:
        return Table(title, COLUMNS, [], note=f"Not shown: {datasets.missing_note([MOONCAKE])}", key=KEY, units=UNITS)
    reqs = Requests.read(MOONCAKE)
    if quick:
        reqs = reqs[:3_000]
    reqs, dropped = fit(reqs, MODELS[MOONCAKE_GPU["model"]].max_model_len)
    left_out = dropped.requests
    sped = reqs.at_rate(reqs.rate * replicas)
    rows: list[list[Any]] = []
    over_time: dict[str, list[Optional[float]]] = {}
    for name, cls in ROUTERS.items():
        router = PrefixAware(block_size=reqs.source_block or None) if cls is PrefixAware else cls()
        result = simulate_cluster(sped, replicas=replicas, router=router, **MOONCAKE_GPU)
        s = result.summary()
        seconds, means = result.imbalance_over_time(STRETCHES)
        over_time[name] = [None if np.isnan(m) else float(m) for m in means]  # None: no arrival in the stretch
        counts = s.requests_per_replica
        rows.append(
            [
                name,
                s.prefix_hit_rate,
                s.merged.ttft.p50,
                s.merged.ttft.p99,
                s.imbalance_mean,
                s.imbalance_p99,
                min(counts),
                max(counts),
                float(np.nanmax(means)),
            ]
        )
    by = {row[0]: row for row in rows}
    aware, rr = by["prefix-aware"], by["round-robin"]
    best_load = min((r for r in rows if r[0] != "prefix-aware"), key=lambda r: r[3])
    return Table(
        title=title,
        columns=COLUMNS,
        rows=rows,
        note=(
            f"Prefix-aware routing serves {percent(aware[1])} of prompt tokens from the replicas' caches against "
            f"{percent(rr[1])} for round-robin, and its p99 TTFT is {number(aware[3])} s against round-robin's "
            f"{number(rr[3])} s and {number(best_load[3])} s for the best load-only rule ({best_load[0]}). "
            "A conversation's turns share their history: sent to the replica that served the previous turn, "
            "a prompt finds it cached there, while a load-only router spreads a conversation over every cache. "
            "Imbalance: the busiest replica's outstanding requests over the mean, as the router saw them at each "
            f"arrival; its worst stretch: the highest mean over {STRETCHES} equal stretches of the run."
        ),
        units=UNITS,
        setup=(
            f"Mooncake's conversation trace, {number(len(reqs))} requests"
            + (" (its first 3,000)" if quick else "")
            + f", {number(left_out)} longer than {number(MODELS[MOONCAKE_GPU['model']].max_model_len)} tokens left "
            f"out, at {number(sped.rate)} requests/s ({replicas} x its own rate); {replicas} x "
            f"{MOONCAKE_GPU['model']} on {MOONCAKE_GPU['gpu']}, vLLM 0.33.0's defaults"
        ),
        key=KEY,
        extra={
            "replicas": replicas,
            "sha256": datasets.sha256(path),
            "left_out": left_out,
            "imbalance_over_time": {"seconds": seconds.tolist(), **over_time},
        },
    )


def imbalance_figure(table: Table) -> bytes:
    """The load imbalance over time of :data:`OVER_TIME`'s routers, from
    :func:`routers_on_mooncake`'s table: PNG bytes. Needs matplotlib."""
    matplotlib = require("matplotlib", "the imbalance figure")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    series = table.extra["imbalance_over_time"]
    fig, ax = plt.subplots(figsize=(9, 4))
    for name in OVER_TIME:
        means = [np.nan if m is None else m for m in series[name]]
        ax.plot(series["seconds"], means, marker=".", markersize=3, label=name)
    ax.axhline(1.0, color="gray", linewidth=0.8, linestyle=":", label="even")
    ax.set_xlabel("seconds from the first arrival")
    ax.set_ylabel("busiest replica's outstanding / mean")
    ax.set_title(f"Load imbalance over time ({STRETCHES} stretches, mean at the arrivals of each)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    return figure_png(fig)
