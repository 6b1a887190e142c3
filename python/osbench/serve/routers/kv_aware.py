"""``kv-aware``: the replica expected to keep the most free KV after admitting the request.
llm-d's scheduler (the Gateway API Inference Extension's endpoint picker) scores a replica by
its reported KV usage, ``1 - KVCacheUsagePercent`` (``pkg/epp/scheduling/framework/plugins/
scorer/kvcache_utilization.go: KVCacheUtilizationScorer.Score``), preferring the emptier pool;
this rule counts in blocks and looks ahead to the admission: the replica's free blocks at its
last report, less the blocks the prompts routed there since need (the report cannot show them),
less the blocks this prompt needs (``ceil(prompt_len / block_size)``). Ties go to the fewer
outstanding requests, then to the lowest index. Used alone, as here (llm-d weighs it with a
queue and a prefix scorer)."""

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
