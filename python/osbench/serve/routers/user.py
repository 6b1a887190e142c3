"""A user's routing rule: any callable ``rule(request, replicas) -> replica index``, given the
:class:`~osbench.serve.routers.base.Request` and one :class:`~osbench.serve.routers.base.
Replica` per replica (what a router sees, :mod:`osbench.serve.routers.base`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Callable

from osbench.serve.routers.base import Replica, Request, Router


class UserRouter(Router):
    """Routes with ``rule``; a rule that keeps state keeps it itself."""

    name = "user"

    def __init__(self, rule: Callable[[Request, Sequence[Replica]], int]) -> None:
        self.rule = rule

    def route(self, request: Request, replicas: Sequence[Replica]) -> int:
        return self.rule(request, replicas)  # checked by the loop, as every router's answer is

    def __repr__(self) -> str:
        return f"UserRouter({getattr(self.rule, '__qualname__', repr(self.rule))})"
