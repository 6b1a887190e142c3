"""``kv-aware``: the replica expected to keep the most free KV after admitting the request,
as llm-d's KV-cache utilisation scorer prefers the emptier pool: its free blocks at its last
report, less the blocks the prompts routed there since need (the report cannot show them),
less the blocks this prompt needs (``ceil(prompt_len / block_size)``); ties go to the fewer
outstanding requests, then to the lowest index."""

from __future__ import annotations

from collections.abc import Sequence

from osbench.serve.routers.base import Replica, Request, Router


def expected_free(replica: Replica, request: Request) -> int:
    """Blocks ``replica`` is expected to keep free once ``request`` is admitted (negative:
    it would wait or preempt)."""
    need = -(-request.prompt_len // replica.block_size)
    return replica.free_blocks - replica.unreported_blocks - need


class KVAware(Router):
    """The most free KV expected after admission."""

    name = "kv-aware"

    def route(self, request: Request, replicas: Sequence[Replica]) -> int:
        return min(
            range(len(replicas)),
            key=lambda k: (-expected_free(replicas[k], request), replicas[k].outstanding, k),
        )
