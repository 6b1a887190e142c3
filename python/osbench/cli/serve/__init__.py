"""``osbench serve``: LLM serving, one module per subcommand (``simulate``, ``sweep``)."""

from __future__ import annotations

import sys

from osbench.cli._common import Subcommands, topics

ORDER = 70
HELP = "LLM serving: continuous batching, paged KV cache, prefix caching"
"""This command's line in ``osbench --help``."""


def add_commands(sub: Subcommands) -> None:
    serve_p = sub.add_parser(
        "serve", help=HELP, epilog="example: osbench serve simulate --poisson 2000,10 --slo-ttft 2 --slo-tpot 0.1"
    )
    serve_sub = serve_p.add_subparsers(dest="serve_command", required=True)
    for module in topics(sys.modules[__name__]):
        module.add_commands(serve_sub)
