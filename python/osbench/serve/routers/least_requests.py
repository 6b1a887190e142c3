"""``least-requests``: the replica with the fewest outstanding requests (routed there and not
finished), the lowest index on ties: the shortest-queue rule of SGLang's router when its load
is imbalanced (``sgl-router/src/policies/cache_aware.rs: select_worker``, ``min_by_key`` of the
workers' ``load()``)."""

from __future__ import annotations

from collections.abc import Sequence

from osbench.serve.routers.base import Replica, Request, Router, least


class LeastRequests(Router):
    """The fewest outstanding requests."""

    name = "least-requests"

    def route(self, request: Request, replicas: Sequence[Replica]) -> int:
        return least(replicas, "outstanding")
