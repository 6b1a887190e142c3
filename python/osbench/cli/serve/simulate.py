"""``osbench serve simulate``: a trace or generated requests served on a model and GPU, as vLLM
0.33.0 schedules them (or SGLang 0.5.23, ``--semantics sglang``); the summary printed, one CSV
row per request written."""

from __future__ import annotations

import argparse
import ast
import csv
import dataclasses
import inspect
import io
import json
import re
import sys
import textwrap
import typing
from typing import Any, Optional

from osbench import _files, serve
from osbench._format import duration, number, percent, size
from osbench.cli._common import Subcommands, common_flags, one_of, output_file
from osbench.errors import ArgumentError
from osbench.serve import engines as serve_engines
from osbench.serve import kernels
from osbench.serve import readers as serve_readers
from osbench.serve import source as serve_source
from osbench.serve.disagg import OVERLAPS
from osbench.serve.links import ALIASES as LINK_ALIASES
from osbench.serve.links import LINKS
from osbench.serve.models import DEFAULT_MODEL
from osbench.serve.routers import ROUTERS

ORDER = 10
HELP = "serve a trace or generated requests on a model and GPU, as vLLM 0.33.0 (or SGLang 0.5.23) schedules them"

EPILOG = (
    "example: osbench serve simulate --trace azure-conv-2023 --rate 8 --model llama-3-8b --gpu h100 --slo-ttft 2 "
    "--slo-tpot 0.1   (or --poisson 2000,10 --prompt-len lognormal:1024,1.0,6000; SGLang's scheduler: "
    "--semantics sglang --schedule-policy lpm)"
)

SERVE_SOURCES = ("trace", *serve_source.GENERATORS)
"""Where ``osbench serve simulate`` takes its requests from: one of these options."""

# simulate() options whose default comes from the model and GPU presets, not from the
# semantics' configuration class, by semantics.
_FROM_PRESETS = {
    "vllm": {
        "num_blocks": "what the model leaves on the GPU",
        "max_model_len": "the model's",
        "max_num_batched_tokens": "vLLM's for the GPU",
        "max_num_seqs": "vLLM's for the GPU",
        "kv_block_bytes": "a block of the model's KV on one GPU",
    },
    "sglang": {
        "max_total_tokens": "what the model leaves on the GPU by SGLang's mem_fraction_static rule",
        "chunked_prefill_size": "SGLang's for the GPU",
        "context_len": "the model's",
        "max_running_requests": "SGLang's from the pool",
    },
}


def _field_docs(cls: type) -> dict[str, str]:
    """The docstring under each field of a dataclass (the string right after its annotation)."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    except (OSError, TypeError):  # no source at hand: the help goes without
        return {}
    body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
    docs = {}
    for a, b in zip(body, body[1:]):
        if (
            isinstance(a, ast.AnnAssign)
            and isinstance(a.target, ast.Name)
            and isinstance(b, ast.Expr)
            and isinstance(b.value, ast.Constant)
            and isinstance(b.value.value, str)
        ):
            docs[a.target.id] = " ".join(b.value.value.split())
    return docs


def _field_help(doc: str) -> str:
    """A field's docstring as a help line: its first sentence, without the vLLM citation."""
    sentence = re.split(r"(?<=\.)\s", doc, maxsplit=1)[0]
    return sentence.split(": ``")[0].replace("``", "").rstrip(".")


def engine_config_flags(p: argparse.ArgumentParser) -> None:
    """A flag per configuration field of every semantics (``osbench.serve.ENGINES``), its type,
    default and help taken from the semantics' dataclass."""
    for row in serve_engines.ENGINES.values():
        config, choices = row.module().Config, row.module().CHOICES
        repeated = getattr(row.module(), "REPEATED", {})
        group = p.add_argument_group(
            f"--semantics {row.name} configuration ({row.follows}'s options; defaults from "
            f"{config.__module__}.{config.__qualname__})"
        )
        docs = _field_docs(config)
        hints = typing.get_type_hints(config)
        for f in dataclasses.fields(config):
            flag = "--" + f.name.replace("_", "-")
            default = _FROM_PRESETS.get(row.name, {}).get(f.name, f.default)
            if isinstance(default, bool):
                shown = "on" if default else "off"
            else:
                shown = default if isinstance(default, str) else number(default)
            help_text = f"{_field_help(docs.get(f.name, f.name))} (default: {shown})"
            kind = hints[f.name]
            if typing.get_origin(kind) is typing.Union:  # Optional[int]: an int, left out for None
                kind = next(k for k in typing.get_args(kind) if k is not type(None))
            if f.name in repeated:
                help_text = f"{_field_help(docs.get(f.name, f.name))}; repeat the flag for each (default: none)"
                group.add_argument(flag, type=repeated[f.name], action="append", default=None, help=help_text)
            elif kind is bool:
                group.add_argument(flag, action=argparse.BooleanOptionalAction, default=None, help=help_text)
            elif f.name in choices:
                group.add_argument(flag, type=str.lower, choices=choices[f.name], default=None, help=help_text)
            else:
                metavar = "N" if kind is int else "X"
                group.add_argument(flag, type=kind, default=None, metavar=metavar, help=help_text)


def serve_options(args: argparse.Namespace) -> dict[str, Any]:
    """simulate()'s options from the command line: the semantics, the presets, and every
    engine flag given; a flag of another semantics is refused, naming it."""
    options: dict[str, Any] = {"semantics": args.semantics, "model": args.model, "gpu": args.gpu}
    if args.tp is not None:
        options["tp"] = args.tp
    if args.step_time is not None:
        options["step_time"] = args.step_time
    for row in serve_engines.ENGINES.values():
        for f in dataclasses.fields(row.module().Config):
            value = getattr(args, f.name)
            if value is None:
                continue
            if row.name != args.semantics:
                raise ArgumentError(
                    f"--{f.name.replace('_', '-')} is not accepted with --semantics {args.semantics}: it is an option "
                    f"of --semantics {row.name} ({row.follows})"
                )
            options[f.name] = value
    return options


def serve_description(args: argparse.Namespace) -> dict[str, Any]:
    """The requests the command line describes (see osbench.serve.source)."""
    given = [k for k in SERVE_SOURCES if getattr(args, k) is not None]
    description: dict[str, Any] = {given[0] if given else "poisson": getattr(args, given[0]) if given else "1000,10"}
    if args.trace is None:
        description["seed"] = args.seed
    for k in ("format", "prompt_len", "output_len", "system_prompts", "turns", "think_time"):
        if getattr(args, k) is not None:  # given with the wrong source: refused, naming it
            description[k] = getattr(args, k)
    description.update(limit=args.limit, fit=args.fit, rate=args.rate)
    return description


REQUEST_CSV_COLUMNS = (
    "request",
    "arrival",
    "prompt_len",
    "output_len",
    "admitted",
    "first_token",
    "finish",
    "ttft",
    "tpot",
    "e2e",
    "queueing",
    "slowdown",
    "preemptions",
    "cached_tokens",
)
"""The per-request CSV's columns (``--out``): times in seconds, lengths in tokens."""


def _request_csv(result: serve.ServeResult, replica: Any = None) -> str:
    """The per-request CSV; with ``replica`` (a cluster run), a last column naming the replica
    that served each request."""
    columns = {
        "request": list(range(len(result.requests))),
        "arrival": result.arrival.tolist(),
        "prompt_len": result.requests.prompt_len.tolist(),
        "output_len": result.requests.output_len.tolist(),
    }
    values = [columns[c] if c in columns else getattr(result, c).tolist() for c in REQUEST_CSV_COLUMNS]
    header = list(REQUEST_CSV_COLUMNS)
    if replica is not None:
        values.append(replica.tolist())
        header.append("replica")
    buf = io.StringIO()
    out = csv.writer(buf, lineterminator="\n")
    out.writerow(header)
    for row in zip(*values):
        out.writerow(["" if v != v else v for v in row])  # NaN (no TPOT for one output token): empty
    return buf.getvalue()


def _policy_words(cfg: Any) -> str:
    """The policy and the options it reads: ``srpt on noisy predictions (sigma 1)``."""
    if cfg.policy in ("sjf", "srpt"):
        detail = {"noisy": f" (sigma {number(cfg.prediction_sigma)}, seed {cfg.prediction_seed})"}
        detail["bucketed"] = f" (classes of {number(cfg.prediction_bucket)} tokens)"
        return f"{cfg.policy} on {cfg.prediction} predictions{detail.get(cfg.prediction, '')}"
    if cfg.policy == "mlfq":
        boost = f", boost every {number(cfg.mlfq_boost)} steps" if cfg.mlfq_boost else ""
        return (
            f"mlfq ({cfg.mlfq_levels} levels, quantum {number(cfg.mlfq_quantum)} tokens x{cfg.mlfq_growth} a level"
            f"{boost})"
        )
    if cfg.policy == "priority" and cfg.aging:
        return f"priority with aging {number(cfg.aging)}/s"
    return str(cfg.policy)


def _preemption_words(cfg: Any, s: Any) -> str:
    """How preempted requests kept their KV, and what it cost: ``swap to 4 GiB of host memory
    (512 blocks) over pcie5 (58.7 GiB/s): 1.2 GiB out, 1.2 GiB in, 20 ms of copies; 0 tokens
    recomputed``."""
    recomputed = f"{number(s.recomputed_tokens)} tokens recomputed"
    swap = getattr(cfg, "swap", None)
    if swap is None:
        return f"by recompute: {recomputed}"
    link = cfg.link if cfg.swap_bandwidth is None else "a link"
    return (
        f"by swap to {number(cfg.swap_space)} GiB of host memory ({number(swap.host_blocks)} blocks) over {link} "
        f"({size(swap.bandwidth)}/s): {size(s.swapped_out_bytes)} out, {size(s.swapped_in_bytes)} in, "
        f"{duration(s.swap_time)} of copies; {recomputed} (when the host pool was full)"
    )


def _tier_words(s: Any) -> str:
    """What the KV tiers did: ``64 GiB pcie5 lru (32,768 blocks): 1,200 blocks hit, 5,000
    stored (4,100 new); 12.3% of prompt tokens from the tiers, 1.2 s of loads``."""
    each = "; ".join(
        f"{number(t.gib)} GiB {t.medium} {t.policy} ({number(t.capacity_blocks)} blocks): {number(t.loaded_blocks)} "
        f"blocks hit, {number(t.stored_blocks)} stored ({number(t.inserted_blocks)} new)"
        for t in s.tiers
    )
    return f"{each}; {percent(s.tier_hit_rate)} of prompt tokens from the tiers, {duration(s.tier_time)} of loads"


def _latency_line(name: str, stats: Any) -> str:
    return (
        f"  {name:<13}mean {duration(stats.mean)}, p50 {duration(stats.p50)}, p90 {duration(stats.p90)}, "
        f"p99 {duration(stats.p99)}"
    )


def _config_line(semantics: str, cfg: Any) -> str:
    """The run's configuration in one line, as the semantics names it."""
    if semantics == "sglang":
        chunk = "off" if cfg.chunk_tokens is None else f"{number(cfg.chunk_tokens)} tokens"
        return (
            f"SGLang 0.5.23's scheduler, {number(cfg.max_total_tokens)} KV tokens in pages of {cfg.page_size}; "
            f"{number(cfg.max_prefill_tokens)} prefill tokens a batch, {number(cfg.running_cap)} requests at once; "
            f"chunked prefill {chunk}, mixed chunk {'on' if cfg.enable_mixed_chunk else 'off'}, radix cache on, "
            f"{cfg.schedule_policy}"
        )
    return (
        f"{number(cfg.num_blocks)} KV blocks of "
        f"{cfg.block_size} tokens; {number(cfg.max_num_batched_tokens)} tokens and {number(cfg.max_num_seqs)} "
        f"requests a step; chunked prefill {'on' if cfg.enable_chunked_prefill else 'off'}, prefix caching "
        f"{'on' if cfg.enable_prefix_caching else 'off'}, {_policy_words(cfg)}"
    )


def cmd_serve_simulate(args: argparse.Namespace) -> int:
    if args.out is not None:
        output_file("--out", args.out)
    options = serve_options(args)
    disaggregated = _disaggregation(args)
    if args.router is not None and args.replicas is None and disaggregated is None:
        raise ArgumentError(
            f"--router {args.router} is not accepted without --replicas or --prefill/--decode: it routes among instances"
        )
    clients = _clients(args)
    engine = serve_engines.semantics(args.semantics).engine(args.engine)  # None: the semantics' default
    requests, left_out = serve_source.requests(serve_description(args), options)
    run = {**options, "concurrency": clients}
    cluster = pools = None
    router = args.router or "round-robin"
    if disaggregated is not None:
        pools = serve.simulate_disaggregated(requests, router=router, engine=engine, **disaggregated, **run)
        result = pools.merged
    elif args.replicas is None:
        result = serve.simulate(requests, engine=engine, **run)
    else:
        cluster = serve.simulate_cluster(requests, replicas=args.replicas, router=router, engine=engine, **run)
        result = cluster.merged
    s = result.summary(slo_ttft=args.slo_ttft, slo_tpot=args.slo_tpot)
    c = None if cluster is None else cluster.summary(slo_ttft=args.slo_ttft, slo_tpot=args.slo_tpot)
    d = None if pools is None else pools.summary(slo_ttft=args.slo_ttft, slo_tpot=args.slo_tpot)
    if args.out is not None:
        _files.write_text(args.out, _request_csv(result, None if cluster is None else cluster.replica))
    if args.json:
        print(
            json.dumps(
                {
                    "requests": requests.to_dict(),
                    "left_out": left_out.requests,
                    "left_out_tokens": left_out.tokens,
                    "options": options,
                    "clients": None if clients is None else dataclasses.asdict(clients),
                    "engine": engine,
                    "config": dataclasses.asdict(result.config),
                    "summary": s.to_dict(),
                    **({} if c is None else {"cluster": {k: v for k, v in c.to_dict().items() if k != "merged"}}),
                    **({} if d is None else {"disaggregated": {k: v for k, v in d.to_dict().items() if k != "merged"}}),
                },
                default=str,
            )
        )
        return 0
    cfg = result.config
    model, gpu = serve.Model.preset(args.model), serve.GPU.preset(args.gpu)
    tp = model.tp if args.tp is None else args.tp
    name = requests.name or "requests"
    print(
        f"{name}: {number(len(requests))} requests over {duration(requests.duration)} "
        f"({number(requests.rate)} requests/s)"
        + (
            f", {number(left_out.requests)} longer than max_model_len={number(serve_source.max_model_len(options))} "
            f"left out ({percent(left_out.token_share)} of the trace's tokens)"
            if left_out.requests
            else ""
        )
    )
    if clients is not None:
        warmup = f", the first {number(clients.warmup)} a warm-up drained before the next (counted below)"
        print(
            f"closed-loop clients: at most {number(clients.count)} in flight, each next request sent "
            f"{duration(clients.turnaround)} after a finish" + (warmup if clients.warmup else "")
        )
    clock = f"{args.step_time or 'roofline'} step time"
    print(f"{model.name} on {tp} x {gpu.name}, {engine} engine, {clock}: {_config_line(args.semantics, cfg)}")
    print(
        f"  {'throughput':<13}{number(s.request_throughput)} requests/s, {number(s.output_throughput)} output "
        f"tokens/s, over {duration(s.duration)}"
    )
    for label, stats in (("TTFT", s.ttft), ("TPOT", s.tpot), ("end to end", s.e2e), ("queueing", s.queueing)):
        print(_latency_line(label, stats))
    if s.slo_ttft is not None or s.slo_tpot is not None:
        slos = " and ".join(
            f"{label} <= {duration(v)}" for label, v in (("TTFT", s.slo_ttft), ("TPOT", s.slo_tpot)) if v is not None
        )
        print(f"  {'goodput':<13}{number(s.goodput)} requests/s ({percent(s.slo_attainment)} of requests meet {slos})")
    print(
        f"  {'KV cache':<13}{percent(s.kv_utilization)} of the blocks in use on average, {percent(s.kv_utilization_peak)} "
        f"at the peak; {number(s.preemptions)} preemptions of {number(s.preempted_requests)} requests"
    )
    # (SGLang's semantics does not count its retracted requests' tokens computed again.)
    if hasattr(cfg, "preemption") and (s.preemptions or cfg.preemption == "swap"):
        print(f"  {'preemption':<13}{_preemption_words(cfg, s)}")
    print(f"  {'prefix cache':<13}{percent(s.prefix_hit_rate)} of prompt tokens served from it")
    if s.tiers:
        print(f"  {'KV tiers':<13}{_tier_words(s)}")
    slowdowns = ", ".join(
        f"{label} p50 {number(st.p50)}, p99 {number(st.p99)}"
        for label, st in (("short", s.slowdown_short), ("medium", s.slowdown_medium), ("long", s.slowdown_long))
    )
    print(
        f"  {'slowdown':<13}E2E over the request alone, by output length: {slowdowns}; "
        f"the longest wait before first scheduled {duration(s.max_queueing)}"
    )
    for k in s.by_priority:
        print(
            f"  {'priority ' + str(k.priority):<13}{number(k.requests)} requests: E2E p50 {duration(k.e2e.p50)}, "
            f"slowdown p50 {number(k.slowdown.p50)}, p99 {number(k.slowdown.p99)}; the longest wait "
            f"{duration(k.max_queueing)}"
        )
    print(
        f"  {'steps':<13}{number(s.steps)}, {duration(s.mean_step_time)} each on average, "
        f"{number(s.mean_batch_size)} requests in a batch on average"
    )
    if c is not None:
        print(
            f"  {'replicas':<13}{c.replicas} behind {router}: requests "
            f"{', '.join(number(k) for k in c.requests_per_replica)}; prefix hits "
            f"{', '.join(percent(h) for h in c.prefix_hit_rates)}"
        )
        print(
            f"  {'imbalance':<13}the busiest replica's outstanding requests over the mean at each arrival: "
            f"mean {c.imbalance_mean:.2f}, p99 {c.imbalance_p99:.2f}, peak {c.imbalance_max:.2f}"
        )
    if d is not None and disaggregated is not None:
        gpus = (args.prefill_gpu or args.gpu, args.decode_gpu or args.gpu)
        print(
            f"  {'pools':<13}{d.prefill} prefill ({gpus[0]}) behind {router}, {d.decode} decode "
            f"({gpus[1]}) behind {disaggregated['decode_router']}, KV over {d.link} ({d.overlap}): "
            f"{size(d.bytes_moved)} moved"
        )
        parts = (
            ("queueing", d.queueing),
            ("prefill", d.prefill_time),
            ("transfer", d.transfer),
            ("first decode step", d.first_decode_step),
        )
        print(
            f"  {'TTFT parts':<13}"
            + ", ".join(f"{label} {duration(st.mean)} (p99 {duration(st.p99)})" for label, st in parts)
        )
    if args.out is not None:
        print(f"wrote {args.out} (one row per request)", file=sys.stderr)
    return 0


def _clients(args: argparse.Namespace) -> Optional[serve.Clients]:
    """The closed-loop clients of --concurrency (with --turnaround and --warmup), or None."""
    if args.concurrency is None:
        given = next(
            (f for f, v in (("--turnaround", args.turnaround), ("--warmup", args.warmup)) if v is not None), None
        )
        if given is not None:
            raise ArgumentError(
                f"{given} is not accepted without --concurrency: it is an option of closed-loop clients"
            )
        return None
    return serve.Clients(args.concurrency, args.turnaround or 0.0, args.warmup or 0)


def _disaggregation(args: argparse.Namespace) -> Any:
    """simulate_disaggregated()'s own options from the command line, or None without
    --prefill and --decode (which go together, and not with --replicas)."""
    own = {
        "--kv-link": args.kv_link,
        "--overlap": args.overlap,
        "--decode-router": args.decode_router,
        "--prefill-gpu": args.prefill_gpu,
        "--decode-gpu": args.decode_gpu,
    }
    if args.prefill is None and args.decode is None:
        given = next((flag for flag, value in own.items() if value is not None), None)
        if given is not None:
            raise ArgumentError(
                f"{given} is not accepted without --prefill and --decode: it is a disaggregation option"
            )
        return None
    if args.prefill is None or args.decode is None:
        missing = "--prefill" if args.prefill is None else "--decode"
        raise ArgumentError(
            f"{missing} is needed with {'--decode' if args.prefill is None else '--prefill'}: give both pools' sizes"
        )
    if args.replicas is not None:
        raise ArgumentError("--replicas is not accepted with --prefill/--decode: a deployment is one or the other")
    return {
        "prefill": args.prefill,
        "decode": args.decode,
        "kv_link": args.kv_link or "ib-ndr-400g",
        "overlap": args.overlap or "after-prefill",
        "decode_router": args.decode_router or "round-robin",
        "prefill_gpu": args.prefill_gpu,
        "decode_gpu": args.decode_gpu,
    }


def request_flags(p: argparse.ArgumentParser) -> None:
    """The options that describe the requests (read back by :func:`serve_description`)."""
    src = p.add_argument_group("requests (one source; default --poisson 1000,10)").add_mutually_exclusive_group()
    src.add_argument("--trace", help="a request log (Azure or Mooncake; format detected) or a dataset name")
    src.add_argument("--poisson", metavar="N,RATE", help="N requests arriving as a Poisson process of RATE per second")
    src.add_argument("--gamma", metavar="N,RATE,CV", help="N requests with gamma gaps (CV > 1: burstier than Poisson)")
    src.add_argument("--conversations", metavar="N,RATE", help="N multi-turn conversations starting at RATE per second")
    lengths = p.add_argument_group("generated requests")
    for key, what in (
        ("prompt_len", "prompt (conversations: message)"),
        ("output_len", "output (conversations: answer)"),
    ):
        defaults = ", ".join(f"{g} {serve_source.generator_default(g, key)}" for g in serve_source.GENERATORS)
        lengths.add_argument(
            "--" + key.replace("_", "-"),
            metavar="SPEC",
            help=f"{what} length: {serve_source.LENGTH_FORMS} (default: {defaults})",
        )
    lengths.add_argument(
        "--system-prompts", metavar="COUNT,LENGTH[,FRACTION]", help="shared system prompts opening the requests"
    )
    lengths.add_argument("--turns", metavar="LO,HI", help="turns per conversation, drawn uniformly")
    lengths.add_argument("--think-time", type=float, help="mean seconds between a conversation's turns")
    p.add_argument("--format", choices=serve_readers.FORMATS, help="the trace's format when its content does not tell")
    p.add_argument("--limit", type=int, help="serve only the first N requests")
    p.add_argument(
        "--fit",
        action="store_true",
        help="leave out the requests longer than max_model_len (counted in the output) instead of refusing the run",
    )
    p.add_argument("--rate", type=float, metavar="QPS", help="rescale the arrivals to QPS requests per second")


def serve_parser(sub: Subcommands, name: str, help: str, epilog: str) -> argparse.ArgumentParser:
    """The parser of a subcommand that serves requests on a model and GPU: the request flags
    (:func:`request_flags`), --model and --gpu."""
    p = sub.add_parser(name, help=help, epilog=epilog)
    request_flags(p)
    p.add_argument(
        "--model",
        default=DEFAULT_MODEL,
        help=f"{one_of(list(serve.MODELS))}, or any with -fp8 (default {DEFAULT_MODEL})",
    )
    p.add_argument("--gpu", default="h100", help=f"{one_of(list(serve.GPUS))} (default h100)")
    p.add_argument(
        "--step-time",
        choices=list(serve.STEP_TIME_NAMES),
        help="the clock: the roofline (default) or the kernels measured on the GPU (StepTime.measured, "
        f"{one_of(kernels.gpus_with_tables())})",
    )
    return p


def add_commands(sub: Subcommands) -> None:
    p = serve_parser(sub, "simulate", HELP, EPILOG)
    p.add_argument("--tp", type=int, help="GPUs the model is sharded over (default: the model preset's)")
    rows = serve_engines.ENGINES.values()
    p.add_argument(
        "--semantics",
        choices=list(serve_engines.ENGINES),
        default="vllm",
        help="whose scheduler is reproduced: "
        + "; ".join(
            f"{r.name}: {r.follows}, engines {one_of(list(r.engines))} ({r.engines[0]} by default)" for r in rows
        )
        + " (default vllm)",
    )
    cluster = p.add_argument_group("replicas behind a router (osbench.serve.simulate_cluster)")
    cluster.add_argument("--replicas", type=int, metavar="N", help="serve on N identical engines, each with its own KV")
    cluster.add_argument(
        "--router", choices=list(ROUTERS), help="which replica serves each request (default round-robin)"
    )
    pools = p.add_argument_group(
        "disaggregated prefill and decode (osbench.serve.simulate_disaggregated; --router picks the prefill instance)"
    )
    pools.add_argument("--prefill", type=int, metavar="P", help="prefill instances, each with its own KV")
    pools.add_argument("--decode", type=int, metavar="D", help="decode instances, each with its own KV")
    pools.add_argument(
        "--kv-link",
        metavar="NAME",
        help=f"the link the KV moves over: {one_of([*LINKS, *LINK_ALIASES])} (default ib-ndr-400g)",
    )
    pools.add_argument(
        "--overlap",
        choices=list(OVERLAPS),
        help="when the KV moves: after the prefill (vLLM's NixlConnector, the default) or layer by layer during it",
    )
    pools.add_argument(
        "--decode-router", choices=list(ROUTERS), help="which decode instance takes each request (default round-robin)"
    )
    pools.add_argument("--prefill-gpu", help="the prefill pool's GPU (default --gpu)")
    pools.add_argument("--decode-gpu", help="the decode pool's GPU (default --gpu)")
    clients = p.add_argument_group(
        "closed-loop clients (osbench.serve.Clients; default: each request sent at its arrival)"
    )
    clients.add_argument(
        "--concurrency",
        type=int,
        metavar="N",
        help="at most N requests in flight, the next sent when one finishes (benchmark_serving --max-concurrency)",
    )
    clients.add_argument(
        "--turnaround", type=float, metavar="SECONDS", help="from a finish to the client's next request (default 0)"
    )
    clients.add_argument(
        "--warmup",
        type=int,
        metavar="K",
        help="the first K requests are a warm-up phase, drained before the next is sent (default 0; they are counted)",
    )
    engine_config_flags(p)
    p.add_argument("--slo-ttft", type=float, metavar="SECONDS", help="time-to-first-token SLO for goodput")
    p.add_argument("--slo-tpot", type=float, metavar="SECONDS", help="time-per-output-token SLO for goodput")
    p.add_argument("--out", help="write one CSV row per request to this file (times in seconds)")
    common_flags(p)
    p.set_defaults(func=cmd_serve_simulate, engine=None)  # no --engine: the semantics' first engine
