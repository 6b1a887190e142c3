"""``osbench serve``: LLM serving, one module per subcommand (``simulate``, ``plan``, ``sweep``, ``validate``, ``crosscheck``)."""

from __future__ import annotations

import sys

from osbench.cli._common import Subcommands, command_group, topics

ORDER = 70
HELP = "LLM serving: continuous batching, paged KV cache, prefix caching"


def add_commands(sub: Subcommands) -> None:
    serve_sub = command_group(
        sub, "serve", HELP, "example: osbench serve simulate --poisson 2000,10 --slo-ttft 2 --slo-tpot 0.1"
    )
    for module in topics(sys.modules[__name__]):
        module.add_commands(serve_sub)
