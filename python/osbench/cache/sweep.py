"""Sweeps: every (trace, policy, capacity) cell of a study, on any executor, resumable.

A spec (a dict, or a TOML or JSON file) names the cells::

    traces = ["cloudphysics", "my-trace.bin"]   # dataset names or paths, or tables:
    # [[traces]]  path = "t.csv.zst"  format = "csv"  key_column = 1     (read options)
    policies = ["lru", "sieve", "s3fifo"]
    capacities = [1000, 2000, 4000]
    sizes = false          # true: replay with the trace's own sizes, capacities in bytes
    chunk_size = 1048576   # streaming chunk, accesses
    admissions = ["none", "bloom", "prob:prob=0.2,seed=1"]   # optional: admission filters, each
                           # as the command line's --admission (default: none)

:func:`run` replays the cells. On one machine (the default, ``executor="threads"``) each trace
is read into memory once and its cells replayed by :func:`~osbench.cache.replay_grid` on every
usable CPU, a policy at a time. ``executor="process"`` replays each cell in a local process pool
streaming the file, for traces larger than memory; a Dask cluster through
``distributed.Client.get_executor()`` (``executor="dask"`` starts a LocalCluster, or pass a
scheduler address) or any ``concurrent.futures`` Executor you give runs the streaming cells too.
Each result is appended to the results file (JSON lines) as soon as its cell (in threads: its
policy's cells on that trace) finishes, flushed to disk; a rerun skips the cells already there,
so a sweep killed midway resumes losing nothing but the cells in flight. The runner is
:mod:`osbench._sweep`, which the serving sweep (:mod:`osbench.serve.sweep`) shares.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Callable, Optional, Union

from osbench import _checks, _files, _sweep, traces
from osbench._optional import require
from osbench._sweep import SpecLike, finished
from osbench.cache import _args
from osbench.cache import admission as _admission
from osbench.cache.policies import POLICIES
from osbench.cache.replay import replay, replay_grid
from osbench.errors import ArgumentError


def load_spec(spec: SpecLike) -> dict[str, Any]:
    """A sweep spec from a dict, or a ``.toml`` or ``.json`` file, checked."""
    spec = _sweep.read_spec(spec)
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
    admissions = [_filter(a) for a in spec.get("admissions", ["none"])]
    return {
        "traces": traces,
        "policies": policies,
        "capacities": capacities,
        "admissions": admissions,
        "sizes": bool(spec.get("sizes", False)),
        "chunk_size": _checks.positive_int("chunk_size", spec.get("chunk_size", 1 << 20)),
    }


def _filter(entry: Any) -> Optional[str]:
    """An ``admissions`` entry checked, as its canonical spelling (``prob:prob=0.2,seed=1``),
    or None for ``"none"``."""
    if entry is None or entry == "none":
        return None
    if not isinstance(entry, str):
        raise ArgumentError(f"admissions entry {entry!r} is not accepted: a string such as 'bloom' or 'size:size=4096'")
    name, params = _admission.parse(entry)
    _admission.check(name, params)
    return name + (":" + ",".join(f"{k}={v}" for k, v in params.items()) if params else "")


def cells(spec: dict[str, Any]) -> list[dict[str, Any]]:
    """Every cell of a checked spec, in order; ``key`` identifies a cell across reruns."""
    out = []
    for t in spec["traces"]:
        for a in spec.get("admissions", [None]):
            for p in spec["policies"]:
                for c in spec["capacities"]:
                    trace_id = json.dumps(t, sort_keys=True)
                    key = f"{trace_id}|{p}|{c}|sizes={spec['sizes']}" + (f"|admission={a}" if a else "")
                    out.append(
                        {
                            "key": key,
                            "trace": t,
                            "policy": p,
                            "capacity": c,
                            "admission": a,
                            "sizes": spec["sizes"],
                            "chunk_size": spec["chunk_size"],
                        }
                    )
    return out


def _admission_keywords(cell: dict[str, Any]) -> dict[str, Any]:
    if not cell.get("admission"):
        return {}
    name, params = _admission.parse(cell["admission"])
    return {"admission": name, "admission_params": params}


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
        **_admission_keywords(cell),
        **_read_options(cell),
    )
    return _record(cell, r)


def _record(cell: dict[str, Any], r: Any) -> dict[str, Any]:
    return {
        "key": cell["key"],
        "trace": cell["trace"]["path"],
        "policy": cell["policy"],
        "capacity": cell["capacity"],
        "admission": cell.get("admission"),
        "sizes": cell["sizes"],
        "accesses": r.accesses,
        "hits": r.hits,
        "misses": r.misses,
        "hit_ratio": r.hit_ratio,
    }


def _in_threads(todo: list[dict[str, Any]], workers: Optional[int]) -> Iterator[dict[str, Any]]:
    """The results of ``todo``, a trace read once and a policy's cells replayed together on
    ``workers`` threads (default: every usable CPU)."""
    by_trace: dict[str, list[dict[str, Any]]] = {}
    for c in todo:
        by_trace.setdefault(json.dumps(c["trace"], sort_keys=True), []).append(c)
    for group in by_trace.values():
        trace = traces.read(group[0]["trace"]["path"], **_read_options(group[0]))
        by_policy: dict[tuple[str, Optional[str]], list[dict[str, Any]]] = {}
        for c in group:
            by_policy.setdefault((c["policy"], c.get("admission")), []).append(c)
        for (policy, _), cells_of_policy in by_policy.items():
            replays = replay_grid(
                trace,
                [policy],
                [c["capacity"] for c in cells_of_policy],
                threads=workers,
                sizes=True if cells_of_policy[0]["sizes"] else None,
                **_admission_keywords(cells_of_policy[0]),
            )
            yield from (_record(c, r) for c, r in zip(cells_of_policy, replays))


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
    return _sweep.run(
        cells(load_spec(spec)), run_cell, out, executor, workers=workers, progress=progress, in_process=_in_threads
    )


def figure(results: list[dict[str, Any]], path: Union[str, os.PathLike[str]]) -> None:
    """Hit-ratio curves of a sweep (one panel per trace, one line per policy and filter), saved to
    ``path`` (the format from its suffix, e.g. .png or .svg). Needs matplotlib."""
    matplotlib = require("matplotlib", "the sweep's figure")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    traces = sorted({r["trace"] for r in results})
    fig, axes = plt.subplots(1, len(traces), figsize=(5 * len(traces), 3.5), squeeze=False)
    for ax, trace in zip(axes[0], traces):
        lines = sorted({(r["policy"], r.get("admission") or "") for r in results if r["trace"] == trace})
        for policy, gate in lines:
            rows = sorted(
                (r["capacity"], r["hit_ratio"])
                for r in results
                if r["trace"] == trace and r["policy"] == policy and (r.get("admission") or "") == gate
            )
            label = f"{policy} + {gate}" if gate else policy
            ax.plot([c for c, _ in rows], [h for _, h in rows], marker=".", label=label)
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
