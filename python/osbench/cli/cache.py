"""``osbench cache``: a trace replayed through a policy, and hit-ratio curves."""

from __future__ import annotations

import argparse
import json
from typing import Any

import osbench
from osbench._format import number, percent, size
from osbench._table import Table
from osbench.cli._common import Subcommands, command_group, common_flags, int_list, one_of
from osbench.errors import OsbenchError

ORDER = 100
HELP = "cache replacement: replay a trace, hit-ratio curves"


EPILOG_REPLAY = "example: osbench cache replay --policy arc --capacity 100 --zipf 1000,0.8,30000"
EPILOG_CURVE = "example: osbench cache curve --policy lru --capacities 10,100,1000 --trace cloudphysics"


def load_trace(args: argparse.Namespace) -> Any:
    """The trace the command line names: --trace (a path or a dataset name) or --zipf."""
    if args.trace:
        return osbench.traces.read(args.trace, format=args.format)  # a path or a dataset name; format None: detected
    n, alpha, length = args.zipf
    return osbench.traces.zipf(int(n), float(alpha), int(length), seed=args.seed)


def _zipf_spec(text: str) -> tuple[int, float, int]:
    try:
        n, alpha, length = text.split(",")
        return int(n), float(alpha), int(length)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--zipf {text!r}: expected N_KEYS,ALPHA,LENGTH such as 1000,0.8,30000"
        ) from None


def _capacity(capacity: int, sizes: bool) -> str:
    """A cache's capacity for a person: in bytes with the trace's sizes, else in objects."""
    return size(capacity) if sizes else f"{number(capacity)} objects"


def _admission(args: argparse.Namespace) -> dict[str, Any]:
    """The keywords of --admission NAME[:KEY=VALUE,...] (none without it)."""
    if args.admission is None:
        return {}
    name, params = osbench.cache.admission.parse(args.admission)
    return {"admission": name, "admission_params": params}


def _cache_keywords(args: argparse.Namespace) -> dict[str, Any]:
    """The keywords both commands pass after the trace, the policy and the capacities: the
    engine, --sizes, --admission and the policy's parameters."""
    return {"engine": args.engine, "sizes": True if args.sizes else None, **_admission(args), **args.policy[1]}


def _policy(text: str) -> tuple[str, dict[str, Any]]:
    """--policy NAME[:KEY=VALUE,...]: the policy and its parameters (argparse shows a refusal's
    own message)."""
    try:
        return osbench.cache.policies.parse(text)
    except OsbenchError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def cmd_cache_replay(args: argparse.Namespace) -> int:
    r = osbench.cache.replay(load_trace(args), args.policy[0], args.capacity, **_cache_keywords(args))
    if args.json:
        print(json.dumps(r.to_dict()))
    else:
        print(
            f"{r.policy}, capacity {_capacity(r.capacity, args.sizes)}: {number(r.accesses)} accesses, {number(r.hits)} "
            f"hits, {number(r.misses)} misses, hit ratio {percent(r.hit_ratio)}"
        )
    return 0


def cmd_cache_curve(args: argparse.Namespace) -> int:
    policy = args.policy[0]
    ratios = osbench.cache.curve(load_trace(args), policy, args.capacities, sample=args.sample, **_cache_keywords(args))
    if args.json:
        print(json.dumps({"policy": policy, "capacities": args.capacities, "hit_ratio": ratios.tolist()}))
    else:
        rows = [[c, float(h)] for c, h in zip(args.capacities, ratios)]
        unit = "bytes" if args.sizes else "objects"
        table = Table(f"{policy} hit ratio by capacity", [f"capacity ({unit})", "hit ratio"], rows)
        table.units = {f"capacity ({unit})": "B" if args.sizes else "", "hit ratio": "%"}
        print(table.to_text())
    return 0


def add_commands(sub: Subcommands) -> None:
    cache_sub = command_group(sub, "cache", HELP, EPILOG_REPLAY)
    for name, func, epilog in (("replay", cmd_cache_replay, EPILOG_REPLAY), ("curve", cmd_cache_curve, EPILOG_CURVE)):
        p = cache_sub.add_parser(name, help=f"cache {name}", epilog=epilog)
        p.add_argument(
            "--policy",
            metavar="NAME[:KEY=VALUE,...]",
            default=("lru", {}),
            type=_policy,
            help=f"{one_of(osbench.cache.POLICIES)}, with its parameters, e.g. lruk:k=3, slru:segments=2, "
            "random:seed=7",
        )
        p.add_argument("--sizes", action="store_true", help="use the trace's object sizes: capacities then count bytes")
        p.add_argument(
            "--admission",
            metavar="NAME[:KEY=VALUE,...]",
            help=f"an admission filter in front of the cache, {one_of(osbench.cache.ADMISSIONS)}, with its "
            "parameters, e.g. bloom, size:size=4096, prob:prob=0.1,seed=3",
        )
        src = p.add_mutually_exclusive_group()
        src.add_argument(
            "--trace",
            help="a trace file (npy, csv/txt, oracleGeneral, zstd, Mooncake or Azure; format detected) or a "
            "dataset name (osbench datasets)",
        )
        p.add_argument(
            "--format", help=f"the trace file's format when its name does not tell: {one_of(osbench.traces.FORMATS)}"
        )
        src.add_argument(
            "--zipf", type=_zipf_spec, default=(1000, 0.8, 30000), help="N_KEYS,ALPHA,LENGTH (default 1000,0.8,30000)"
        )
        if name == "replay":
            p.add_argument("--capacity", type=int, default=100, help="cache size in objects")
        else:
            p.add_argument("--capacities", type=int_list, default=[10, 100, 1000], help="comma-separated sizes")
            p.add_argument("--sample", type=float, help="estimate from a SHARDS spatial sample at this rate, e.g. 0.01")
        common_flags(p)
        p.set_defaults(func=func)
