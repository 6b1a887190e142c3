"""Turn a pytest-benchmark JSON file into the README's table: per group, each row's median
time and how many times slower it is than the group's native row (ratios from one run).

    python benches/summarize.py bench-results/latest.json > bench-results/summary.md
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from typing import Any


def row_name(bench: dict[str, Any]) -> str:
    params = bench.get("params") or {}
    return str(params.get("row") or params.get("engine") or bench["name"].split("[")[0].removeprefix("test_"))


def summarize(data: dict[str, Any]) -> str:
    groups: dict[str, list[tuple[str, float]]] = defaultdict(list)
    for b in data["benchmarks"]:
        groups[b["group"] or b["name"]].append((row_name(b), b["stats"]["median"]))
    cpu = data.get("machine_info", {}).get("cpu", {}).get("brand_raw", "unknown CPU")
    lines = [
        f"Measured on {cpu}, {data.get('machine_info', {}).get('cpu', {}).get('count', '?')} logical CPUs, {data.get('datetime', '')[:10]}.",
        "",
    ]
    lines += ["| workload | row | median | time / native row |", "|---|---|---:|---:|"]
    for group in sorted(groups):
        rows = sorted(groups[group], key=lambda r: r[1])
        # Ratios are to the native row, or for curves to one native replay.
        by_name = dict(rows)
        base = next((by_name[k] for k in ("native", "native-100k", "one-replay") if k in by_name), rows[0][1])
        for name, t in rows:
            ratio = t / base if base else float("nan")
            lines.append(f"| {group} | {name} | {t * 1e3:,.1f} ms | {ratio:,.1f}x |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    with open(sys.argv[1]) as f:
        print(summarize(json.load(f)), end="")
