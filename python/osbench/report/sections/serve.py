"""Section 06: serving, continuous batching bounded by the KV cache. The rate sweep (a table of
:mod:`osbench.serve.lecture`, read by column name) with its latency and goodput figures, then
lecture demo 06."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Optional

from osbench import datasets
from osbench._files import figure_png
from osbench._format import duration, number, ratio
from osbench._table import Table
from osbench.report.model import Figure, Progress, Section
from osbench.report.sections._shared import pyplot
from osbench.serve import cluster_study, disagg_study
from osbench.serve import lecture as serve_lecture
from osbench.serve.lecture import slo_words
from osbench.serve.slo import RATE, highest_within_slo

KEY = "06-serve"
ORDER = 60

Record = Mapping[str, Any]


def _latency_figure(rows: Sequence[Record], setup: str) -> Figure:
    plt = pyplot()
    rates = [r[RATE] for r in rows]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for ax, (slo, name) in zip(axes, ((serve_lecture.SLO_TTFT, "TTFT"), (serve_lecture.SLO_TPOT, "TPOT"))):
        ax.plot(rates, [r[f"{name} p50"] for r in rows], marker="o", markersize=3, label="p50")
        ax.plot(rates, [r[f"{name} p99"] for r in rows], marker="o", markersize=3, linestyle="--", label="p99")
        ax.axhline(slo, color="C3", linewidth=0.8, label=f"SLO {duration(slo)}")
        ax.set_yscale("log")
        ax.set_xlabel("request rate (requests/s)")
        ax.set_ylabel(f"{name} (s)")
        ax.set_title(name)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    best = highest_within_slo(rows, serve_lecture.SLO_TTFT, serve_lecture.SLO_TPOT)
    beyond = [r for r in rows if best is None or r[RATE] > best[RATE]]
    if best is not None:
        caption = (
            f"Up to {number(best[RATE])} requests/s the p99 TTFT ({duration(best['TTFT p99'])}) and p99 TPOT "
            f"({duration(best['TPOT p99'])}) stay within the SLO"
            + (f"; at {number(beyond[0][RATE])} the p99 TTFT is {duration(beyond[0]['TTFT p99'])}" if beyond else "")
        )
    else:
        caption = f"Even at {number(rows[0][RATE])} requests/s the p99 latencies miss the SLO ({slo_words()})"
    return Figure("serve-latency-vs-rate", caption, figure_png(fig), setup)


def _goodput_figure(rows: Sequence[Record], setup: str) -> Figure:
    plt = pyplot()
    rates = [r[RATE] for r in rows]
    fig, ax = plt.subplots(figsize=(7, 4.2))
    ax.plot(rates, rates, color="gray", linewidth=0.8, linestyle=":", label="offered")
    ax.plot(rates, [r["throughput"] for r in rows], marker="o", markersize=3, label="throughput")
    ax.plot(rates, [r["goodput"] for r in rows], marker="o", markersize=3, label=f"goodput ({slo_words()})")
    ax.set_xlabel("request rate (requests/s)")
    ax.set_ylabel("requests/s")
    ax.set_title("Goodput: the requests that meet the SLO, per second")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    peak = max(rows, key=lambda r: r["goodput"])
    last = rows[-1]
    return Figure(
        "serve-goodput-vs-rate",
        f"Goodput peaks at {number(peak['goodput'])} requests/s at an offered {number(peak[RATE])}; past the knee "
        f"the queue takes the SLO, and at {number(last[RATE])} only {number(last['goodput'])} requests/s meet it",
        figure_png(fig),
        setup,
    )


def _capacity_figure(t: Table) -> Figure:
    """The fewest GPUs that meet the SLO against the rate, and what each GPU then sustains, from
    table 06-6."""
    plt = pyplot()
    rows = [r for r in t.records() if r["GPUs"] is not None]
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    rates = [r[RATE] for r in rows]
    left.plot(rates, [r["GPUs"] for r in rows], marker="o", markersize=3, label="the plan's answer")
    first = rows[0]
    left.plot(
        rates,
        [r / first["knee per GPU"] for r in rates],
        color="gray",
        linewidth=0.8,
        linestyle=":",
        label=f"rate / {number(first['knee per GPU'])} (the smallest deployment's knee per GPU)",
    )
    left.set_xlabel("request rate (requests/s)")
    left.set_ylabel("GPUs")
    left.set_title("The fewest GPUs that meet the SLO")
    right.plot([r["GPUs"] for r in rows], [r["knee per GPU"] for r in rows], marker="o", markersize=3)
    right.set_xlabel("GPUs of the answer")
    right.set_ylabel("knee per GPU (requests/s)")
    right.set_title("The highest rate within the SLO, per GPU")
    for ax in (left, right):
        ax.grid(True, alpha=0.3)
    left.legend(fontsize=8)
    last = rows[-1]
    caption = (
        f"{number(first['GPUs'])} GPU{'s' if first['GPUs'] != 1 else ''} at {number(first[RATE])} requests/s, "
        f"{number(last['GPUs'])} at {number(last[RATE])} ({last['deployment']}); each GPU of the answer sustains "
        f"{number(last['knee per GPU'])} requests/s at the largest, {number(first['knee per GPU'])} at the smallest"
    )
    return Figure("serve-capacity-vs-rate", caption, figure_png(fig), t.setup_line)


def _imbalance_figure(t: Table) -> Figure:
    """The routers' load imbalance over time, from the router table's series."""
    by = {r["router"]: r for r in t.records()}
    worst = ", ".join(f"{name} {ratio(by[name]['imbalance, worst stretch'])}" for name in cluster_study.OVER_TIME)
    return Figure(
        "serve-routers-imbalance",
        f"The busiest replica's outstanding requests over the mean, at its worst stretch of the run: {worst}",
        cluster_study.imbalance_figure(t),
        t.setup_line,
    )


def _kv_figure(t: Table) -> Figure:
    """The batch and the KV blocks over time, from table 06-1's run."""
    plt = pyplot()
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


def build(quick: bool, seed: int, progress: Optional[Progress] = None) -> Section:
    if progress:
        progress("  lecture 06 tables")
    tables = serve_lecture.tables(quick=quick)
    by_key = {t.key: t for t in tables}
    reqs, workload, missing = serve_lecture.rate_workload(quick, seed)
    rate_table = serve_lecture.rate_sweep(reqs, workload, quick=quick, progress=progress)
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
                "preset": serve_lecture.RATE_PRESET,
                "slo_ttft": serve_lecture.SLO_TTFT,
                "slo_tpot": serve_lecture.SLO_TPOT,
                "columns": rate_table.columns,
                "rows": rate_table.rows,
            }
        },
    )
    if missing is not None:
        section.skipped.append(f"The rate sweep runs on generated requests, not on Azure's trace: {missing}")
    else:
        section.results["datasets"] = {
            serve_lecture.RATE_TRACE: datasets.sha256(datasets.fetch(serve_lecture.RATE_TRACE))
        }
    mooncake = by_key["06-3"]
    if mooncake.rows:
        section.results.setdefault("datasets", {})[serve_lecture.MOONCAKE] = mooncake.extra["sha256"]
    else:
        section.skipped.append(
            "Prefix caching on Mooncake's conversation trace (table 06-3) is not shown: "
            + datasets.missing_note([serve_lecture.MOONCAKE])
        )
    if progress:
        progress("  aggregated against disaggregated serving")
    split = disagg_study.aggregated_vs_disaggregated(quick=quick)
    section.tables.append(split)
    section.results.setdefault("datasets", {}).update(split.extra["sha256"])
    if len(split.extra["sha256"]) < len(disagg_study.TRACES):
        section.skipped.append(
            "Aggregated against disaggregated serving shows only the traces here: "
            + datasets.missing_note([t for t in disagg_study.TRACES if t not in split.extra["sha256"]])
        )
    records = rate_table.records()
    section.figures.append(_latency_figure(records, rate_table.setup))
    section.figures.append(_goodput_figure(records, rate_table.setup))
    section.figures.append(_kv_figure(by_key["06-1"]))
    if sum(r["GPUs"] is not None for r in by_key["06-6"].records()) >= 2:
        section.figures.append(_capacity_figure(by_key["06-6"]))
    if progress:
        progress("  routers on Mooncake's conversation trace")
    routers = cluster_study.routers_on_mooncake(8, quick=quick)
    section.tables.append(routers)
    if routers.rows:
        section.figures.append(_imbalance_figure(routers))
    else:
        section.skipped.append(
            "Routers compared on Mooncake's conversation trace are not shown: "
            + datasets.missing_note([serve_lecture.MOONCAKE])
        )
    return section
