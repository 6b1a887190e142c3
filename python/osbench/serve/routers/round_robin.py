"""``round-robin``: request ``i`` goes to replica ``i mod N`` (counting the requests routed)."""

from __future__ import annotations

from collections.abc import Sequence

from osbench.serve.requests import Requests
from osbench.serve.routers.base import Replica, Request, Router


class RoundRobin(Router):
    """Each replica in turn, whatever their load."""

    name = "round-robin"

    def __init__(self) -> None:
        self.routed = 0

    def start(self, replicas: int, requests: Requests, block_size: int) -> None:
        self.routed = 0

    def route(self, request: Request, replicas: Sequence[Replica]) -> int:
        k = self.routed % len(replicas)
        self.routed += 1
        return k
