"""``fcfs``: vLLM's first come first served (``request_queue.py: FCFSRequestQueue``,
``scheduler.py: Scheduler.schedule``'s ``self.running.pop()``)."""

from __future__ import annotations

from collections.abc import Sequence

from osbench.serve.vllm.queue import FCFSQueue
from osbench.serve.vllm.request import Request


class Fcfs:
    """Waiting requests leave in arrival order; a full pool preempts the last running request,
    which goes back to the front of the waiting queue. vLLM's rules, none replaced."""

    name = "fcfs"

    def queue(self) -> FCFSQueue:
        return FCFSQueue()

    def victim(self, running: Sequence[Request]) -> int:
        return len(running) - 1
