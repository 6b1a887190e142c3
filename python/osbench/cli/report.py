"""``osbench report``: the report folder, or two reports compared."""

from __future__ import annotations

import argparse
import json
import sys

import osbench
from osbench._optional import require
from osbench.cli._common import Subcommands, common_flags, output_folder, progress

ORDER = 20
HELP = "write the report folder (HTML, Markdown, JSON, figures)"


EPILOG = (
    "example: osbench report --out report --quick   (then, with a second report: osbench report --compare report other)"
)


def cmd_report(args: argparse.Namespace) -> int:
    if args.compare:
        return _compare_reports(args)
    out = output_folder("--out", "report" if args.out is None else args.out)
    require("matplotlib", "osbench report (its figures)")  # at once, not after minutes of work
    say = progress()
    written = osbench.report.run(out, quick=args.quick, seed=args.seed, progress=say)
    say(f"wrote {len(written)} files to {out}/ (open {out / 'index.html'})")
    return 0


def _compare_reports(args: argparse.Namespace) -> int:
    """``osbench report --compare A B``: print the comparison and write it as a folder."""
    comparison = osbench.report.compare(*args.compare)
    if args.json:
        print(json.dumps(comparison.to_dict()))
    else:
        print(comparison.to_text())
    out = output_folder("--out", "report-compare" if args.out is None else args.out)
    osbench.report.write_comparison(comparison, out)
    print(f"wrote {out}/ (open {out / 'index.html'})", file=sys.stderr)
    return 0


def add_commands(sub: Subcommands) -> None:
    p = sub.add_parser("report", help=HELP, epilog=EPILOG)
    p.add_argument("--out", help="output folder (default: report; report-compare with --compare)")
    p.add_argument("--quick", action="store_true", help="lecture scale only, small host probes")
    p.add_argument(
        "--compare",
        nargs=2,
        metavar=("A", "B"),
        help="compare two reports (folders or results.json files) instead of running one: every measured figure "
        "side by side with the ratio, the simulated sections checked identical, the findings that changed",
    )
    common_flags(p)
    p.set_defaults(func=cmd_report)
