"""The scheduling policy (``config/scheduler.py: SchedulerConfig.policy``,
``core/sched/request_queue.py: SchedulingPolicy``): the order of the waiting queue, where a
preempted request goes back in it, and which running request a full pool preempts. One module
per policy: vLLM's :mod:`~osbench.serve.vllm.policy.fcfs` and
:mod:`~osbench.serve.vllm.policy.priority` (with aging), and
:mod:`~osbench.serve.vllm.policy.sjf`, :mod:`~osbench.serve.vllm.policy.srpt`,
:mod:`~osbench.serve.vllm.policy.mlfq`, which vLLM does not have. Each runs through vLLM's
loop otherwise unchanged; its docstring says which of vLLM's rules it replaces."""

from __future__ import annotations

from typing import Union

from osbench.serve.vllm.config import EngineConfig
from osbench.serve.vllm.policy.fcfs import Fcfs
from osbench.serve.vllm.policy.mlfq import Mlfq
from osbench.serve.vllm.policy.priority import Priority
from osbench.serve.vllm.policy.sjf import Sjf
from osbench.serve.vllm.policy.srpt import Srpt

Policy = Union[Fcfs, Priority, Sjf, Srpt, Mlfq]

PREDICTED = ("sjf", "srpt")
"""The policies that read the predicted output lengths."""


def policy_of(config: EngineConfig) -> Policy:
    """The policy ``config.policy`` names, with its parameters."""
    name = config.policy
    if name == "priority":
        return Priority(config.aging)
    if name == "sjf":
        return Sjf()
    if name == "srpt":
        return Srpt()
    if name == "mlfq":
        return Mlfq(config.mlfq_levels, config.mlfq_quantum, config.mlfq_growth, config.mlfq_boost)
    return Fcfs()


__all__ = ["PREDICTED", "Fcfs", "Mlfq", "Policy", "Priority", "Sjf", "Srpt", "policy_of"]
