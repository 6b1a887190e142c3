"""``osbench serve sweep``: request rate x configuration, resumable, locally or on Dask."""

from __future__ import annotations

import argparse

from osbench.cli._common import Subcommands, run_sweep, sweep_flags
from osbench.serve import sweep as serve_sweep

ORDER = 20

EPILOG = (
    "example: osbench serve sweep examples/serve-sweep.toml --out serve-sweep.jsonl --dask local   "
    "(rerun the same command to resume)"
)


def cmd_serve_sweep(args: argparse.Namespace) -> int:
    return run_sweep(serve_sweep, args, "latency and goodput against the rate")


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
