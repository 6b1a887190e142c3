"""The ``osbench`` command line (also ``python -m osbench``).

One module per topic (``lecture``, ``report``, ``host``, ``sched``, ``mem``, ``radix``, ``serve``,
``datasets``, ``sweep``, ``cache``), each adding its own subcommands with ``add_commands`` at its
place in ``--help`` (``ORDER``): a new flag is an edit in its topic's module, a new command one
new module.

Errors a user can cause (a missing file, a bad trace, an unknown policy: an
:class:`~osbench.errors.OsbenchError` or an ``OSError``) print one line and exit with status 2;
there is no traceback. Any other exception is a bug and keeps its traceback. Ctrl-C exits with
status 130.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from collections.abc import Sequence
from types import FrameType
from typing import Optional, TextIO, Union

from osbench import _native, _startup
from osbench._optional import install_hint
from osbench.cli import _common
from osbench.cli._common import Parser, UserError, topics
from osbench.errors import OsbenchError


def parser(argv: Optional[Sequence[str]] = None) -> argparse.ArgumentParser:
    """The command line's parser. Given the arguments it is for, only the command they name is
    built in full (the others are their line in ``--help``): a command does not pay for
    importing every topic."""
    chosen = next((a for a in argv if not a.startswith("-")), None) if argv is not None else None
    top = Parser(prog="osbench", description="The OS ideas behind LLM inference, runnable, exact and fast.")
    top.add_argument("--version", action="version", version=f"osbench {_native.__version__}")
    top.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    sub = top.add_subparsers(dest="command", required=True)
    for topic in topics(sys.modules[__name__]):
        name = topic.__name__.rpartition(".")[2]
        if argv is None or name == chosen:
            topic.add_commands(sub)
        else:
            sub.add_parser(name, help=topic.HELP)
    return top


def _warning(
    message: Union[Warning, str],
    category: type[Warning],
    filename: str,
    lineno: int,
    file: Optional[TextIO] = None,
    line: Optional[str] = None,
) -> None:
    """A warning on the command line: one line, without the source line that raised it."""
    print(f"osbench: warning: {message}", file=sys.stderr)


class _CtrlC:
    """Ctrl-C as a KeyboardInterrupt, remembered: a Ctrl-C that lands inside the C code of an
    import (numpy's, importing datetime) comes out as that import's ImportError instead."""

    seen = False

    @classmethod
    def handler(cls, signum: int, frame: Optional[FrameType]) -> None:
        cls.seen = True
        raise KeyboardInterrupt


def main(argv: Optional[Sequence[str]] = None) -> int:
    try:
        return _run(argv)
    except Exception:
        if _CtrlC.seen:  # the error a Ctrl-C became: still a Ctrl-C
            print("osbench: interrupted", file=sys.stderr)
            return 130
        raise


def _run(argv: Optional[Sequence[str]]) -> int:
    try:
        _startup.hand_over(_CtrlC.handler)  # from here on Ctrl-C is a KeyboardInterrupt, answered below
        warnings.showwarning = _warning
        argv = sys.argv[1:] if argv is None else list(argv)
        args = parser(argv).parse_args(argv)
        _common.QUIET = args.quiet
        with _common.native_bars():
            return int(args.func(args))
    except BrokenPipeError:  # e.g. `osbench lecture all | head`: the reader left, not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except (OsbenchError, OSError) as exc:  # refused input, missing files: one line; a bug keeps its traceback
        print(f"osbench: error: {exc}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as exc:  # a package osbench needs is not installed (osbench's own: a bug)
        package = (exc.name or "").split(".")[0]
        if not package or package == "osbench":
            raise
        print(f"osbench: error: {package} is not installed: {install_hint(package)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("osbench: interrupted", file=sys.stderr)
        return 130


__all__ = ["UserError", "main", "parser"]

if __name__ == "__main__":
    sys.exit(main())
