"""``osbench sweep``: traces x policies x capacities, resumable, locally or on Dask."""

from __future__ import annotations

import argparse
import os
from typing import Any

import osbench
from osbench._table import Table
from osbench.cli._common import Subcommands, common_flags, run_sweep, sweep_flags

ORDER = 90
HELP = "run traces x policies x capacities, resumable, locally or on Dask"


EPILOG = "example: osbench sweep study.toml --out results.jsonl --dask local   (rerun the same command to resume)"


def results_table(results: list[dict[str, Any]]) -> Table:
    """The sweep's hit ratios, one row per cell."""
    rows = [
        [
            os.path.basename(r["trace"]),
            r["policy"] + (f" + {r['admission']}" if r.get("admission") else ""),
            r["capacity"],
            r["hit_ratio"],
        ]
        for r in results
    ]
    return Table(
        "Hit ratio by trace, policy and capacity",
        ["trace", "policy", "capacity", "hit ratio"],
        rows,
        units={"hit ratio": "%"},
    )


def cmd_sweep(args: argparse.Namespace) -> int:
    return run_sweep(osbench.cache.sweep, args, "the curves", results_table)


def add_commands(sub: Subcommands) -> None:
    p = sub.add_parser("sweep", help=HELP, epilog=EPILOG)
    p.add_argument("spec", help="a TOML or JSON spec: traces, policies, capacities (see osbench.cache.sweep)")
    sweep_flags(
        p,
        "sweep-results.jsonl",
        workers="threads on this machine (default: every usable CPU)",
        figure="where to draw the curves (default: the results file with .png)",
    )
    common_flags(p)
    p.set_defaults(func=cmd_sweep)
