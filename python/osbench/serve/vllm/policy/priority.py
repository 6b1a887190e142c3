"""``priority``: vLLM's priority scheduling (``request_queue.py: PriorityRequestQueue``,
``scheduler.py: Scheduler.schedule``'s ``max(self.running, key=lambda r: (r.priority,
r.arrival_time))``), with optional aging (lecture section 2.7), which vLLM does not have."""

from __future__ import annotations

from collections.abc import Sequence

from osbench.serve.vllm.queue import KeyedQueue, largest
from osbench.serve.vllm.request import Request


class Priority:
    """By priority (smaller first), then arrival, then index: the waiting queue is a heap by
    that key, a full pool preempts the running request of the largest ``(priority, arrival)``
    (the first such in running order), and a preempted request goes back in by its key.

    Aging: waiting buys priority at ``aging`` per second, so a request that reached the engine
    at ``arrival`` stands at ``priority - aging * (now - arrival)``. Every request ages at the
    same rate, so at any ``now`` they order as ``priority + aging * arrival`` does: the rank
    is that float, then vLLM's key. It replaces one vLLM rule, the key of the heap and of the
    victim; ``aging=0`` is vLLM's order exactly (the float only repeats the integer's order,
    and ties between large priorities it rounds together fall to the integer)."""

    name = "priority"

    def __init__(self, aging: float) -> None:
        self.aging = aging

    def rank(self, r: Request) -> tuple[float, int, float]:
        return (float(r.priority) + self.aging * r.arrival, r.priority, r.arrival)

    def queue(self) -> KeyedQueue:
        return KeyedQueue(self.rank)

    def victim(self, running: Sequence[Request]) -> int:
        return largest(running, self.rank)
