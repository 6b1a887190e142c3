"""Routers: which replica serves each request (:mod:`osbench.serve.cluster`), one file per
rule. :data:`ROUTERS` names them; ``router=`` takes a name, a :class:`Router` (to set its
parameters: ``PrefixAware(cache_threshold=0.5)``, ``Random(seed=3)``) or any callable
``rule(request, replicas) -> index``. What a router sees, and when: :mod:`osbench.serve.
routers.base`.
"""

from __future__ import annotations

from typing import Any

from osbench import _native
from osbench.errors import ArgumentError, ArgumentTypeError
from osbench.serve.routers.base import Replica, Request, Router
from osbench.serve.routers.kv_aware import KVAware
from osbench.serve.routers.least_requests import LeastRequests
from osbench.serve.routers.least_tokens import LeastTokens
from osbench.serve.routers.prefix_aware import PrefixAware
from osbench.serve.routers.random import Random
from osbench.serve.routers.round_robin import RoundRobin
from osbench.serve.routers.user import UserRouter

_CLASSES: dict[str, type[Router]] = {
    cls.name: cls for cls in (RoundRobin, Random, LeastRequests, LeastTokens, PrefixAware, KVAware)
}
ROUTERS: dict[str, type[Router]] = {name: _CLASSES[name] for name in _native.SERVE_ROUTERS}
"""Every router by name, in the core's order (``rust/osbench-core/src/serve/routers/mod.rs:
ROUTERS``, each rule's twin there), each with its defaults (``random``: seed 0)."""


def router_of(router: Any) -> Router:
    """The router ``router=`` names: a name of :data:`ROUTERS`, a :class:`Router`, or a
    callable ``rule(request, replicas) -> index``."""
    if isinstance(router, str):
        if router not in ROUTERS:
            raise ArgumentError(f"router={router!r} is not accepted: use one of {', '.join(ROUTERS)}, or a callable")
        return ROUTERS[router]()
    if isinstance(router, Router):
        return router
    if callable(router) and not isinstance(router, type):
        return UserRouter(router)
    raise ArgumentTypeError(
        f"router={router!r:.60} is not accepted: use a name ({', '.join(ROUTERS)}), an osbench.serve.routers "
        "Router, or a callable rule(request, replicas) -> replica index"
    )


__all__ = [
    "ROUTERS",
    "KVAware",
    "LeastRequests",
    "LeastTokens",
    "PrefixAware",
    "Random",
    "Replica",
    "Request",
    "RoundRobin",
    "Router",
    "UserRouter",
    "router_of",
]
