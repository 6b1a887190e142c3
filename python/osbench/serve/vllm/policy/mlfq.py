"""``mlfq``: a multi-level feedback queue on attained service in tokens (lecture section 2.4;
Autellix's PLAS for single requests); vLLM does not have it."""

from __future__ import annotations

from collections.abc import Sequence

from osbench.serve.vllm.queue import KeyedQueue, largest
from osbench.serve.vllm.request import Request


class Mlfq:
    """Levels ``0 .. levels - 1``; level ``k`` holds ``quantum * growth**k`` tokens of attained
    service (output tokens generated since the last boost, ``num_output_tokens -
    service_base``), after which the request is demoted to level ``k + 1``; the last level
    keeps it. Rank: level, then arrival, then index (first come first served within a level).

    It replaces the same two vLLM rules as ``sjf``: the waiting queue is a heap by that key
    (a preempted request goes back in by it), and a full pool preempts the running request of
    the largest key (the lowest level, latest arrival), the first such in running order.
    Running requests keep admission order. The boost (``boost`` steps, 0: none): at the start
    of every step whose number (from 0) is a positive multiple of ``boost``, every request's
    service counts from zero again (all return to level 0), so that long requests sunk to the
    last level are not starved (Autellix's starvation guard, periodic as in OSTEP's MLFQ)."""

    name = "mlfq"

    def __init__(self, levels: int, quantum: int, growth: int, boost: int) -> None:
        self.levels, self.quantum, self.growth, self.boost = levels, quantum, growth, boost

    def level(self, attained: int) -> int:
        """The level of a request with ``attained`` tokens of service."""
        bound, quantum = 0, self.quantum
        for k in range(self.levels - 1):
            bound += quantum
            if attained < bound:
                return k
            quantum *= self.growth
        return self.levels - 1

    def rank(self, r: Request) -> tuple[int, float]:
        return (self.level(r.num_output_tokens - r.service_base), r.arrival)

    def queue(self) -> KeyedQueue:
        return KeyedQueue(self.rank)

    def victim(self, running: Sequence[Request]) -> int:
        return largest(running, lambda r: (*self.rank(r), r.index))

    def boost_due(self, step: int) -> bool:
        """Whether step ``step`` (from 0) starts with a boost."""
        return self.boost > 0 and step > 0 and step % self.boost == 0
