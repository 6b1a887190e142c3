"""Section 02: CPU scheduling. Lecture demo 02 with M/G/1 theory beside every simulation, response
time against load, the round robin quantum sweep."""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from osbench import sched
from osbench._files import figure_png
from osbench._format import number, percent
from osbench.report.model import Figure, Progress, Section
from osbench.report.sections._shared import pyplot
from osbench.sched import lecture as sched_lecture

KEY = "02-sched"
ORDER = 20


def build(quick: bool, seed: int, progress: Optional[Progress] = None) -> Section:
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
    plt = pyplot()
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
