"""``osbench serve crosscheck``: the step-time models against step and kernel measurements that
are not AIConfigurator's (Vidur's layer profiles, splitwise-sim's whole-model step times;
osbench.serve.crosscheck)."""

from __future__ import annotations

import argparse
import json
import sys

from osbench import _files
from osbench._format import number, percent
from osbench.cli._common import Subcommands
from osbench.serve import crosscheck

ORDER = 35

EPILOG = "example: osbench serve crosscheck --out crosscheck.csv"


def cmd_serve_crosscheck(args: argparse.Namespace) -> int:
    checks = crosscheck.vidur_checks() + crosscheck.splitwise_checks()
    table = crosscheck.summary(checks)
    if args.out:
        _files.write_csv(args.out, [c.to_dict() for c in checks], name="--out")
    if args.json:
        json.dump({"summary": table}, sys.stdout)
        print()
        return 0
    print("MAPE (and mean error) by source, GPU, what was timed and predicting model")
    for r in table:
        print(
            f"  {r['source']:<9} {r['gpu']:<9} {r['what']:<14} {r['kind']:<10} {number(r['points']):>6} points  "
            f"MAPE {percent(r['mape'] / 100)}  mean {percent(r['mean_error'] / 100)}"
        )
    return 0


def add_commands(sub: Subcommands) -> None:
    p = sub.add_parser(
        "crosscheck",
        help="the step-time models against Vidur's layer profiles and splitwise-sim's step times",
        epilog=EPILOG,
    )
    p.add_argument("--out", help="write every check (measured, predicted, error) to this CSV")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_serve_crosscheck)
