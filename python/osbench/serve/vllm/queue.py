"""vLLM's waiting queues (``vllm/v1/core/sched/request_queue.py``), and the keyed queue every
policy but ``fcfs`` orders its waiting requests with."""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Sequence
from typing import Callable

from osbench.serve.vllm.request import Request

Rank = Callable[[Request], tuple]
"""A policy's order: smaller ranks leave the waiting queue first, the largest running rank is
preempted. Ranks hold numbers only, and a request's rank does not change while it waits (a
periodic boost re-keys the queue, :meth:`KeyedQueue.rekey`)."""


class FCFSQueue:
    """``core/sched/request_queue.py: FCFSRequestQueue``: arrival order; preempted requests go
    back to the front."""

    def __init__(self) -> None:
        self._queue: deque[Request] = deque()

    def __len__(self) -> int:
        return len(self._queue)

    def add_request(self, request: Request) -> None:
        self._queue.append(request)

    def prepend_request(self, request: Request) -> None:
        self._queue.appendleft(request)

    def peek_request(self) -> Request:
        return self._queue[0]

    def pop_request(self) -> Request:
        return self._queue.popleft()

    def in_order(self) -> list[Request]:
        """The waiting requests in the order they will leave."""
        return list(self._queue)


class KeyedQueue:
    """A heap by ``rank(request) + (index,)``: ``core/sched/request_queue.py:
    PriorityRequestQueue`` when the rank is ``priority``'s (a heap by ``Request.__lt__``); a
    preempted request simply goes back in by its key."""

    def __init__(self, rank: Rank) -> None:
        self.rank = rank
        self._heap: list[tuple[tuple, Request]] = []

    def __len__(self) -> int:
        return len(self._heap)

    def add_request(self, request: Request) -> None:
        heapq.heappush(self._heap, ((*self.rank(request), request.index), request))

    prepend_request = add_request

    def peek_request(self) -> Request:
        return self._heap[0][1]

    def pop_request(self) -> Request:
        return heapq.heappop(self._heap)[1]

    def in_order(self) -> list[Request]:
        """The waiting requests in the order they will leave."""
        return [r for _, r in sorted(self._heap, key=lambda entry: entry[0])]

    def rekey(self) -> None:
        """Rank every waiting request anew (after a periodic boost changed their ranks)."""
        self._heap = [((*self.rank(r), r.index), r) for _, r in self._heap]
        heapq.heapify(self._heap)


def largest(running: Sequence[Request], rank: Rank) -> int:
    """The position of the running request of the largest rank, the first such in running order
    (as ``max(self.running, key=...)`` picks it in ``Scheduler.schedule``)."""
    return max(range(len(running)), key=lambda k: rank(running[k]))
