"""``kv-aware``: the replica expected to keep the most free KV after admitting the request.
llm-d's scheduler (the Gateway API Inference Extension's endpoint picker) scores a replica by
its reported KV usage, ``1 - KVCacheUsagePercent`` (``pkg/epp/scheduling/framework/plugins/
scorer/kvcache_utilization.go: KVCacheUtilizationScorer.Score``), preferring the emptier pool;
this rule counts in blocks and looks ahead to the admission: the replica's free blocks at its
last report, less the blocks the prompts routed there since need (the report cannot show them),
less the blocks this prompt needs (``ceil(prompt_len / block_size)``). Ties go to the fewer
outstanding requests, then to the lowest index. Used alone, as here (llm-d weighs it with a
queue and a prefix scorer).

Why it does worst on Mooncake's conversation trace at 8 replicas (``osbench.serve.
cluster_study``): a request waiting in a replica's queue holds no KV block (vLLM allocates a
prompt's blocks as its chunks are scheduled), so once a report shows it waiting its prompt drops
out of this score. There, KV never binds (a quarter of the pool in use on average, no preemption)
and prefill time does: the score sees free blocks where a queue of long prompts waits, and sends
to the replica with on average 9.3 more outstanding requests than the least loaded (41 at the
p99). The same rule counting the reported queue (``num_waiting`` times the mean prompt's blocks
so far, as a rule of one's own can) brings its p99 TTFT from 8.58 s to 3.31 s, least-requests'
3.23 s: the queue, not the KV, is what this trace's load is."""

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
