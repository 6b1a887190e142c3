"""Section 03: virtual memory and paging. Lecture demo 03, fragmentation by allocation strategy, the
thrashing knee."""

from __future__ import annotations

from typing import Optional

import numpy as np

from osbench._files import figure_png
from osbench._format import number
from osbench.mem import lecture as mem_lecture
from osbench.report.model import Figure, Progress, Section
from osbench.report.sections._shared import pyplot

KEY = "03-mem"
ORDER = 30


def build(quick: bool, seed: int, progress: Optional[Progress] = None) -> Section:
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
    plt = pyplot()
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
