"""Section 05: prefix caching with radix trees. Lecture demo 05, sharing across conversations, prefix
against whole-prompt matching, and the block-level curves of Mooncake's traces."""

from __future__ import annotations

from typing import Any, Optional

from osbench import datasets, radix
from osbench._files import figure_png
from osbench._format import number, percent, ratio
from osbench.radix import lecture as radix_lecture
from osbench.report.model import Figure, Progress, Section
from osbench.report.sections._shared import pyplot

KEY = "05-radix"
ORDER = 50


def build(quick: bool, seed: int, progress: Optional[Progress] = None) -> Section:
    tables = radix_lecture.tables(quick=quick)
    section = Section(
        "05-radix",
        "05 Prefix caching with radix trees",
        "SGLang's RadixAttention: the tree drawing, sharing across multi-turn conversations, "
        "reference counts, prefix vs whole-prompt matching, and the block-level hit-ratio curve of "
        "Mooncake's production traces.",
        tables=tables,
    )
    plt = pyplot()
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
