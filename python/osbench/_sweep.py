"""The sweep runner: every cell of a study on any executor, each result appended as it finishes,
a rerun resuming where a killed one stopped.

A study (:mod:`osbench.cache.sweep`, :mod:`osbench.serve.sweep`) reads its spec with
:func:`read_spec`, makes its cells (dicts, each with a ``"key"`` that names it across reruns) and
hands them to :func:`run` with its ``run_cell(cell) -> dict``, a module-level function so that
process pools and Dask workers can import it. :func:`run` runs the cells not already in the
results file (JSON lines) on a ``concurrent.futures`` executor: a local process pool by default, a
Dask cluster through ``distributed.Client.get_executor()`` (``executor="dask"`` starts a
LocalCluster, or pass a scheduler address), or any Executor you give. A study that can do better
in one process (the cache sweep: a trace read once, its cells on every CPU's thread) passes
``in_process``, which then runs by default (``executor="threads"``). Each result is written and
flushed to disk as soon as its cell finishes, so a sweep killed midway loses only the cells in
flight.
"""

from __future__ import annotations

import concurrent.futures as cf
import importlib
import json
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Optional, Union

from osbench import _checks
from osbench._optional import require
from osbench.errors import ArgumentError, ArgumentTypeError

SpecLike = Union[dict[str, Any], str, "os.PathLike[str]"]
PathLike = Union[str, "os.PathLike[str]"]
Cell = dict[str, Any]
InProcess = Callable[[list[Cell], Optional[int]], Iterator[Cell]]
"""A study's own way to run cells in this process: ``(cells, workers) -> their results``."""


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


def read_spec(spec: SpecLike) -> dict[str, Any]:
    """A spec as a dict: the dict itself, or a ``.toml`` or ``.json`` file parsed (not checked:
    each study checks its own fields)."""
    if isinstance(spec, dict):
        return spec
    path = Path(spec)
    text = path.read_text(encoding="utf-8")
    try:
        raw = _toml().loads(text) if path.suffix.lower() == ".toml" else json.loads(text)
    except ValueError as exc:  # tomllib.TOMLDecodeError and JSONDecodeError are ValueErrors
        raise ArgumentError(f"{path}: not a valid sweep spec ({exc})") from None
    if not isinstance(raw, dict):
        raise ArgumentError(f"{path}: not a valid sweep spec (a table/object at the top)")
    return raw


MAX_LINE = 64 << 20
"""The longest line a results file may hold (a result is a few kilobytes of JSON)."""


def results_path(out: PathLike) -> Path:
    """``out`` as a results file: a regular file (or a symbolic link to one), or a new path. The
    sweep appends to it and reads it back to resume, so a device, a pipe or a directory is
    refused (``/dev/full`` would read as zeros for ever)."""
    path = Path(out)
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return path
    except OSError as exc:
        raise ArgumentError(f"out={os.fspath(out)!r} is not accepted: {exc.strerror or exc}") from None
    if not stat.S_ISREG(mode):
        kind = (
            "a directory"
            if stat.S_ISDIR(mode)
            else "a named pipe"
            if stat.S_ISFIFO(mode)
            else "a socket"
            if stat.S_ISSOCK(mode)
            else "a device"
        )
        raise ArgumentError(
            f"out={os.fspath(out)!r} is not accepted: it is {kind}; a sweep's results go to a regular file "
            "(or a new path), which it appends to and reads back to resume"
        )
    return path


def finished(out: PathLike) -> dict[str, dict[str, Any]]:
    """The results already in a results file, by cell key. A last line cut short by a crash
    is ignored (its cell runs again); any other bad line is an error naming the line."""
    path = results_path(out)
    if not path.exists():
        return {}
    done = {}
    with open(path, "rb") as f:
        for i, line in enumerate(iter(lambda: f.readline(MAX_LINE + 1), b""), 1):
            if len(line) > MAX_LINE:
                raise ArgumentError(f"{path}: line {i}: longer than {MAX_LINE >> 20} MiB, not a sweep result")
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
                done[rec["key"]] = rec
            except (ValueError, KeyError, TypeError):
                if not line.endswith(b"\n"):  # the unterminated last line of a killed run
                    continue
                raise ArgumentError(f"{path}: line {i}: not a sweep result") from None
    return done


def _drop_cut_line(path: Path) -> None:
    """Remove a last line cut short by a crash, so appended results start on a fresh line."""
    if not path.exists():
        return
    with open(path, "r+b") as f:
        end = f.seek(0, os.SEEK_END)
        pos = end
        while pos > 0:
            start = max(0, pos - (1 << 16))
            f.seek(start)
            block = f.read(pos - start)
            if pos == end and block.endswith(b"\n"):
                return
            cut = block.rfind(b"\n")
            if cut >= 0:
                f.truncate(start + cut + 1)
                return
            pos = start
        f.truncate(0)


def _executor(executor: Any, workers: Optional[int]) -> tuple[cf.Executor, Callable[[bool], None]]:
    """(executor, close) from the ``executor=`` argument; ``close(interrupted)``."""
    if executor is None or executor == "process":
        pool = cf.ProcessPoolExecutor(max_workers=workers)

        def shutdown(interrupted: bool) -> None:
            if interrupted:  # the cells in flight are lost (a rerun runs them)
                _stop_workers(pool)
            pool.shutdown(wait=True, cancel_futures=True)

        return pool, shutdown
    if isinstance(executor, cf.Executor):
        return executor, lambda interrupted: None
    if isinstance(executor, str):
        distributed = require("distributed", f"executor={executor!r}")
        if executor in ("dask", "local"):
            cluster = distributed.LocalCluster(
                n_workers=workers or 2, threads_per_worker=1, processes=True, dashboard_address=None
            )
            client = distributed.Client(cluster)

            def close(interrupted: bool) -> None:
                client.close()
                cluster.close()

            return client.get_executor(), close
        remote = distributed.Client(executor)
        return remote.get_executor(), lambda interrupted: remote.close()
    raise ArgumentTypeError(
        f"executor={executor!r} is not accepted: None, 'threads' (where the study has it), 'process', 'dask', "
        "a scheduler address or a concurrent.futures.Executor"
    )


@contextmanager
def opened(executor: Any = None, workers: Optional[int] = None) -> Iterator[cf.Executor]:
    """The executor ``executor=`` names (as :func:`run` takes it, "threads" aside), open for
    several rounds of cells (a study whose next cells depend on the last ones' results, as the
    capacity planner's search does), closed on leaving; an error or Ctrl-C inside ends a local
    pool's workers at once."""
    if workers is not None:
        workers = _checks.positive_int("workers", workers, maximum=1024)
    pool, close = _executor(executor, workers)
    interrupted = True
    try:
        yield pool
        interrupted = False
    finally:
        close(interrupted)


def _stop_workers(pool: cf.ProcessPoolExecutor) -> None:
    """End a process pool's workers now: Ctrl-C in a terminal reaches the whole process group,
    but a SIGINT to the sweep alone (or an error) would otherwise wait for every cell in flight."""
    terminate = getattr(pool, "terminate_workers", None)  # Python 3.14+
    if terminate is not None:
        terminate()
        return
    processes = getattr(pool, "_processes", None) or {}
    for process in list(processes.values()):
        process.terminate()


def run(
    cells: list[Cell],
    run_cell: Callable[[Cell], Cell],
    out: PathLike,
    executor: Any = None,
    *,
    workers: Optional[int] = None,
    progress: Optional[Callable[[int, int], None]] = None,
    in_process: Optional[InProcess] = None,
) -> list[Cell]:
    """Run ``run_cell`` on every cell not already in the results file ``out`` (JSON lines) and
    append each result (which keeps its cell's ``"key"``) as it finishes. Returns all results
    (earlier ones included) in cell order. ``executor``: None (``in_process`` when the study
    has one, else a process pool), ``"threads"`` (``in_process``), ``"process"`` (a local
    process pool of ``workers``), ``"dask"`` (a Dask LocalCluster), a Dask scheduler address, or
    any ``concurrent.futures.Executor``. ``progress(done, total)`` is called after each cell."""
    if workers is not None:
        workers = _checks.positive_int("workers", workers, maximum=1024)
    if executor == "threads" and in_process is None:
        raise ArgumentError("executor='threads' is not accepted by this sweep: its cells run in processes")
    done = finished(out)
    todo = [c for c in cells if c["key"] not in done]
    total = len(cells)
    if progress:
        progress(total - len(todo), total)
    if todo:
        here = in_process if executor in (None, "threads") else None
        pool, close = (None, lambda interrupted: None) if here is not None else _executor(executor, workers)
        path = Path(out)
        path.parent.mkdir(parents=True, exist_ok=True)
        interrupted = True
        try:
            _drop_cut_line(path)
            with open(path, "a", encoding="utf-8") as f:
                if pool is not None:
                    futures = [pool.submit(run_cell, c) for c in todo]
                    records: Iterator[Cell] = (fut.result() for fut in cf.as_completed(futures))
                elif here is not None:
                    records = here(todo, workers)
                for rec in records:
                    f.write(json.dumps(rec) + "\n")
                    f.flush()
                    os.fsync(f.fileno())
                    done[rec["key"]] = rec
                    if progress:
                        progress(len(done), total)
            interrupted = False
        finally:
            close(interrupted)
    return [done[c["key"]] for c in cells]


__all__ = ["MAX_LINE", "finished", "opened", "read_spec", "results_path", "run"]
