"""``osbench lecture``: a lecture demo's tables, printed or as JSON."""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
from typing import Any

from osbench._engines import ENGINES
from osbench.cli._common import Subcommands, UserError, progress

ORDER = 10
HELP = "print a lecture demo's tables"


LECTURES = {
    "01": ("osbench.host.lecture", "Processes, threads and the host"),
    "02": ("osbench.sched.lecture", "CPU scheduling"),
    "03": ("osbench.mem.lecture", "Virtual memory and paging"),
    "04": ("osbench.cache.lecture", "Caching and eviction"),
    "05": ("osbench.radix.lecture", "Prefix caching with radix trees"),
    "06": ("osbench.serve.lecture", "Serving: continuous batching bounded by the KV cache"),
}

EPILOG = "example: osbench lecture 04"


def _lecture_tables(which: str, quick: bool, engine: str = "native") -> list[Any]:
    module_name, _ = LECTURES[which]
    module = importlib.import_module(module_name)
    takes = inspect.signature(module.tables).parameters
    options: dict[str, Any] = {"quick": quick}
    if engine != "native":
        if "engine" not in takes:
            raise UserError(f"lecture {which} runs on the native engine only (its tables are large); drop --engine")
        options["engine"] = engine
    if "progress" in takes:  # a demo that measures for minutes says what it is doing
        options["progress"] = progress()
    return list(module.tables(**options))


def cmd_lecture(args: argparse.Namespace) -> int:
    keys = list(LECTURES) if args.demo == "all" else [args.demo]
    out: dict[str, Any] = {}
    for key in keys:
        tables = _lecture_tables(key, args.quick, args.engine)
        if args.json:
            out[key] = [t.to_dict() for t in tables]
        else:
            print(f"== Lecture demo {key}: {LECTURES[key][1]} ==\n")
            for t in tables:
                print(t.to_text() + "\n")
    if args.json:
        print(json.dumps(out, indent=2, default=str))
    return 0


def add_commands(sub: Subcommands) -> None:
    p = sub.add_parser("lecture", help=HELP, epilog=EPILOG)
    p.add_argument("demo", choices=[*list(LECTURES), "all"])
    p.add_argument("--quick", action="store_true", help="smaller runs where a demo has large ones")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--engine", choices=ENGINES, default="native", help="simulation engine (lecture 04)")
    p.set_defaults(func=cmd_lecture)
