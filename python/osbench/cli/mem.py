"""``osbench mem``: memory allocation strategies and their fragmentation."""

from __future__ import annotations

import argparse
import json

import osbench
from osbench._format import number, percent
from osbench.cli._common import Subcommands, common_flags, one_of, reading, sole_command

ORDER = 50
HELP = "memory allocation: strategies and fragmentation"


EPILOG_ALLOC = "example: osbench mem alloc --strategy paged --page-size 16 --capacity 20000 --requests 5000"

ALLOC_JSON = (
    "strategy",
    "capacity",
    "page_size",
    "bound",
    "requests",
    "rejected",
    "preempted",
    "rejected_fraction",
    "preempted_fraction",
    "utilization",
    "allocated_fraction",
    "internal",
    "external",
)
"""The fields of ``osbench mem alloc --json``."""


def cmd_mem_alloc(args: argparse.Namespace) -> int:
    w = osbench.mem.workload(args.requests, capacity=args.capacity, seed=args.seed)
    r = osbench.mem.simulate(
        w, args.strategy, args.capacity, page_size=args.page_size, bound=args.bound, engine=args.engine
    )
    if args.json:
        print(json.dumps({k: getattr(r, k) for k in ALLOC_JSON}))
    else:
        print(f"{r.strategy}, capacity {number(r.capacity)} units, {number(r.requests)} requests (seed {args.seed}):")
        print(
            f"  rejected {percent(r.rejected_fraction)}; memory holding data {percent(r.utilization)}; "
            f"internal fragmentation {percent(r.internal)} of allocated; external {percent(r.external)} of free"
        )
    return 0


def add_commands(sub: Subcommands) -> None:
    p = sole_command(sub, "mem", HELP, "alloc", "simulate one allocation strategy", EPILOG_ALLOC)
    p.add_argument("--strategy", default="first", type=str.lower, help=one_of(osbench.mem.STRATEGIES))
    p.add_argument("--capacity", type=int, default=20_000, help="memory units (default 20000)")
    p.add_argument("--requests", type=int, default=5_000, help="number of requests (default 5000)")
    p.add_argument(
        "--page-size",
        type=int,
        default=16,
        help=f"page size for {one_of(reading(osbench.mem.PARAMETERS, 'page_size'), 'and')} (default 16)",
    )
    p.add_argument(
        "--bound",
        type=int,
        default=400,
        help=f"what {one_of(reading(osbench.mem.PARAMETERS, 'bound'), 'and')} sets aside per request (default 400)",
    )
    common_flags(p)
    p.set_defaults(func=cmd_mem_alloc)
