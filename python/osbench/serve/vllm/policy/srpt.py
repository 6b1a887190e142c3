"""``srpt``: shortest (predicted) remaining processing time, on the predicted output length
less the tokens already generated (lecture sections 2.3 and 2.6); vLLM does not have it."""

from __future__ import annotations

from collections.abc import Sequence

from osbench.serve.vllm.queue import KeyedQueue, largest
from osbench.serve.vllm.request import Request


class Srpt:
    """By predicted remaining output, ``max(predicted - generated, 0)`` tokens (a request that
    outlives its prediction counts as about to finish), then arrival, then index. It replaces
    the same two vLLM rules as ``sjf``: the waiting queue is a heap by that key (a preempted
    request, which keeps its generated tokens, goes back in by it), and a full pool preempts
    the running request of the largest key, index included (no ties; see ``sjf``). A waiting
    request generates nothing, so its key holds while it waits; running requests keep
    admission order."""

    name = "srpt"

    @staticmethod
    def rank(r: Request) -> tuple[int, float]:
        return (max(r.predicted - r.num_output_tokens, 0), r.arrival)

    def queue(self) -> KeyedQueue:
        return KeyedQueue(self.rank)

    def victim(self, running: Sequence[Request]) -> int:
        return largest(running, lambda r: (*self.rank(r), r.index))
