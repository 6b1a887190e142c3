"""``osbench sched``: CPU scheduling, one policy simulated on a workload."""

from __future__ import annotations

import argparse
import json
from typing import Any, Optional

import osbench
from osbench._format import number, percent
from osbench.cli._common import Subcommands, common_flags, one_of, reading, sole_command
from osbench.errors import OsbenchError

ORDER = 40
HELP = "CPU scheduling: simulate a policy on a workload"


EPILOG_SIMULATE = "example: osbench sched simulate --policy srpt --jobs 100000 --load 0.8 --sizes lognormal"


def cmd_sched_simulate(args: argparse.Namespace) -> int:
    w = osbench.sched.workload(args.jobs, load=args.load, sizes=args.sizes, seed=args.seed)
    params: dict[str, Any] = {}
    if args.quantum is not None:  # given for a policy that reads no quantum: refused by simulate
        params["quantum"] = args.quantum
    if args.switch_cost:
        params["switch_cost"] = args.switch_cost
    summary = osbench.sched.simulate(w, args.policy, engine=args.engine, **params).summary()
    if args.json:
        print(
            json.dumps(
                {
                    "policy": args.policy,
                    "jobs": args.jobs,
                    "load": args.load,
                    "sizes": args.sizes,
                    "seed": args.seed,
                    "summary": summary.to_dict(),
                },
                default=str,
            )
        )
        return 0
    theory = _theory(args.policy, args.sizes, args.load)
    print(f"{args.policy}, {number(args.jobs)} jobs, {args.sizes} sizes, load {number(args.load)}, seed {args.seed}:")
    print(
        f"  mean response {number(summary.mean_response)} +- {number(summary.mean_response_ci95)} (95% CI)"
        + (f", M/G/1 theory {number(theory)}" if theory is not None else "")
    )
    print(
        f"  p50 / p99 / p99.9 response {number(summary.p50_response)} / {number(summary.p99_response)} / "
        f"{number(summary.p999_response)}"
    )
    print(
        f"  mean slowdown {number(summary.mean_slowdown)}; slowdown of the largest 1% "
        f"{number(summary.slowdown_largest_1pct)}; max first wait {number(summary.max_first_wait)}"
    )
    if summary.switches:
        print(f"  switches {number(summary.switches)}; time switching {percent(summary.switching_fraction)}")
    return 0


def _theory(policy: str, sizes: str, load: float) -> Optional[float]:
    """The M/G/1 mean response of the run, where theory has a closed form for it."""
    try:
        return osbench.sched.theory(policy, sizes, load)
    except OsbenchError:  # no closed form for this policy and these sizes
        return None


def add_commands(sub: Subcommands) -> None:
    p = sole_command(sub, "sched", HELP, "simulate", "simulate one policy", EPILOG_SIMULATE)
    p.add_argument("--policy", default="srpt", type=str.lower, help=one_of(osbench.sched.POLICIES))
    p.add_argument("--jobs", type=int, default=100_000, help="number of jobs (default 100000)")
    p.add_argument("--load", type=float, default=0.8, help="offered load (default 0.8)")
    p.add_argument("--sizes", default="exp", help=one_of(osbench.sched.DISTRIBUTIONS))
    p.add_argument(
        "--quantum",
        type=float,
        default=None,
        help=f"quantum of {one_of(reading(osbench.sched.PARAMETERS, 'quantum'), 'and')} (default 0.1)",
    )
    p.add_argument("--switch-cost", type=float, default=0.0, help="cost of each switch between jobs")
    common_flags(p)
    p.set_defaults(func=cmd_sched_simulate)
