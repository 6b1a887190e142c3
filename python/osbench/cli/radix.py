"""``osbench radix``: requests replayed through a radix-tree prefix cache."""

from __future__ import annotations

import argparse
import json

import osbench
from osbench._format import number, percent
from osbench.cli._common import Subcommands, common_flags, one_of, sole_command

ORDER = 60
HELP = "radix-tree prefix cache: replay requests"


EPILOG_REPLAY = (
    "example: osbench radix replay --capacity 500 --conversations 400   (or --mooncake mooncake-conversation)"
)


def cmd_radix_replay(args: argparse.Namespace) -> int:
    if args.mooncake:
        requests = osbench.radix.mooncake(args.mooncake)
    else:
        requests = osbench.radix.conversations(args.conversations, seed=args.seed)
    r = osbench.radix.replay(requests, args.capacity, mode=args.mode, engine=args.engine)
    if args.json:
        print(json.dumps(r.to_dict(), default=str))
    else:
        cap = "unlimited" if r.capacity is None else f"{number(r.capacity)} tokens"
        print(
            f"{r.mode} cache, capacity {cap}: {number(r.requests)} requests, {number(r.hit_tokens)} of "
            f"{number(r.total_tokens)} tokens hit ({percent(r.hit_ratio)}), {number(r.nodes)} nodes"
        )
    return 0


def add_commands(sub: Subcommands) -> None:
    p = sole_command(
        sub, "radix", HELP, "replay", "replay requests through a prefix (or whole-prompt) cache", EPILOG_REPLAY
    )
    p.add_argument(
        "--capacity", type=int, default=None, help="capacity in tokens (blocks for Mooncake); default unlimited"
    )
    p.add_argument("--mode", default="prefix", type=str.lower, help=one_of(osbench.radix.MODES))
    src = p.add_mutually_exclusive_group()
    src.add_argument("--conversations", type=int, default=400, help="synthetic multi-turn conversations (default 400)")
    src.add_argument("--mooncake", help="a Mooncake jsonl trace or dataset name (one token per 512-token block)")
    common_flags(p)
    p.set_defaults(func=cmd_radix_replay)
