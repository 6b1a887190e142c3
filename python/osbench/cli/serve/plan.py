"""``osbench serve plan``: the smallest deployment (replicas, or with ``--split LINK`` a
prefill:decode split, by tensor-parallel degree) that
serves the requests within an SLO, every candidate tried with its goodput per GPU and knee; the
cells on a local process pool or on Dask, resumable (osbench.serve.plan)."""

from __future__ import annotations

import argparse
import json

from osbench import serve
from osbench._optional import MissingDependency
from osbench.cli._common import Subcommands, common_flags, int_list, one_of, output_file, print_table, progress
from osbench.cli.serve.simulate import engine_config_flags, serve_description, serve_options, serve_parser
from osbench.serve import engines as serve_engines
from osbench.serve import source as serve_source
from osbench.serve.plan import DEFAULT_ROUTER
from osbench.serve.routers import ROUTERS

ORDER = 15
HELP = "the smallest deployment that meets an SLO on the requests (replicas x tensor-parallel degree)"

EPILOG = (
    "example: osbench serve plan --trace azure-conv-2023 --fit --rate 200 --model llama-3-8b --gpu h100 "
    "--slo-ttft 2 --slo-tpot 0.1 --tp 1,2 --max-gpus 64 --dask local   (exit status 1 when no deployment up to "
    "--max-gpus meets the SLO; rerun with the same --out to resume)"
)


def cmd_serve_plan(args: argparse.Namespace) -> int:
    if args.out is not None:
        output_file("--out", args.out)
    figure = output_file("--figure", args.figure) if args.figure is not None else None
    degrees, args.tp = args.tp, None  # a set of degrees here, one degree to simulate's options
    options = serve_options(args)
    options.pop("semantics")
    model, gpu = options.pop("model"), options.pop("gpu")
    requests, left_out = serve_source.requests(serve_description(args), {"model": model, **options})
    say = progress()
    executor = "process" if args.dask is None else ("dask" if args.dask == "local" else args.dask)
    result = serve.plan(
        requests,
        slo_ttft=args.slo_ttft,
        slo_tpot=args.slo_tpot,
        percentile=args.percentile,
        model=model,
        gpu=gpu,
        max_gpus=args.max_gpus,
        tp=degrees,
        router=args.router,
        engine=args.engine,
        semantics=args.semantics,
        knee=args.knee,
        disaggregated=args.kv_link is not None,
        kv_link=args.kv_link or "ib-ndr-400g",
        executor=executor,
        workers=args.workers,
        out=args.out,
        progress=lambda done, asked: say(f"{done} cells simulated"),
        **options,
    )
    drawn = ""
    if figure is not None:
        try:
            result.figure(figure)
            drawn = f"; the figure in {figure}"
        except MissingDependency as exc:  # the plan stands without its figure
            drawn = f" (no figure: {exc})"
    if args.json:
        print(
            json.dumps(
                {**result.to_dict(), "left_out": left_out.requests, "left_out_tokens": left_out.tokens}, default=str
            )
        )
    else:
        print_table(result.table())
    say(f"{result.simulations} cells" + (f", kept in {args.out}" if args.out else "") + drawn)
    return 0 if result.meets else 1


def add_commands(sub: Subcommands) -> None:
    p = serve_parser(sub, "plan", HELP, EPILOG)
    p.add_argument(
        "--tp",
        type=int_list,
        metavar="D[,D...]",
        help="tensor-parallel degrees to consider (default: the model preset's)",
    )
    p.add_argument(
        "--semantics", choices=list(serve_engines.ENGINES), default="vllm", help="whose scheduler is reproduced"
    )
    p.add_argument("--slo-ttft", type=float, metavar="SECONDS", help="time-to-first-token SLO")
    p.add_argument("--slo-tpot", type=float, metavar="SECONDS", help="time-per-output-token SLO")
    p.add_argument("--percentile", type=float, default=99.0, help="the percentile the SLO holds at (default 99)")
    p.add_argument("--max-gpus", type=int, default=64, metavar="N", help="the largest deployment (default 64)")
    p.add_argument(
        "--router", choices=list(ROUTERS), default=DEFAULT_ROUTER, help=f"the router (default {DEFAULT_ROUTER})"
    )
    p.add_argument("--no-knee", dest="knee", action="store_false", help="do not search each candidate's knee (faster)")
    p.add_argument(
        "--split",
        dest="kv_link",
        metavar="LINK",
        help=f"search prefill:decode splits (P prefill + D decode instances of each degree) joined by LINK "
        f"({one_of(list(serve.LINKS))}) instead of replicas",
    )
    p.add_argument("--out", help="keep every cell in this results file (JSON lines); a rerun resumes from it")
    p.add_argument("--dask", metavar="ADDRESS", help="run on a Dask cluster at ADDRESS, or 'local' for a LocalCluster")
    p.add_argument("--workers", type=int, default=None, help="local process pool size (default: every core)")
    p.add_argument("--figure", help="draw goodput per GPU and the knees against the GPUs to this PNG")
    engine_config_flags(p)
    common_flags(p)
    p.set_defaults(func=cmd_serve_plan)


__all__ = ["add_commands", "cmd_serve_plan"]
