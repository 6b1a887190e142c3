"""``osbench host``: measure this host and write its report."""

from __future__ import annotations

import argparse
import json
import sys

import osbench
from osbench._optional import install_hint
from osbench.cli._common import Subcommands, common_flags, output_folder, progress

ORDER = 30
HELP = "measure this host: round trips, the GIL, page faults, memory latency"


EPILOG = "example: osbench host --quick --out host-report"


def cmd_host(args: argparse.Namespace) -> int:
    output_folder("--out", args.out)
    measured = osbench.host.measure(quick=args.quick, progress=progress())
    if args.json:
        print(json.dumps(measured.to_dict(), default=str))
    else:
        for t in measured.tables():
            print(t.to_text() + "\n")
    written = osbench.host.write(measured, args.out)
    print(f"wrote {', '.join(str(p) for p in written.values())}", file=sys.stderr)
    if not any(str(p).endswith(".png") for p in written.values()):
        print(f"no figures: matplotlib is not installed ({install_hint('matplotlib')})", file=sys.stderr)
    return 0


def add_commands(sub: Subcommands) -> None:
    p = sub.add_parser("host", help=HELP, epilog=EPILOG)
    p.add_argument("--quick", action="store_true", help="small probes (under a minute)")
    p.add_argument("--out", default="host-report", help="output folder for host.json, host.md and figures")
    common_flags(p)
    p.set_defaults(func=cmd_host)
