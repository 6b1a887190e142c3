"""What every topic of the command line shares: the parser class with one-line errors, the user
error, the common flags, output folders proven writable, progress lines, and the sweep runner."""

from __future__ import annotations

import argparse
import importlib
import json
import os
import pkgutil
import re
import shutil
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, Callable, Optional

import osbench
from osbench._engines import ENGINES
from osbench._optional import MissingDependency
from osbench._table import Table
from osbench.errors import OsbenchError

if TYPE_CHECKING:
    Subcommands = argparse._SubParsersAction[argparse.ArgumentParser]
else:
    Subcommands = argparse._SubParsersAction
"""What a topic's ``add_commands`` receives: the parent's subparsers, to add its commands to."""


class UserError(OsbenchError):
    """A mistake in the command line or its inputs: one line, exit status 2."""


class HelpFormatter(argparse.HelpFormatter):
    """argparse's help layout, wrapping lines at spaces only: a preset name (``rtx-pro-6000``)
    is never cut at one of its hyphens."""

    def _split_lines(self, text: str, width: int) -> list[str]:
        return textwrap.wrap(" ".join(text.split()), width, break_on_hyphens=False)


class Parser(argparse.ArgumentParser):
    """argparse with the CLI's one-line errors: ``osbench: error: ...`` and exit status 2 (the
    usage stays in ``--help``), and help lines wrapped at spaces only (:class:`HelpFormatter`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> Any:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _cannot_write(option: str, path: str, folder: Path, exc: OSError) -> UserError:
    """The error for a folder that cannot be made or written: a part of it that is a file is
    named (mkdir's own word for it is "File exists")."""
    part = next((p for p in (folder, *folder.parents) if p.exists()), None)
    if part is not None and not part.is_dir():
        return UserError(f"{option} {path} is not accepted: {part} is a file, not a folder")
    return UserError(f"{option} {path} is not accepted: cannot write there ({exc.strerror or exc})")


def output_folder(option: str, path: str) -> Path:
    """The folder a command writes to, made and proven writable before any work starts (an
    unwritable --out fails at once, not after minutes of measuring)."""
    if not path:
        raise UserError(f"{option} '' is not accepted: give a folder")
    out = Path(path)
    try:
        out.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=out):
            pass
    except OSError as exc:
        raise _cannot_write(option, path, out, exc) from None
    return out


def output_file(option: str, path: str) -> Path:
    """The file a command writes when its work is done, checked before the work starts: a name
    (not ''), not a folder, in a folder that can be written (made if missing)."""
    if not path:
        raise UserError(f"{option} '' is not accepted: give a file name")
    out = Path(path)
    if out.is_dir():
        raise UserError(f"{option} {path} is not accepted: it is a folder; give a file name")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=out.parent):
            pass
    except OSError as exc:
        raise _cannot_write(option, path, out.parent, exc) from None
    if out.exists() and not os.access(out, os.W_OK):
        raise UserError(f"{option} {path} is not accepted: the file cannot be written (permission denied)")
    return out


def existing(path_text: str, what: str) -> Path:
    """The path, or a one-line error when there is no such file."""
    path = Path(path_text)
    if not path.exists():
        raise UserError(f"{what} not found: {path}")
    return path


QUIET = False
"""``osbench --quiet``: no progress on stderr (set by :func:`osbench.cli.main`)."""


def progress(stream: Any = None) -> Callable[[str], None]:
    """Progress for long runs. On a terminal: one line redrawn in place, a bar over the sections
    (messages "[i/n] name") and the latest step within the section; elsewhere plain lines (a
    log); nothing with --quiet."""
    if QUIET:
        return lambda message: None
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


def one_of(names: Sequence[str], conjunction: str = "or") -> str:
    """A registry's names for a help text: "a, b or c"."""
    names = list(names)
    return f"{', '.join(names[:-1])} {conjunction} {names[-1]}" if len(names) > 1 else "".join(names)


def reading(parameters: dict[str, frozenset[str]], name: str) -> list[str]:
    """The policies (strategies...) that read a parameter, in the registry's order."""
    return [p for p, reads in parameters.items() if name in reads]


def common_flags(p: argparse.ArgumentParser) -> None:
    """--json, --seed and --engine, which most commands take."""
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    p.add_argument("--engine", choices=ENGINES, default="native", help="simulation engine")


def int_list(text: str) -> list[int]:
    try:
        return [int(x) for x in text.split(",")]  # an empty item is refused, never dropped
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected comma-separated integers such as 10,100,1000") from None


def sweep_flags(p: argparse.ArgumentParser, default_out: str, workers: str, figure: str) -> None:
    """The options of a resumable sweep (``osbench sweep``, ``osbench serve sweep``)."""
    p.add_argument(
        "--out", default=default_out, help="results file (JSON lines); finished cells are skipped on a rerun"
    )
    p.add_argument("--dask", metavar="ADDRESS", help="run on a Dask cluster at ADDRESS, or 'local' for a LocalCluster")
    p.add_argument("--workers", type=int, default=None, help=workers)
    p.add_argument("--figure", help=figure)


def run_sweep(
    study: ModuleType, args: argparse.Namespace, drawn_as: str, table: Callable[[list[dict[str, Any]]], Table]
) -> int:
    """Run a study's sweep (``osbench sweep``, ``osbench serve sweep``): resumable, locally or on
    Dask, then its figure, and its results as a table (``table(results)``)."""
    spec = existing(args.spec, "sweep spec")
    output_file("--out", args.out)
    figure = output_file("--figure", args.figure) if args.figure is not None else Path(args.out).with_suffix(".png")
    say = progress()
    executor = None if args.dask is None else ("dask" if args.dask == "local" else args.dask)
    results = study.run(
        spec,
        args.out,
        executor=executor,
        workers=args.workers,
        progress=lambda done, total: say(f"[{done}/{total}] cells done"),
    )
    try:
        study.figure(results, figure)
        drawn = f" and {drawn_as} to {figure}"
    except MissingDependency as exc:  # the results stand without their figure
        drawn = f" (no figure: {exc})"
    if args.json:
        print(json.dumps(results))
    else:
        print_table(table(results))
    say(f"wrote {len(results)} results to {args.out}{drawn}")
    return 0


def command_group(sub: Subcommands, name: str, help: str, epilog: str) -> Subcommands:
    """A command with subcommands of its own (``osbench sched simulate``...): the subparsers to
    add them to."""
    group = sub.add_parser(name, help=help, epilog=epilog)
    return group.add_subparsers(dest=f"{name}_command", required=True)


def sole_command(
    sub: Subcommands, group: str, help: str, name: str, command_help: str, epilog: str
) -> argparse.ArgumentParser:
    """The parser of ``osbench GROUP NAME`` where NAME is the group's one subcommand (``osbench mem
    alloc``): the group's page and the subcommand's show the same example, ``epilog``."""
    return command_group(sub, group, help, epilog).add_parser(name, help=command_help, epilog=epilog)


def topics(package: ModuleType) -> list[ModuleType]:
    """The command modules of a package (``osbench.cli``, ``osbench.cli.serve``), in their
    ``ORDER`` (their place in ``--help``): every module not starting with ``_``. Each has
    ``add_commands(sub)``, so that a new command is one new module; a top-level one also has its
    ``HELP`` line, and imports what it runs lazily (``osbench.cache`` on first use), so that
    listing it costs nothing."""
    found = [
        importlib.import_module(f"{package.__name__}.{m.name}")
        for m in pkgutil.iter_modules(package.__path__)
        if not m.name.startswith("_")
    ]
    return sorted(found, key=lambda m: m.ORDER)


@contextmanager
def native_bars() -> Iterator[None]:
    """A tqdm bar on stderr for each long native call made inside (``osbench.progress``: a
    replay, a curve, a simulation, a generated trace...), when stderr is a terminal and not
    --quiet; nothing otherwise."""
    if QUIET or not sys.stderr.isatty():
        yield
        return
    from tqdm import tqdm  # type: ignore[import-untyped]

    bars: dict[str, Any] = {}

    def hook(task: str, done: int, total: Optional[int]) -> None:
        bar = bars.get(task)
        if bar is None or done < bar.n:  # a new call of the same task starts from 0
            if bar is not None:
                bar.close()
            bar = bars[task] = tqdm(total=total, desc=task, unit="", unit_scale=True, leave=False, file=sys.stderr)
        bar.update(done - bar.n)

    try:
        with osbench.progress.reporting(hook):
            yield
    finally:
        for bar in bars.values():
            bar.close()


def print_table(table: Table) -> None:
    """A result table on stdout, through the one formatter."""
    print(table.to_text())
