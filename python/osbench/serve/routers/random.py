"""``random``: each request to a replica drawn uniformly, seeded, the same in every run and
in both engines: request ``i`` goes to ``mix64(mix64(seed) ^ i) mod N`` (splitmix64's
finaliser, :func:`osbench.serve.hashing.mix64`; its bias, under N / 2**64, is nil here)."""

from __future__ import annotations

from collections.abc import Sequence

from osbench import _checks
from osbench.errors import ArgumentError
from osbench.serve.hashing import mix64
from osbench.serve.routers.base import Replica, Request, Router


class Random(Router):
    """A uniform random replica for each request, from ``seed`` (a non-negative integer)."""

    name = "random"

    def __init__(self, seed: int = 0) -> None:
        self.seed = _checks.non_negative_int("seed", seed)
        if self.seed >= 2**64:
            raise ArgumentError(f"seed={seed!r} is not accepted: it must be below 2**64")
        self._key = mix64(self.seed)

    def route(self, request: Request, replicas: Sequence[Replica]) -> int:
        return mix64(self._key ^ request.index) % len(replicas)

    def __repr__(self) -> str:
        return f"Random(seed={self.seed})"
