"""``osbench serve validate``: the measured serving runs of AIConfigurator's silicon_sample.csv
replayed with the clients of their benchmarks, predicted against measured TTFT and TPOT (osbench.serve.validate)."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys

from osbench import _files
from osbench._format import duration, number, percent
from osbench.cli._common import Subcommands, UserError, one_of
from osbench.serve import validate

ORDER = 30

EPILOG = (
    "example: osbench serve validate --model qwen3-32b --step-time measured --rounds 5   "
    "(every point: osbench serve validate --out validation.csv)"
)


def cmd_serve_validate(args: argparse.Namespace) -> int:
    kinds = [k.strip() for k in args.step_time.split(",") if k.strip()]
    unknown = [k for k in kinds if k not in validate.STEP_TIMES]
    if unknown or not kinds:
        raise UserError(f"--step-time {args.step_time} is not accepted: use {one_of(list(validate.STEP_TIMES))}")
    clients = validate.AIPerfClients(rounds=args.rounds)  # checked before any point is read
    read = validate.survey()
    if not args.json:
        left = ", ".join(f"{number(n)} {reason}" for reason, n in read.left_out.items() if n)
        print(f"silicon_sample.csv: {number(len(read.points))} points replayable; rows left out: {left}")
    points = [
        p
        for p in read.points
        if (args.model is None or p.model == args.model)
        and (args.gpu is None or p.gpu == args.gpu)
        and (args.dense is False or not p.moe)
    ]
    if args.limit is not None:
        points = points[: args.limit]
    if not points:
        raise UserError("no measured point matches --model/--gpu: see osbench.serve.validate.rows()")
    host = None
    if "fitted" in kinds:
        split = [p for p in read.points if validate.in_fit_split(p)]
        if not args.json:
            print(
                f"fitting the host overhead on {number(len(split))} points ({' '.join(map(str, validate.FIT_SPLIT))})"
            )
        host = validate.fit_host(split, clients)
        if not args.json:
            print(
                f"host overhead: {duration(host.step)} per step and {duration(host.request)} per request "
                "(not reported on the points it was fitted on)"
            )
    predictions = []
    for q in validate.replay(points, kinds, host, clients, args.prompts):
        predictions.append(q)
        if not args.json:
            p = q.point
            print(
                f"{(len(predictions) - 1) // len(kinds) + 1:>4}/{len(points)} {p.model} {p.gpu} tp{p.tp} {p.isl}x{p.osl} c{p.concurrency} "
                f"{q.step_time}: TTFT {duration(q.ttft)} (measured {duration(p.ttft)}, {percent(q.ttft_error)}), "
                f"TPOT {duration(q.tpot)} (measured {duration(p.tpot)}, {percent(q.tpot_error)})",
                flush=True,
            )
    table = validate.summary(predictions)
    if args.out:
        _files.write_csv(args.out, [q.to_dict() for q in predictions], name="--out")
    if args.json:
        fitted = None if host is None else dataclasses.asdict(host)
        out = {"summary": table, "host": fitted, "points": [q.to_dict() for q in predictions]}
        json.dump({**out, "left_out": read.left_out}, sys.stdout)
        print()
        return 0
    print(
        "\nMAPE by step time, GPU, model, vLLM version, benchmark and kind "
        "(every model on the points outside the fit split)"
    )
    for r in table:
        print(
            f"  {r['step_time']:<9} {r['gpu']:<9} {r['model']:<20} {r['version']:<8} {r['benchmark']:<12} {r['kind']:<6} "
            f"{number(r['points']):>5} points  TTFT {percent(r['ttft_mape'] / 100)}  TPOT {percent(r['tpot_mape'] / 100)}"
        )
    return 0


def add_commands(sub: Subcommands) -> None:
    p = sub.add_parser(
        "validate",
        help="replay measured vLLM serving runs (AIConfigurator's silicon_sample.csv) and report the error",
        epilog=EPILOG,
    )
    p.add_argument("--model", help="only the points of this preset (as the table names it, e.g. qwen3-32b)")
    p.add_argument("--gpu", help="only the points on this GPU preset (h100-sxm, h200)")
    p.add_argument("--dense", action="store_true", help="only the dense models' points")
    p.add_argument(
        "--step-time",
        default=",".join(validate.STEP_TIMES),
        help=f"step-time models, comma-separated: {one_of(list(validate.STEP_TIMES))} (default all)",
    )
    p.add_argument(
        "--rounds",
        type=int,
        default=validate.AIPERF_CLIENTS.rounds,
        help=f"requests measured per client of the AIPerf points (default {validate.AIPERF_CLIENTS.rounds}, as "
        "their benchmark measured); the InferenceMAX points measure their benchmark's 10",
    )
    p.add_argument(
        "--prompts",
        type=int,
        help="the AIPerf points' clients draw from N distinct prompts with vLLM's prefix cache on "
        f"(default: as each source's benchmark did: {validate.DATASET_PROMPTS}, AIPerf's default dataset, for the "
        "points that repeat prompts, else every prompt distinct)",
    )
    p.add_argument("--limit", type=int, help="only the first N points")
    p.add_argument("--out", help="write every point's prediction to this CSV")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_serve_validate)
