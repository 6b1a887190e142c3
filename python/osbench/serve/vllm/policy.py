"""vLLM's scheduling policies: the preemption victim and the queue that takes it back."""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import Union

from osbench.serve.vllm.queue import FCFSQueue, PriorityQueue
from osbench.serve.vllm.request import Request


class Policy(enum.Enum):
    """The scheduling policy (``config/scheduler.py: SchedulerConfig.policy``,
    ``core/sched/request_queue.py: SchedulingPolicy``): which running request a full pool
    preempts, and the waiting queue that takes it back."""

    FCFS = "fcfs"
    """Preempt the last running request; a preempted request goes back to the front of the
    waiting queue (:class:`FCFSQueue`)."""
    PRIORITY = "priority"
    """Preempt the running request of the largest ``(priority, arrival)``, the first such in
    running order (``Scheduler.schedule``'s ``max(self.running, key=...)``); a preempted request
    goes back in by its key (:class:`PriorityQueue`)."""

    def queue(self) -> Union[FCFSQueue, PriorityQueue]:
        """The waiting queue of the policy (``request_queue.py: create_request_queue``); its
        ``prepend_request`` requeues a preempted request."""
        return PriorityQueue() if self is Policy.PRIORITY else FCFSQueue()

    def victim(self, running: Sequence[Request]) -> int:
        """The position in ``running`` (not empty) of the request to preempt."""
        if self is Policy.PRIORITY:
            return max(range(len(running)), key=lambda k: (running[k].priority, running[k].arrival))
        return len(running) - 1
