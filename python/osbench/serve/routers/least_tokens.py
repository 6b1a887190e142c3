"""``least-tokens``: the replica with the fewest tokens queued and running (prompt plus
output tokens of its outstanding requests), the lowest index on ties."""

from __future__ import annotations

from collections.abc import Sequence

from osbench.serve.routers.base import Replica, Request, Router, least


class LeastTokens(Router):
    """The fewest outstanding tokens."""

    name = "least-tokens"

    def route(self, request: Request, replicas: Sequence[Replica]) -> int:
        return least(replicas, "tokens")
