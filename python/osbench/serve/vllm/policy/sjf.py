"""``sjf``: shortest (predicted) job first, on the predicted output length (lecture section
2.3); vLLM does not have it."""

from __future__ import annotations

from collections.abc import Sequence

from osbench.serve.vllm.queue import KeyedQueue, largest
from osbench.serve.vllm.request import Request


class Sjf:
    """By predicted output length (``Request.predicted``, :mod:`osbench.serve.vllm.prediction`),
    then arrival, then index. It replaces two of vLLM's rules: the waiting queue is a heap by
    that key (instead of arrival order; a preempted request goes back in by its key, not to
    the front), and a full pool preempts the running request of the largest key, index
    included (instead of the last running one). With the index, no two requests tie for the
    victim: among equals the one that came last goes, as under ``fcfs``, rather than the first
    in running order as vLLM's ``priority`` picks, which lets tied requests preempt one
    another forever. Running requests keep admission order,
    and everything else is vLLM's loop: a batch server does not stop a running request for a
    shorter arrival, it only admits the shortest first and evicts the longest first."""

    name = "sjf"

    @staticmethod
    def rank(r: Request) -> tuple[int, float]:
        return (r.predicted, r.arrival)

    def queue(self) -> KeyedQueue:
        return KeyedQueue(self.rank)

    def victim(self, running: Sequence[Request]) -> int:
        return largest(running, lambda r: (*self.rank(r), r.index))
