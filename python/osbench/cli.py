"""The ``osbench`` command line (also ``python -m osbench``).

Errors a user can cause (a missing file, a bad trace, an unknown policy: an
:class:`~osbench.errors.OsbenchError` or an ``OSError``) print one line and exit with status 2;
there is no traceback. Any other exception is a bug and keeps its traceback. Ctrl-C exits with
status 130.
"""

from __future__ import annotations

import argparse
import ast
import csv
import dataclasses
import importlib
import inspect
import io
import json
import os
import re
import shutil
import sys
import tempfile
import textwrap
import time
import typing
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, Optional

from osbench import _checks, _files, _native, cache, datasets, host, mem, radix, report, sched, serve, traces
from osbench._format import duration, number, percent
from osbench.cache import sweep
from osbench.errors import OsbenchError
from osbench.serve import readers as serve_readers
from osbench.serve import source as serve_source
from osbench.serve import sweep as serve_sweep
from osbench.serve.config import POLICIES as SERVE_POLICIES

LECTURES = {
    "01": ("osbench.host.lecture", "Processes, threads and the host"),
    "02": ("osbench.sched.lecture", "CPU scheduling"),
    "03": ("osbench.mem.lecture", "Virtual memory and paging"),
    "04": ("osbench.cache.lecture", "Caching and eviction"),
    "05": ("osbench.radix.lecture", "Prefix caching with radix trees"),
    "06": ("osbench.serve.lecture", "Serving: continuous batching bounded by the KV cache"),
}

EPILOG_LECTURE = "example: osbench lecture 04"
EPILOG_REPORT = (
    "example: osbench report --out report --quick   (then, with a second report: osbench report --compare report other)"
)
EPILOG_REPLAY = "example: osbench cache replay --policy arc --capacity 100 --zipf 1000,0.8,30000"
EPILOG_SCHED = "example: osbench sched simulate --policy srpt --jobs 100000 --load 0.8 --sizes lognormal"
EPILOG_RADIX = (
    "example: osbench radix replay --capacity 500 --conversations 400   (or --mooncake mooncake-conversation)"
)
EPILOG_MEM = "example: osbench mem alloc --strategy paged --page-size 16 --capacity 20000 --requests 5000"
EPILOG_SWEEP = "example: osbench sweep study.toml --out results.jsonl --dask local   (rerun the same command to resume)"
EPILOG_HOST = "example: osbench host --quick --out host-report"
EPILOG_CURVE = "example: osbench cache curve --policy lru --capacities 10,100,1000 --trace cloudphysics"
EPILOG_SERVE = (
    "example: osbench serve simulate --trace azure-conv-2023 --rate 8 --model llama-3-8b --gpu h100 --slo-ttft 2 "
    "--slo-tpot 0.1   (or --poisson 2000,10 --prompt-len lognormal:1024,1.0,6000)"
)
EPILOG_SERVE_SWEEP = (
    "example: osbench serve sweep examples/serve-sweep.toml --out serve-sweep.jsonl --dask local   "
    "(rerun the same command to resume)"
)
EPILOG_DATASETS = "example: osbench datasets fetch all   (then: osbench cache curve --trace cloudphysics ...)"


class UserError(OsbenchError):
    """A mistake in the command line or its inputs: one line, exit status 2."""


def _output_folder(option: str, path: str) -> Path:
    """The folder a command writes to, made and proven writable before any work starts (an
    unwritable --out fails at once, not after minutes of measuring)."""
    out = Path(path)
    try:
        out.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=out):
            pass
    except OSError as exc:
        raise UserError(f"{option} {path} is not accepted: cannot write there ({exc.strerror or exc})") from None
    return out


class _Formatter(argparse.HelpFormatter):
    """argparse's help layout, wrapping lines at spaces only: a preset name (``rtx-pro-6000``)
    is never cut at one of its hyphens."""

    def _split_lines(self, text: str, width: int) -> list[str]:
        return textwrap.wrap(" ".join(text.split()), width, break_on_hyphens=False)


class _Parser(argparse.ArgumentParser):
    """argparse with the CLI's one-line errors: ``osbench: error: ...`` and exit status 2 (the
    usage stays in ``--help``), and help lines wrapped at spaces only (:class:`_Formatter`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> Any:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _progress(stream: Any = None) -> Callable[[str], None]:
    """Progress for long runs. On a terminal: one line redrawn in place, a bar over the sections
    (messages "[i/n] name") and the latest step within the section; elsewhere plain lines."""
    stream = stream or sys.stderr
    interactive = stream.isatty()
    started = time.perf_counter()
    section: dict[str, Any] = {"i": 0, "n": 0, "name": ""}

    def say(message: str) -> None:
        elapsed = time.perf_counter() - started
        m = re.match(r"\[(\d+)/(\d+)\] (.*)", message)
        if m:
            section.update(i=int(m.group(1)), n=int(m.group(2)), name=m.group(3))
        if not interactive:
            stream.write(f"[{elapsed:6.1f}s] {message}\n")
        else:
            width = 24
            done = int(width * (section["i"] - 1) / section["n"]) if section["n"] else 0
            bar = "#" * done + "-" * (width - done)
            step = "" if m else " | " + message.strip()
            line = f"[{bar}] {section['i']}/{section['n']} {section['name']}{step}" if section["n"] else message.strip()
            cols = shutil.get_terminal_size((100, 20)).columns
            if message.startswith("wrote "):
                stream.write(f"\r\x1b[2K{message}\n")
            else:
                stream.write(f"\r\x1b[2K{line[: cols - 10]} {elapsed:5.0f}s")
        stream.flush()

    return say


def _lecture_tables(which: str, quick: bool, engine: str = "native") -> list[Any]:
    module_name, _ = LECTURES[which]
    module = importlib.import_module(module_name)
    if engine != "native":
        if "engine" not in inspect.signature(module.tables).parameters:
            raise UserError(f"lecture {which} runs on the native engine only (its tables are large); drop --engine")
        return list(module.tables(quick=quick, engine=engine))
    return list(module.tables(quick=quick))


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


def cmd_report(args: argparse.Namespace) -> int:
    if args.compare:
        return _compare_reports(args)
    out = _output_folder("--out", args.out or "report")
    say = _progress()
    written = report.run(out, quick=args.quick, seed=args.seed, progress=say)
    say(f"wrote {len(written)} files to {out}/ (open {out / 'index.html'})")
    return 0


def _compare_reports(args: argparse.Namespace) -> int:
    """``osbench report --compare A B``: print the comparison and write it as a folder."""
    comparison = report.compare(*args.compare)
    if args.json:
        print(json.dumps(comparison.to_dict()))
    else:
        print(comparison.to_text())
    out = Path(args.out or "report-compare")
    report.write_comparison(comparison, out)
    print(f"wrote {out}/ (open {out / 'index.html'})", file=sys.stderr)
    return 0


def _existing(path_text: str, what: str) -> Path:
    """The path, or a one-line error when there is no such file."""
    path = Path(path_text)
    if not path.exists():
        raise UserError(f"{what} not found: {path}")
    return path


def _load_trace(args: argparse.Namespace) -> Any:
    if args.trace:
        return traces.read(args.trace, format=args.format)  # a path or a dataset name; format None: detected
    n, alpha, length = args.zipf
    return traces.zipf(int(n), float(alpha), int(length), seed=args.seed)


def _zipf_spec(text: str) -> tuple[int, float, int]:
    try:
        n, alpha, length = text.split(",")
        return int(n), float(alpha), int(length)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--zipf {text!r}: expected N_KEYS,ALPHA,LENGTH such as 1000,0.8,30000"
        ) from None


def _int_list(text: str) -> list[int]:
    try:
        return [int(x) for x in text.split(",")]  # an empty item is refused, never dropped
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected comma-separated integers such as 10,100,1000") from None


def cmd_cache_replay(args: argparse.Namespace) -> int:
    trace = _load_trace(args)
    r = cache.replay(trace, args.policy, args.capacity, engine=args.engine, sizes=True if args.sizes else None)
    if args.json:
        print(json.dumps(r.to_dict()))
    else:
        print(
            f"{r.policy} capacity {r.capacity:,}: {r.accesses:,} accesses, {r.hits:,} hits, {r.misses:,} misses, hit ratio {r.hit_ratio:.4f}"
        )
    return 0


def cmd_cache_curve(args: argparse.Namespace) -> int:
    trace = _load_trace(args)
    ratios = cache.curve(
        trace, args.policy, args.capacities, engine=args.engine, sizes=True if args.sizes else None, sample=args.sample
    )
    if args.json:
        print(json.dumps({"policy": args.policy, "capacities": args.capacities, "hit_ratio": ratios.tolist()}))
    else:
        for c, h in zip(args.capacities, ratios):
            print(f"{c:>12,}  {h:.4f}")
    return 0


def cmd_sched_simulate(args: argparse.Namespace) -> int:
    w = sched.workload(args.jobs, load=args.load, sizes=args.sizes, seed=args.seed)
    params: dict[str, Any] = {}
    if args.quantum is not None:  # given for a policy that reads no quantum: refused by simulate
        params["quantum"] = args.quantum
    if args.switch_cost:
        params["switch_cost"] = args.switch_cost
    summary = sched.simulate(w, args.policy, engine=args.engine, **params).summary()
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
    print(f"{args.policy}, {args.jobs:,} jobs, {args.sizes} sizes, load {args.load}, seed {args.seed}:")
    print(
        f"  mean response {summary.mean_response:.4f} +- {summary.mean_response_ci95:.4f} (95% CI)"
        + (f", M/G/1 theory {theory:.4f}" if theory is not None else "")
    )
    print(
        f"  p50 / p99 / p99.9 response {summary.p50_response:.4f} / {summary.p99_response:.4f} / {summary.p999_response:.4f}"
    )
    print(
        f"  mean slowdown {summary.mean_slowdown:.4f}; slowdown of the largest 1% {summary.slowdown_largest_1pct:.4f}; max first wait {summary.max_first_wait:.4f}"
    )
    if summary.switches:
        print(f"  switches {summary.switches:,}; time switching {100 * summary.switching_fraction:.2f}%")
    return 0


def _theory(policy: str, sizes: str, load: float) -> Optional[float]:
    """The M/G/1 mean response of the run, where theory has a closed form for it."""
    try:
        return sched.theory(policy, sizes, load)
    except OsbenchError:  # no closed form for this policy and these sizes
        return None


def _run_sweep(study: ModuleType, args: argparse.Namespace, drawn_as: str) -> int:
    """Run a study's sweep (``osbench sweep``, ``osbench serve sweep``): resumable, locally or on
    Dask, then its figure."""
    spec = _existing(args.spec, "sweep spec")
    say = _progress()
    executor = None if args.dask is None else ("dask" if args.dask == "local" else args.dask)
    results = study.run(
        spec,
        args.out,
        executor=executor,
        workers=args.workers,
        progress=lambda done, total: say(f"[{done}/{total}] cells done"),
    )
    figure = Path(args.figure) if args.figure else Path(args.out).with_suffix(".png")
    try:
        study.figure(results, figure)
        drawn = f" and {drawn_as} to {figure}"
    except ImportError:  # matplotlib is optional
        drawn = ""
    if args.json:
        print(json.dumps(results))
    say(f"wrote {len(results)} results to {args.out}{drawn}")
    return 0


def cmd_sweep(args: argparse.Namespace) -> int:
    return _run_sweep(sweep, args, "the curves")


def cmd_serve_sweep(args: argparse.Namespace) -> int:
    return _run_sweep(serve_sweep, args, "latency and goodput against the rate")


def cmd_mem_alloc(args: argparse.Namespace) -> int:
    w = mem.workload(args.requests, capacity=args.capacity, seed=args.seed)
    r = mem.simulate(w, args.strategy, args.capacity, page_size=args.page_size, bound=args.bound, engine=args.engine)
    if args.json:
        keep = (
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
        print(json.dumps({k: getattr(r, k) for k in keep}))
    else:
        print(f"{r.strategy}, capacity {r.capacity:,}, {r.requests:,} requests (seed {args.seed}):")
        print(
            f"  rejected {100 * r.rejected_fraction:.2f}%; memory holding data {100 * r.utilization:.1f}%; "
            f"internal fragmentation {100 * r.internal:.1f}% of allocated; external {100 * r.external:.1f}% of free"
        )
    return 0


def cmd_radix_replay(args: argparse.Namespace) -> int:
    if args.mooncake:
        requests = radix.mooncake(args.mooncake)
    else:
        requests = radix.conversations(args.conversations, seed=args.seed)
    r = radix.replay(requests, args.capacity, mode=args.mode, engine=args.engine)
    if args.json:
        print(json.dumps(r.to_dict(), default=str))
    else:
        cap = "unlimited" if r.capacity is None else f"{r.capacity:,}"
        print(
            f"{r.mode} cache, capacity {cap}: {r.requests:,} requests, {r.hit_tokens:,} of {r.total_tokens:,} tokens hit ({100 * r.hit_ratio:.1f}%), {r.nodes:,} nodes"
        )
    return 0


# ---------------------------------------------------------------------------- serving

SERVE_SOURCES = ("trace", *serve_source.GENERATORS)
"""Where ``osbench serve simulate`` takes its requests from: one of these options."""

# simulate() options whose default comes from the model and GPU presets, not from EngineConfig.
_FROM_PRESETS = {
    "num_blocks": "what the model leaves on the GPU",
    "max_model_len": "the model's",
    "max_num_batched_tokens": "vLLM's for the GPU",
    "max_num_seqs": "vLLM's for the GPU",
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


def _engine_config_flags(p: argparse.ArgumentParser) -> None:
    """A flag per EngineConfig field, its type, default and help taken from the dataclass."""
    group = p.add_argument_group("engine configuration (vLLM 0.33.0's options; defaults from EngineConfig)")
    docs = _field_docs(serve.EngineConfig)
    hints = typing.get_type_hints(serve.EngineConfig)
    for f in dataclasses.fields(serve.EngineConfig):
        flag = "--" + f.name.replace("_", "-")
        default = _FROM_PRESETS.get(f.name, f.default)
        if isinstance(default, bool):
            shown = "on" if default else "off"
        else:
            shown = default if isinstance(default, str) else number(default)
        help_text = f"{_field_help(docs.get(f.name, f.name))} (default: {shown})"
        kind = hints[f.name]
        if kind is bool:
            group.add_argument(flag, action=argparse.BooleanOptionalAction, default=None, help=help_text)
        elif f.name == "policy":
            group.add_argument(flag, choices=SERVE_POLICIES, default=None, help=help_text)
        else:
            metavar = "N" if kind is int else "X"
            group.add_argument(flag, type=kind, default=None, metavar=metavar, help=help_text)


def _serve_options(args: argparse.Namespace) -> dict[str, Any]:
    """simulate()'s options from the command line: the presets, and every engine flag given."""
    options: dict[str, Any] = {"model": args.model, "gpu": args.gpu}
    if args.tp is not None:
        options["tp"] = args.tp
    for f in dataclasses.fields(serve.EngineConfig):
        value = getattr(args, f.name)
        if value is not None:
            options[f.name] = value
    return options


def _serve_description(args: argparse.Namespace) -> dict[str, Any]:
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
    "preemptions",
    "cached_tokens",
)
"""The per-request CSV's columns (``--out``): times in seconds, lengths in tokens."""


def _request_csv(result: serve.ServeResult) -> str:
    columns = {
        "request": list(range(len(result.requests))),
        "arrival": result.arrival.tolist(),
        "prompt_len": result.requests.prompt_len.tolist(),
        "output_len": result.requests.output_len.tolist(),
    }
    values = [columns[c] if c in columns else getattr(result, c).tolist() for c in REQUEST_CSV_COLUMNS]
    buf = io.StringIO()
    out = csv.writer(buf, lineterminator="\n")
    out.writerow(REQUEST_CSV_COLUMNS)
    for row in zip(*values):
        out.writerow(["" if v != v else v for v in row])  # NaN (no TPOT for one output token): empty
    return buf.getvalue()


def _latency_line(name: str, stats: Any) -> str:
    return (
        f"  {name:<13}mean {duration(stats.mean)}, p50 {duration(stats.p50)}, p90 {duration(stats.p90)}, "
        f"p99 {duration(stats.p99)}"
    )


def cmd_serve_simulate(args: argparse.Namespace) -> int:
    options = _serve_options(args)
    requests, left_out = serve_source.requests(_serve_description(args), options)
    result = serve.simulate(requests, engine=args.engine, **options)
    s = result.summary(slo_ttft=args.slo_ttft, slo_tpot=args.slo_tpot)
    if args.out:
        _files.write_text(args.out, _request_csv(result))
    if args.json:
        print(
            json.dumps(
                {
                    "requests": requests.to_dict(),
                    "left_out": left_out,
                    "options": options,
                    "engine": args.engine,
                    "config": dataclasses.asdict(result.config),
                    "summary": s.to_dict(),
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
        + (f", {number(left_out)} longer than max_model_len={number(cfg.max_model_len)} left out" if left_out else "")
    )
    print(
        f"{model.name} on {tp} x {gpu.name}, {args.engine} engine: {number(cfg.num_blocks)} KV blocks of "
        f"{cfg.block_size} tokens; {number(cfg.max_num_batched_tokens)} tokens and {number(cfg.max_num_seqs)} "
        f"requests a step; chunked prefill {'on' if cfg.enable_chunked_prefill else 'off'}, prefix caching "
        f"{'on' if cfg.enable_prefix_caching else 'off'}, {cfg.policy}"
    )
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
    print(f"  {'prefix cache':<13}{percent(s.prefix_hit_rate)} of prompt tokens served from it")
    print(
        f"  {'steps':<13}{number(s.steps)}, {duration(s.mean_step_time)} each on average, "
        f"{number(s.mean_batch_size)} requests in a batch on average"
    )
    if args.out:
        print(f"wrote {args.out} (one row per request)", file=sys.stderr)
    return 0


def cmd_datasets(args: argparse.Namespace) -> int:
    if args.action == "list":
        if args.names:
            raise UserError("osbench datasets list takes no names (use: osbench datasets fetch NAME)")
        rows = datasets.available()
        if args.json:
            print(json.dumps([{**vars(s), "path": None if s.path is None else str(s.path)} for s in rows]))
            return 0
        width = max(len(s.name) for s in rows)
        for s in rows:
            where = str(s.path) if s.path is not None else "not here"
            print(f"{s.name:<{width}}  {s.size / 1e6:4.1f} MB  {where}\n{'':<{width}}  {s.description}; {s.licence}")
        print(
            f"\nosbench datasets fetch NAME|all downloads into {datasets.cache_dir()}; OSBENCH_DATA_DIR names a mirror"
        )
        return 0
    names = list(datasets.NAMES) if args.names == ["all"] or not args.names else args.names
    for name in names:
        if name not in datasets.REGISTRY:
            raise UserError(f"no dataset {name!r}: use one of {', '.join(datasets.NAMES)} or all")
    failed = 0
    for name in names:
        try:
            path = datasets.fetch(name) if args.action == "fetch" else datasets.local(name)
        except datasets.DatasetError as exc:
            print(f"osbench: error: {exc}", file=sys.stderr)
            failed += 1
            continue
        state = "verified" if path is not None else "not here (osbench datasets fetch " + name + ")"
        print(f"{name}: {path if path is not None else ''} {state}".replace("  ", " "))
    return 2 if failed else 0


def cmd_host(args: argparse.Namespace) -> int:
    _output_folder("--out", args.out)
    measured = host.measure(quick=args.quick, progress=_progress())
    if args.json:
        print(json.dumps(measured.to_dict(), default=str))
    else:
        for t in measured.tables():
            print(t.to_text() + "\n")
    written = host.write(measured, args.out)
    print(f"wrote {', '.join(str(p) for p in written.values())}", file=sys.stderr)
    return 0


def _one_of(names: Sequence[str], conjunction: str = "or") -> str:
    """A registry's names for a help text: "a, b or c"."""
    names = list(names)
    return f"{', '.join(names[:-1])} {conjunction} {names[-1]}" if len(names) > 1 else "".join(names)


def _reading(parameters: dict[str, frozenset[str]], name: str) -> list[str]:
    """The policies (strategies...) that read a parameter, in the registry's order."""
    return [p for p, reads in parameters.items() if name in reads]


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    p.add_argument("--engine", choices=_checks.ENGINES, default="native", help="simulation engine")


def parser() -> argparse.ArgumentParser:
    top = _Parser(prog="osbench", description="The OS ideas behind LLM inference, runnable, exact and fast.")
    top.add_argument("--version", action="version", version=f"osbench {_native.__version__}")
    sub = top.add_subparsers(dest="command", required=True)

    p = sub.add_parser("lecture", help="print a lecture demo's tables", epilog=EPILOG_LECTURE)
    p.add_argument("demo", choices=[*list(LECTURES), "all"])
    p.add_argument("--quick", action="store_true", help="smaller runs where a demo has large ones")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--engine", choices=_checks.ENGINES, default="native", help="simulation engine (lecture 04)")
    p.set_defaults(func=cmd_lecture)

    p = sub.add_parser("report", help="write the report folder (HTML, Markdown, JSON, figures)", epilog=EPILOG_REPORT)
    p.add_argument("--out", help="output folder (default: report; report-compare with --compare)")
    p.add_argument("--quick", action="store_true", help="lecture scale only, small host probes")
    p.add_argument(
        "--compare",
        nargs=2,
        metavar=("A", "B"),
        help="compare two reports (folders or results.json files) instead of running one: every measured figure "
        "side by side with the ratio, the simulated sections checked identical, the findings that changed",
    )
    _common(p)
    p.set_defaults(func=cmd_report)

    p = sub.add_parser(
        "host", help="measure this host: round trips, the GIL, page faults, memory latency", epilog=EPILOG_HOST
    )
    p.add_argument("--quick", action="store_true", help="small probes (under a minute)")
    p.add_argument("--out", default="host-report", help="output folder for host.json, host.md and figures")
    _common(p)
    p.set_defaults(func=cmd_host)

    sched_p = sub.add_parser("sched", help="CPU scheduling: simulate a policy on a workload")
    sched_sub = sched_p.add_subparsers(dest="sched_command", required=True)
    p = sched_sub.add_parser("simulate", help="simulate one policy", epilog=EPILOG_SCHED)
    p.add_argument("--policy", default="srpt", help=_one_of(sched.POLICIES))
    p.add_argument("--jobs", type=int, default=100_000, help="number of jobs (default 100000)")
    p.add_argument("--load", type=float, default=0.8, help="offered load (default 0.8)")
    p.add_argument("--sizes", default="exp", help=_one_of(sched.DISTRIBUTIONS))
    p.add_argument(
        "--quantum",
        type=float,
        default=None,
        help=f"quantum of {_one_of(_reading(sched.PARAMETERS, 'quantum'), 'and')} (default 0.1)",
    )
    p.add_argument("--switch-cost", type=float, default=0.0, help="cost of each switch between jobs")
    _common(p)
    p.set_defaults(func=cmd_sched_simulate)

    mem_p = sub.add_parser("mem", help="memory allocation: strategies and fragmentation")
    mem_sub = mem_p.add_subparsers(dest="mem_command", required=True)
    p = mem_sub.add_parser("alloc", help="simulate one allocation strategy", epilog=EPILOG_MEM)
    p.add_argument("--strategy", default="first", help=_one_of(mem.STRATEGIES))
    p.add_argument("--capacity", type=int, default=20_000, help="memory units (default 20000)")
    p.add_argument("--requests", type=int, default=5_000, help="number of requests (default 5000)")
    p.add_argument(
        "--page-size",
        type=int,
        default=16,
        help=f"page size for {_one_of(_reading(mem.PARAMETERS, 'page_size'), 'and')} (default 16)",
    )
    p.add_argument(
        "--bound",
        type=int,
        default=400,
        help=f"what {_one_of(_reading(mem.PARAMETERS, 'bound'), 'and')} sets aside per request (default 400)",
    )
    _common(p)
    p.set_defaults(func=cmd_mem_alloc)

    radix_p = sub.add_parser("radix", help="radix-tree prefix cache: replay requests")
    radix_sub = radix_p.add_subparsers(dest="radix_command", required=True)
    p = radix_sub.add_parser(
        "replay", help="replay requests through a prefix (or whole-prompt) cache", epilog=EPILOG_RADIX
    )
    p.add_argument(
        "--capacity", type=int, default=None, help="capacity in tokens (blocks for Mooncake); default unlimited"
    )
    p.add_argument("--mode", default="prefix", help=_one_of(radix.MODES))
    src = p.add_mutually_exclusive_group()
    src.add_argument("--conversations", type=int, default=400, help="synthetic multi-turn conversations (default 400)")
    src.add_argument("--mooncake", help="a Mooncake jsonl trace or dataset name (one token per 512-token block)")
    _common(p)
    p.set_defaults(func=cmd_radix_replay)

    serve_p = sub.add_parser("serve", help="LLM serving: continuous batching, paged KV cache, prefix caching")
    serve_sub = serve_p.add_subparsers(dest="serve_command", required=True)
    p = serve_sub.add_parser(
        "simulate",
        help="serve a trace or generated requests on a model and GPU, as vLLM 0.33.0 schedules them",
        epilog=EPILOG_SERVE,
    )
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
    p.add_argument("--model", default="llama-3-8b", help=f"{_one_of(list(serve.MODELS))} (default llama-3-8b)")
    p.add_argument("--gpu", default="h100", help=f"{_one_of(list(serve.GPUS))} (default h100)")
    p.add_argument("--tp", type=int, help="GPUs the model is sharded over (default: the model preset's)")
    _engine_config_flags(p)
    p.add_argument("--slo-ttft", type=float, metavar="SECONDS", help="time-to-first-token SLO for goodput")
    p.add_argument("--slo-tpot", type=float, metavar="SECONDS", help="time-per-output-token SLO for goodput")
    p.add_argument("--out", help="write one CSV row per request to this file (times in seconds)")
    _common(p)
    p.set_defaults(func=cmd_serve_simulate)
    p = serve_sub.add_parser(
        "sweep",
        help="request rate x configuration, resumable, locally or on Dask",
        epilog=EPILOG_SERVE_SWEEP,
    )
    p.add_argument("spec", help="a TOML or JSON spec: requests, rates, configs (see osbench.serve.sweep)")
    p.add_argument(
        "--out", default="serve-sweep.jsonl", help="results file (JSON lines); finished cells are skipped on a rerun"
    )
    p.add_argument("--dask", metavar="ADDRESS", help="run on a Dask cluster at ADDRESS, or 'local' for a LocalCluster")
    p.add_argument("--workers", type=int, default=None, help="local process pool size (default: every core)")
    p.add_argument(
        "--figure", help="where to draw latency and goodput against the rate (default: the results file with .png)"
    )
    p.add_argument("--json", action="store_true", help="machine-readable output")  # the spec names engine and seed
    p.set_defaults(func=cmd_serve_sweep)

    p = sub.add_parser(
        "datasets",
        help="the public traces: list them, fetch them (checked by SHA-256), verify local copies",
        epilog=EPILOG_DATASETS,
    )
    p.add_argument("action", nargs="?", choices=("list", "fetch", "verify"), default="list")
    p.add_argument("names", nargs="*", help="dataset names, or all (default for fetch and verify: all)")
    p.add_argument("--json", action="store_true", help="machine-readable output (list)")
    p.set_defaults(func=cmd_datasets)

    p = sub.add_parser(
        "sweep", help="run traces x policies x capacities, resumable, locally or on Dask", epilog=EPILOG_SWEEP
    )
    p.add_argument("spec", help="a TOML or JSON spec: traces, policies, capacities (see osbench.cache.sweep)")
    p.add_argument(
        "--out", default="sweep-results.jsonl", help="results file (JSON lines); finished cells are skipped on a rerun"
    )
    p.add_argument("--dask", metavar="ADDRESS", help="run on a Dask cluster at ADDRESS, or 'local' for a LocalCluster")
    p.add_argument("--workers", type=int, default=None, help="threads on this machine (default: every usable CPU)")
    p.add_argument("--figure", help="where to draw the curves (default: the results file with .png)")
    _common(p)
    p.set_defaults(func=cmd_sweep)

    cache_p = sub.add_parser("cache", help="cache replacement: replay a trace, hit-ratio curves")
    cache_sub = cache_p.add_subparsers(dest="cache_command", required=True)
    for name, func, epilog in (("replay", cmd_cache_replay, EPILOG_REPLAY), ("curve", cmd_cache_curve, EPILOG_CURVE)):
        p = cache_sub.add_parser(name, help=f"cache {name}", epilog=epilog)
        p.add_argument("--policy", default="lru", help=_one_of(cache.POLICIES))
        p.add_argument("--sizes", action="store_true", help="use the trace's object sizes: capacities then count bytes")
        src = p.add_mutually_exclusive_group()
        src.add_argument(
            "--trace",
            help="a trace file (npy, csv/txt, oracleGeneral, zstd, Mooncake or Azure; format detected) or a "
            "dataset name (osbench datasets)",
        )
        p.add_argument(
            "--format", help=f"the trace file's format when its name does not tell: {_one_of(traces.FORMATS)}"
        )
        src.add_argument(
            "--zipf", type=_zipf_spec, default=(1000, 0.8, 30000), help="N_KEYS,ALPHA,LENGTH (default 1000,0.8,30000)"
        )
        if name == "replay":
            p.add_argument("--capacity", type=int, default=100, help="cache size in objects")
        else:
            p.add_argument("--capacities", type=_int_list, default=[10, 100, 1000], help="comma-separated sizes")
            p.add_argument("--sample", type=float, help="estimate from a SHARDS spatial sample at this rate, e.g. 0.01")
        _common(p)
        p.set_defaults(func=func)
    return top


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parser().parse_args(argv)
    try:
        return int(args.func(args))
    except BrokenPipeError:  # e.g. `osbench lecture all | head`: the reader left, not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except (OsbenchError, OSError) as exc:  # refused input, missing files: one line; a bug keeps its traceback
        print(f"osbench: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("osbench: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
