"""``osbench datasets``: the public traces listed, fetched (checked by SHA-256) and verified."""

from __future__ import annotations

import argparse
import json
import sys

import osbench
from osbench._format import size
from osbench.cli._common import Subcommands, UserError

ORDER = 80
HELP = "the public traces: list them, fetch them (checked by SHA-256), verify local copies"


EPILOG = "example: osbench datasets fetch all   (then: osbench cache curve --trace cloudphysics ...)"


def cmd_datasets(args: argparse.Namespace) -> int:
    if args.action == "list":
        if args.names:
            raise UserError("osbench datasets list takes no names (use: osbench datasets fetch NAME)")
        rows = osbench.datasets.available()
        if args.json:
            print(json.dumps([{**vars(s), "path": None if s.path is None else str(s.path)} for s in rows]))
            return 0
        width = max(len(s.name) for s in rows)
        for s in rows:
            where = str(s.path) if s.path is not None else "not here"
            print(f"{s.name:<{width}}  {size(s.size):>9}  {where}\n{'':<{width}}  {s.description}; {s.licence}")
        print(
            f"\nosbench datasets fetch NAME|all downloads into {osbench.datasets.cache_dir()}; OSBENCH_DATA_DIR names a mirror"
        )
        return 0
    names = list(osbench.datasets.NAMES) if args.names == ["all"] or not args.names else args.names
    for name in names:
        if name not in osbench.datasets.REGISTRY:
            raise UserError(f"no dataset {name!r}: use one of {', '.join(osbench.datasets.NAMES)} or all")
    failed = 0
    for name in names:
        try:
            path = osbench.datasets.fetch(name) if args.action == "fetch" else osbench.datasets.local(name)
        except osbench.datasets.DatasetError as exc:
            print(f"osbench: error: {exc}", file=sys.stderr)
            failed += 1
            continue
        state = "verified" if path is not None else "not here (osbench datasets fetch " + name + ")"
        print(f"{name}: {path if path is not None else ''} {state}".replace("  ", " "))
    return 2 if failed else 0


def add_commands(sub: Subcommands) -> None:
    p = sub.add_parser(
        "datasets",
        help=HELP,
        epilog=EPILOG,
    )
    p.add_argument("action", nargs="?", choices=("list", "fetch", "verify"), default="list")
    p.add_argument("names", nargs="*", help="dataset names, or all (default for fetch and verify: all)")
    p.add_argument("--json", action="store_true", help="machine-readable output (list)")
    p.set_defaults(func=cmd_datasets)
