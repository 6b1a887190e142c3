"""Ctrl-C during start-up. Installed by ``osbench/__init__.py`` before anything else of osbench
is imported (this module uses the standard library only): while the ``osbench`` command is still importing, before
:func:`osbench.cli.main` takes over, Ctrl-C ends it with status 130 and one line, as it does
later, instead of a traceback from inside an import. Any other program that imports osbench
keeps its own Ctrl-C."""

from __future__ import annotations

import os
import signal
import sys
from types import FrameType
from typing import Any, Callable, Optional


def _interrupted(signum: int, frame: Optional[FrameType]) -> None:
    sys.stderr.write("osbench: interrupted\n")
    sys.stderr.flush()
    os._exit(130)


def is_the_command() -> bool:
    """This process is the ``osbench`` command (the console script or ``python -m osbench``)."""
    program = sys.argv[0] if sys.argv else ""
    return os.path.basename(program) == "osbench" or program.endswith(os.path.join("osbench", "__main__.py"))


def install() -> None:
    """In the ``osbench`` command, and while Ctrl-C is still Python's default: exit 130 on it."""
    if is_the_command() and signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _interrupted)


def hand_over(handler: Callable[[int, Optional[FrameType]], Any]) -> None:
    """In the ``osbench`` command, Ctrl-C goes to ``handler`` from here on, unless it is
    ignored: a command started with SIGINT ignored (``nohup``, a background job of a shell
    without job control) keeps ignoring it throughout, as Python itself leaves it, rather than
    losing a Ctrl-C during start-up and answering one later."""
    if is_the_command() and signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        signal.signal(signal.SIGINT, handler)
