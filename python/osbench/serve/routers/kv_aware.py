"""``kv-aware``: the replica expected to keep the most free KV after admitting the request.
llm-d's scheduler (the Gateway API Inference Extension's endpoint picker) scores a replica by
its reported KV usage, ``1 - KVCacheUsagePercent`` (``pkg/epp/scheduling/framework/plugins/
scorer/kvcache_utilization.go: KVCacheUtilizationScorer.Score``), preferring the emptier pool;
this rule counts in blocks and looks ahead to the admission: the replica's free blocks at its
last report, less the blocks the requests queued ahead of this one will take when admitted,
less the blocks this prompt needs (``ceil(prompt_len / block_size)``). Queued ahead: the prompts
routed there since the report (their blocks, which the report cannot show), and the requests the
report shows waiting (vLLM allocates a prompt's blocks as its chunks are scheduled, so a waiting
request holds none yet), each counted at the mean prompt's blocks of the requests routed so far
(the router knows how many wait, not which). Ties go to the fewer outstanding requests, then to
the lowest index. Used alone, as here (llm-d weighs it with a queue and a prefix scorer).

Why the waiting queue counts: without it, on Mooncake's conversation trace at 8 replicas
(``osbench.serve.cluster_study``), where KV never binds (a quarter of the pool in use on average,
no preemption) and prefill time does, a report that shows a long prompt waiting drops it from
the score, and the rule sent each request to a replica with on average 9.3 more outstanding
requests than the least loaded (41 at the p99), for a p99 TTFT of 8.58 s against least-requests'
3.23 s; with it, 3.31 s."""

from __future__ import annotations

from collections.abc import Sequence

from osbench.serve.requests import Requests
from osbench.serve.routers.base import Replica, Request, Router


def expected_free(replica: Replica, request: Request, mean_blocks: int) -> int:
    """Blocks ``replica`` is expected to keep free once ``request`` is admitted, each request
    waiting at its last report taking ``mean_blocks`` (negative: it would wait or preempt)."""
    need = -(-request.prompt_len // replica.block_size)
    return replica.free_blocks - replica.unreported_blocks - replica.num_waiting * mean_blocks - need


class KVAware(Router):
    """The most free KV expected after admission."""

    name = "kv-aware"

    def __init__(self) -> None:
        self.start(0, Requests([], [], []), 1)

    def start(self, replicas: int, requests: Requests, block_size: int) -> None:
        self.prompt_tokens = 0
        self.routed = 0

    def route(self, request: Request, replicas: Sequence[Replica]) -> int:
        self.prompt_tokens += request.prompt_len
        self.routed += 1
        per = self.routed * replicas[0].block_size
        mean_blocks = -(-self.prompt_tokens // per)  # the mean prompt of those routed so far, in blocks, rounded up
        return min(
            range(len(replicas)),
            key=lambda k: (-expected_free(replicas[k], request, mean_blocks), replicas[k].outstanding, k),
        )
