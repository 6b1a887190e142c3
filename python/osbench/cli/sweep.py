"""``osbench sweep``: traces x policies x capacities, resumable, locally or on Dask."""

from __future__ import annotations

import argparse

import osbench
from osbench.cli._common import Subcommands, common_flags, run_sweep, sweep_flags

ORDER = 90
HELP = "run traces x policies x capacities, resumable, locally or on Dask"
"""This command's line in ``osbench --help``."""


EPILOG = "example: osbench sweep study.toml --out results.jsonl --dask local   (rerun the same command to resume)"


def cmd_sweep(args: argparse.Namespace) -> int:
    return run_sweep(osbench.cache.sweep, args, "the curves")


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
