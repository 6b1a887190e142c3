"""Sweeps: every (trace, policy, capacity) cell of a study, on any executor, resumable.

A spec (a dict, or a TOML or JSON file) names the cells::

    traces = ["cloudphysics", "my-trace.bin"]   # dataset names or paths, or tables:
    # [[traces]]  path = "t.csv.zst"  format = "csv"  key_column = 1     (read options)
    policies = ["lru", "sieve", "s3fifo"]
    capacities = [1000, 2000, 4000]
    sizes = false          # true: replay with the trace's own sizes, capacities in bytes
    chunk_size = 1048576   # streaming chunk, accesses

:func:`run` replays the cells. On one machine (the default, ``executor="threads"``) each trace
is read into memory once and its cells replayed by :func:`~osbench.cache.replay_grid` on every
usable CPU, a policy at a time. ``executor="process"`` replays each cell in a local process pool
streaming the file, for traces larger than memory; a Dask cluster through
``distributed.Client.get_executor()`` (``executor="dask"`` starts a LocalCluster, or pass a
scheduler address) or any ``concurrent.futures`` Executor you give runs the streaming cells too.
Each result is appended to the results file (JSON lines) as soon as its cell (in threads: its
policy's cells on that trace) finishes, flushed to disk; a rerun skips the cells already there,
so a sweep killed midway resumes losing nothing but the cells in flight.
"""

from __future__ import annotations

import concurrent.futures as cf
import importlib
import io
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Callable, Optional, Union

from osbench import _checks, _files, traces
from osbench.cache import _args
from osbench.cache.policies import POLICIES
from osbench.cache.replay import replay, replay_grid
from osbench.errors import ArgumentError, ArgumentTypeError

SpecLike = Union[dict[str, Any], str, "os.PathLike[str]"]


def _toml() -> Any:
    """The TOML reader: the standard library's from Python 3.11, else the tomli package."""
    try:
        import tomllib

        return tomllib
    except ImportError:
        try:
            return importlib.import_module("tomli")
        except ImportError:
            raise ArgumentError(
                "TOML sweep specs need Python 3.11+ or the tomli package; a JSON spec works everywhere"
            ) from None


def load_spec(spec: SpecLike) -> dict[str, Any]:
    """A sweep spec from a dict, or a ``.toml`` or ``.json`` file, checked."""
    if isinstance(spec, dict):
        raw: dict[str, Any] = spec
    else:
        path = Path(spec)
        text = path.read_text(encoding="utf-8")
        try:
            if path.suffix.lower() == ".toml":
                raw = _toml().loads(text)
            else:
                raw = json.loads(text)
        except ValueError as exc:  # tomllib.TOMLDecodeError and JSONDecodeError are ValueErrors
            raise ArgumentError(f"{path}: not a valid sweep spec ({exc})") from None
        if not isinstance(raw, dict):
            raise ArgumentError(f"{path}: not a valid sweep spec (a table/object at the top)")
    spec = raw
    missing = [k for k in ("traces", "policies", "capacities") if not spec.get(k)]
    if missing:
        raise ArgumentError(f"spec is not accepted: it needs non-empty {', '.join(missing)}")
    traces = [t if isinstance(t, dict) else {"path": str(t)} for t in spec["traces"]]
    for t in traces:
        if "path" not in t:
            raise ArgumentError(f"spec is not accepted: trace entry {t!r} has no path")
    policies = [_checks.choice("policies", p, POLICIES) for p in spec["policies"]]
    capacities = [_checks.positive_int("capacities", c) for c in spec["capacities"]]
    for p in policies:
        for c in capacities:
            _args.capacity("capacities", p, c)
    return {
        "traces": traces,
        "policies": policies,
        "capacities": capacities,
        "sizes": bool(spec.get("sizes", False)),
        "chunk_size": _checks.positive_int("chunk_size", spec.get("chunk_size", 1 << 20)),
    }


def cells(spec: dict[str, Any]) -> list[dict[str, Any]]:
    """Every cell of a checked spec, in order; ``key`` identifies a cell across reruns."""
    out = []
    for t in spec["traces"]:
        for p in spec["policies"]:
            for c in spec["capacities"]:
                trace_id = json.dumps(t, sort_keys=True)
                key = f"{trace_id}|{p}|{c}|sizes={spec['sizes']}"
                out.append(
                    {
                        "key": key,
                        "trace": t,
                        "policy": p,
                        "capacity": c,
                        "sizes": spec["sizes"],
                        "chunk_size": spec["chunk_size"],
                    }
                )
    return out


def _read_options(cell: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in cell["trace"].items() if k != "path"}


def run_cell(cell: dict[str, Any]) -> dict[str, Any]:
    """Replay one cell (in a worker): streams the trace file."""
    r = replay(
        cell["trace"]["path"],
        cell["policy"],
        cell["capacity"],
        sizes=True if cell["sizes"] else None,
        chunk_size=cell["chunk_size"],
        **_read_options(cell),
    )
    return _record(cell, r)


def _record(cell: dict[str, Any], r: Any) -> dict[str, Any]:
    return {
        "key": cell["key"],
        "trace": cell["trace"]["path"],
        "policy": cell["policy"],
        "capacity": cell["capacity"],
        "sizes": cell["sizes"],
        "accesses": r.accesses,
        "hits": r.hits,
        "misses": r.misses,
        "hit_ratio": r.hit_ratio,
    }


def finished(out: Union[str, os.PathLike[str]]) -> dict[str, dict[str, Any]]:
    """The results already in a results file, by cell key. A last line cut short by a crash
    is ignored (its cell runs again); any other bad line is an error naming the line."""
    path = Path(out)
    if not path.exists():
        return {}
    lines = path.read_text(encoding="utf-8").split("\n")
    done = {}
    for i, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
            done[rec["key"]] = rec
        except (ValueError, KeyError, TypeError):
            if i == len(lines):  # the unterminated last line of a killed run
                continue
            raise ArgumentError(f"{path}: line {i}: not a sweep result") from None
    return done


def _drop_cut_line(path: Path) -> None:
    """Remove a last line cut short by a crash, so appended results start on a fresh line."""
    if not path.exists():
        return
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        with open(path, "r+b") as f:
            f.truncate(data.rfind(b"\n") + 1)


def _in_threads(todo: list[dict[str, Any]], workers: Optional[int]) -> Iterator[dict[str, Any]]:
    """The results of ``todo``, a trace read once and a policy's cells replayed together on
    ``workers`` threads (default: every usable CPU)."""
    by_trace: dict[str, list[dict[str, Any]]] = {}
    for c in todo:
        by_trace.setdefault(json.dumps(c["trace"], sort_keys=True), []).append(c)
    for group in by_trace.values():
        trace = traces.read(group[0]["trace"]["path"], **_read_options(group[0]))
        by_policy: dict[str, list[dict[str, Any]]] = {}
        for c in group:
            by_policy.setdefault(c["policy"], []).append(c)
        for policy, cells_of_policy in by_policy.items():
            replays = replay_grid(
                trace,
                [policy],
                [c["capacity"] for c in cells_of_policy],
                threads=workers,
                sizes=True if cells_of_policy[0]["sizes"] else None,
            )
            yield from (_record(c, r) for c, r in zip(cells_of_policy, replays))


def _executor(executor: Any, workers: Optional[int]) -> tuple[cf.Executor, Callable[[], None]]:
    """(executor, close) from the ``executor=`` argument."""
    if executor == "process":
        pool = cf.ProcessPoolExecutor(max_workers=workers)
        return pool, lambda: pool.shutdown(wait=True, cancel_futures=True)
    if isinstance(executor, cf.Executor):
        return executor, lambda: None
    if isinstance(executor, str):
        try:
            import distributed
        except ImportError:
            raise ArgumentError(
                f"executor={executor!r} needs the distributed package (pip install distributed)"
            ) from None
        if executor in ("dask", "local"):
            cluster = distributed.LocalCluster(
                n_workers=workers or 2, threads_per_worker=1, processes=True, dashboard_address=None
            )
            client = distributed.Client(cluster)

            def close() -> None:
                client.close()
                cluster.close()

            return client.get_executor(), close
        client = distributed.Client(executor)
        return client.get_executor(), client.close
    raise ArgumentTypeError(
        f"executor={executor!r} is not accepted: None or 'threads', 'process', 'dask', a scheduler address or a concurrent.futures.Executor"
    )


def run(
    spec: SpecLike,
    out: Union[str, os.PathLike[str]],
    executor: Any = None,
    *,
    workers: Optional[int] = None,
    progress: Optional[Callable[[int, int], None]] = None,
) -> list[dict[str, Any]]:
    """Run every cell of ``spec`` not already in the results file ``out`` (JSON lines) and
    append each result as it finishes. Returns all results (earlier ones included) in cell
    order. ``executor``: None or ``"threads"`` (in this process, each trace in memory, on
    ``workers`` threads, default every usable CPU), ``"process"`` (a local process pool of
    ``workers``, streaming), ``"dask"`` (a Dask LocalCluster), a Dask scheduler address, or any
    ``concurrent.futures.Executor``. ``progress(done, total)`` is called after each cell."""
    checked = load_spec(spec)
    todo_all = cells(checked)
    done = finished(out)
    todo = [c for c in todo_all if c["key"] not in done]
    total = len(todo_all)
    if progress:
        progress(total - len(todo), total)
    if workers is not None:
        workers = _checks.positive_int("workers", workers, maximum=1024)
    if todo:
        in_threads = executor is None or executor == "threads"
        pool, close = (None, lambda: None) if in_threads else _executor(executor, workers)
        path = Path(out)
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            _drop_cut_line(path)
            with open(path, "a", encoding="utf-8") as f:
                if pool is None:
                    records: Iterator[dict[str, Any]] = _in_threads(todo, workers)
                else:
                    futures = [pool.submit(run_cell, c) for c in todo]
                    records = (fut.result() for fut in cf.as_completed(futures))
                for rec in records:
                    f.write(json.dumps(rec) + "\n")
                    f.flush()
                    os.fsync(f.fileno())
                    done[rec["key"]] = rec
                    if progress:
                        progress(len(done), total)
        finally:
            close()
    return [done[c["key"]] for c in todo_all]


def figure(results: list[dict[str, Any]], path: Union[str, os.PathLike[str]]) -> None:
    """Hit-ratio curves of a sweep (one panel per trace, one line per policy), saved to
    ``path`` (the format from its suffix, e.g. .png or .svg). Needs matplotlib."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    traces = sorted({r["trace"] for r in results})
    fig, axes = plt.subplots(1, len(traces), figsize=(5 * len(traces), 3.5), squeeze=False)
    for ax, trace in zip(axes[0], traces):
        for policy in sorted({r["policy"] for r in results if r["trace"] == trace}):
            rows = sorted(
                (r["capacity"], r["hit_ratio"]) for r in results if r["trace"] == trace and r["policy"] == policy
            )
            ax.plot([c for c, _ in rows], [h for _, h in rows], marker=".", label=policy)
        ax.set_xscale("log")
        ax.set_xlabel("capacity")
        ax.set_ylabel("hit ratio")
        ax.set_title(os.path.basename(trace), fontsize=9)
        ax.legend(fontsize=7)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format=Path(path).suffix.lstrip(".") or "png")
    plt.close(fig)
    _files.write_bytes(path, buf.getvalue())


def iter_results(out: Union[str, os.PathLike[str]]) -> Iterator[dict[str, Any]]:
    """The results in a results file, in the order they finished."""
    yield from finished(out).values()


__all__ = ["cells", "figure", "finished", "iter_results", "load_spec", "run", "run_cell"]
