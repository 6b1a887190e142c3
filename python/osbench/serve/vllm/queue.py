"""vLLM's waiting queues (``vllm/v1/core/sched/request_queue.py``)."""

from __future__ import annotations

import heapq
from collections import deque

from osbench.serve.vllm.request import Request


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


class PriorityQueue:
    """``core/sched/request_queue.py: PriorityRequestQueue``: a heap by ``Request.sort_key``;
    a preempted request simply goes back in by its key."""

    def __init__(self) -> None:
        self._heap: list[tuple[tuple[int, float, int], Request]] = []

    def __len__(self) -> int:
        return len(self._heap)

    def add_request(self, request: Request) -> None:
        heapq.heappush(self._heap, (request.sort_key, request))

    prepend_request = add_request

    def peek_request(self) -> Request:
        return self._heap[0][1]

    def pop_request(self) -> Request:
        return heapq.heappop(self._heap)[1]
