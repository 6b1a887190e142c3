"""What a router is and what it sees (:mod:`osbench.serve.routers`).

A router picks, for each request as it arrives, the replica that serves it. It sees what a
real router in front of engines can see, at that instant (the request's arrival, or the time
it is sent under closed-loop clients):

- its own book of what it routed: per replica, the requests it sent there that have not
  finished yet (``outstanding``: a request is done when its last token came out, at or before
  the instant) and their tokens (``tokens``: prompt plus output, the output length being the
  request's ``max_tokens`` as a benchmark client sends it);
- each replica's last report: the figures of its last step that ended at or before the
  instant (KV blocks held after that step's allocations, requests left waiting, requests in
  the step), as an engine publishes its scheduler statistics with each step's output; a step
  in progress shows nothing yet;
- the KV blocks the prompts need of the requests routed to a replica after its reported step
  was scheduled (``unreported_blocks``: the report cannot show them yet);
- the request itself (arrival, prompt and output lengths) and, to a router that keeps one, its
  own approximate record of the prompts it routed where (:class:`~osbench.serve.routers.
  prefix_aware.PrefixAware`); never the replicas' caches themselves.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from osbench.serve.requests import Requests


@dataclass(frozen=True)
class Request:
    """The request being routed."""

    index: int
    """Its index in the requests."""
    arrival: float
    """When it is routed (sent)."""
    prompt_len: int
    output_len: int


@dataclass(frozen=True)
class Replica:
    """One replica as the router sees it when a request arrives (see the module)."""

    index: int
    outstanding: int
    """Requests routed here and not finished."""
    tokens: int
    """Prompt plus output tokens of those requests."""
    blocks_used: int
    """KV blocks held after the allocations of its last reported step (0 before any)."""
    num_waiting: int
    """Requests left waiting by that step."""
    num_running: int
    """Requests in that step."""
    unreported_blocks: int
    """KV blocks the prompts of the requests routed here since that step was scheduled need."""
    usable_blocks: int
    """Its KV pool, in blocks a request can hold."""
    block_size: int
    """Tokens per KV block."""

    @property
    def free_blocks(self) -> int:
        """Blocks free at its last report (cached content no request holds included)."""
        return self.usable_blocks - self.blocks_used


class Router(abc.ABC):
    """A routing rule. :meth:`start` is called once before a run (a router keeps state from
    request to request, such as a round-robin counter or a prefix record, and starts afresh
    there); :meth:`route` once per request, in arrival order."""

    name: ClassVar[str] = "router"

    def start(self, replicas: int, requests: Requests, block_size: int) -> None:
        """Forget every earlier run: ``replicas`` engines will serve ``requests``, each with
        KV blocks of ``block_size`` tokens."""
        return  # a router without state has nothing to forget

    @abc.abstractmethod
    def route(self, request: Request, replicas: Sequence[Replica]) -> int:
        """The index of the replica that serves ``request``."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def least(replicas: Sequence[Replica], key: str) -> int:
    """The replica of the smallest ``key`` attribute, the lowest index on ties."""
    return min(range(len(replicas)), key=lambda k: (getattr(replicas[k], key), k))
