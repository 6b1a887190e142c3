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
from collections.abc import Sequence
from typing import Optional

from osbench import _native
from osbench.cli._common import Parser, UserError, topics
from osbench.errors import OsbenchError


def parser() -> argparse.ArgumentParser:
    top = Parser(prog="osbench", description="The OS ideas behind LLM inference, runnable, exact and fast.")
    top.add_argument("--version", action="version", version=f"osbench {_native.__version__}")
    sub = top.add_subparsers(dest="command", required=True)
    for topic in topics(sys.modules[__name__]):
        topic.add_commands(sub)
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


__all__ = ["UserError", "main", "parser"]

if __name__ == "__main__":
    sys.exit(main())
