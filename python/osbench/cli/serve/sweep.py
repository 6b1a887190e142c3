"""``osbench serve sweep``: request rate x configuration, resumable, locally or on Dask."""

from __future__ import annotations

import argparse
from typing import Any

from osbench._table import Table
from osbench.cli._common import Subcommands, run_sweep, sweep_flags
from osbench.serve import sweep as serve_sweep

ORDER = 20

EPILOG = (
    "example: osbench serve sweep examples/serve-sweep.toml --out serve-sweep.jsonl --dask local   "
    "(rerun the same command to resume)"
)


COLUMNS = {
    "throughput": ("/s", lambda s: s["request_throughput"]),
    "goodput": ("/s", lambda s: s["goodput"]),
    "TTFT p99": ("s", lambda s: s["ttft"]["p99"]),
    "TPOT p99": ("s", lambda s: s["tpot"]["p99"]),
    "preemptions": ("", lambda s: s["preemptions"]),
}
"""The summary figures of the sweep's table: unit, and where each is in a cell's summary."""


def results_table(results: list[dict[str, Any]]) -> Table:
    """The sweep's latency and goodput, one row per configuration and rate."""
    rows = [[r["config"], r["rate"], *(read(r["summary"]) for _, read in COLUMNS.values())] for r in results]
    units = {"rate": "/s"} | {c: unit for c, (unit, _) in COLUMNS.items() if unit}
    return Table("Latency and goodput by configuration and rate", ["config", "rate", *COLUMNS], rows, units=units)


def cmd_serve_sweep(args: argparse.Namespace) -> int:
    return run_sweep(serve_sweep, args, "latency and goodput against the rate", results_table)


def add_commands(sub: Subcommands) -> None:
    p = sub.add_parser("sweep", help="request rate x configuration, resumable, locally or on Dask", epilog=EPILOG)
    p.add_argument("spec", help="a TOML or JSON spec: requests, rates, configs (see osbench.serve.sweep)")
    sweep_flags(
        p,
        "serve-sweep.jsonl",
        workers="local process pool size (default: every core)",
        figure="where to draw latency and goodput against the rate (default: the results file with .png)",
    )
    p.add_argument("--json", action="store_true", help="machine-readable output")  # the spec names engine and seed
    p.set_defaults(func=cmd_serve_sweep)
