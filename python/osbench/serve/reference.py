"""The serving engine as vLLM v1 runs it (vLLM 0.33.0, synchronous scheduling): the reference.

Lecture section 2.8: an inference engine is a batch server whose batch is bounded by the KV cache.
Each engine step,

1. the **scheduler** gives every running request, in running order, its next tokens (the rest of
   its prompt, a chunk of it, or its one next token) within the step's token budget;
2. the **KV cache manager** finds blocks for them; when the pool is full it **preempts** a
   request (frees its blocks, resets its progress: it will be recomputed) and tries again;
3. if nothing was preempted, waiting requests are **admitted** in queue order, each first looking
   its prompt up in the **prefix cache** (blocks other requests computed, kept until evicted);
4. the model runs the batch; every request whose tokens are all computed gets one output token;
   finished requests free their blocks.

Each class mirrors one vLLM component and each rule cites the vLLM function it follows, as
``file: function``, paths under ``vllm/v1/``. The native engine is held to this one step for step,
so the order of every loop and every tie-break below is part of the contract:

- the running list keeps admission order; preemption takes its last request (``fcfs``) or the
  least urgent one, largest ``(priority, arrival)``, the first such in running order
  (``priority``); a preempted request goes back to the front of the waiting queue (``fcfs``) or
  to its place by ``(priority, arrival, index)`` (``priority``). The policies vLLM does not
  have (``sjf``, ``srpt``, ``mlfq``, and ``priority`` with ``aging``) replace only these two
  rules, with their own rank (:mod:`osbench.serve.vllm.policy`): the waiting queue is a heap by
  ``rank + (index,)`` and the victim is the running request of the largest ``rank + (index,)``
  (under ``priority`` with aging, the first one of the largest rank, as vLLM picks); ``mlfq``'s
  boost re-ranks at the start of every ``mlfq_boost``-th step;
- a request's blocks are freed last block first; a freed block holding a cached hash goes to the
  back of the free queue (so the least recently used content is evicted first, a prompt's tail
  before its head), one without to the front (it is reused first);
- a request's blocks are hashed as they are scheduled, chained over the prompt keys of
  :meth:`Requests.prompt_block_keys` and then over content private to the request (the trailing
  partial prompt block and the output tokens), with :func:`block_hash`; a prompt without content
  is not hashed: its blocks are keyed by a tag no hash equals (``vllm/request.py: private_tag``),
  as only the request itself can hit them (after a preemption);
- with ``preemption="swap"`` (vLLM v0's, not v1's) a preempted request's computed blocks go to a
  host pool and its progress is kept; readmitted, its whole block table comes back, without a
  prefix lookup, and the copies' time is added to the step; a full host pool recomputes
  (:mod:`osbench.serve.vllm.swap`);
- finished requests free their blocks in the order the step scheduled them;
- a run that cannot end is stopped (:class:`LivelockGuard`): under ``priority``, requests that
  tie on ``(priority, arrival)`` can preempt one another forever, as they would in vLLM.

Left out, as none of it changes the steps modelled here: speculative decoding, KV connectors,
LoRA, multimodal inputs, sliding windows. One thing does: vLLM 0.33.0 serves with asynchronous
scheduling unless told otherwise (``async_scheduling`` unset becomes true in
``vllm/config/vllm.py``), scheduling step N+1 while step N runs; this is its synchronous
``Scheduler``, as ``vllm serve --no-async-scheduling`` runs it.
"""

from __future__ import annotations

import math
from typing import Callable, Optional

import numpy as np

from osbench.serve.config import EngineConfig
from osbench.serve.drive import drive
from osbench.serve.hashing import ROOT_HASH, block_hash, private_content
from osbench.serve.requests import Requests
from osbench.serve.run import Concurrency, EngineRun, Recorder, StepTimeModel, check_concurrency, check_memory
from osbench.serve.vllm.block_pool import Block, BlockPool, FreeBlockQueue
from osbench.serve.vllm.checks import check_requests
from osbench.serve.vllm.kv_cache_manager import KVCacheManager, cdiv
from osbench.serve.vllm.policy import Policy, policy_of
from osbench.serve.vllm.prediction import predicted_output_len
from osbench.serve.vllm.queue import FCFSQueue, KeyedQueue
from osbench.serve.vllm.request import FINISHED, PREEMPTED, RUNNING, WAITING, Request
from osbench.serve.vllm.scheduler import Scheduler, StepPlan, engine_state, livelock_error
from osbench.serve.vllm.stepper import Stepper

__all__ = [
    "FINISHED",
    "PREEMPTED",
    "QUIET_STEPS",
    "ROOT_HASH",
    "RUNNING",
    "WAITING",
    "Block",
    "BlockPool",
    "FCFSQueue",
    "FreeBlockQueue",
    "KVCacheManager",
    "KeyedQueue",
    "LivelockGuard",
    "Policy",
    "Request",
    "Scheduler",
    "StepPlan",
    "Stepper",
    "block_hash",
    "cdiv",
    "engine_state",
    "livelock_error",
    "policy_of",
    "predicted_output_len",
    "private_content",
    "run",
    "stalled",
]

# --------------------------------------------------------------------------- a run that cannot end

QUIET_STEPS = 64
"""Steps without an output token before :class:`LivelockGuard` starts comparing states."""


class LivelockGuard:
    """Stops a run that cannot end. vLLM preempts the running request of the largest
    ``(priority, arrival)``, the first such in running order; under ``priority``, requests that
    tie on both can preempt one another forever, each losing its progress before it produces a
    token. The engine is deterministic and nothing reaches it but the requests sent to it, so
    when its state (the clock aside) repeats with no token and no arrival in between, it spins
    without progress until the next request is sent, if ever: the run is stopped there, the
    error saying since when the requests made no progress and when the next one would arrive.
    After :data:`QUIET_STEPS` steps without an output token, the guard compares the whole state
    step after step with a saved one (Brent's cycle detection, saving anew after 1, 2, 4...
    steps): a repeat is a livelock. A token or an arrival resets it; runs that produce tokens
    never pay for it. The native engine's guard is the same (``rust/osbench-core/src/serve/
    livelock.rs``)."""

    def __init__(self, state: Callable[[], tuple], error: Callable[[str], Exception]) -> None:
        self.state = state
        """The engine's whole state, the clock aside."""
        self.make_error = error
        """The error of the run, when it repeats, from :func:`stalled`'s words."""
        self.quiet = 0
        self.saved: Optional[tuple] = None
        self.power = 1
        self.since_saved = 0
        self.since = 0.0
        """The end of the last step with a token or an arrival."""

    def repeats(self, progressed: bool, now: float) -> bool:
        """After a step ending at ``now``: ``progressed`` when it produced a token or a request
        arrived. True when the state repeated."""
        if progressed:
            self.quiet, self.saved, self.since = 0, None, now
            return False
        self.quiet += 1
        if self.quiet < QUIET_STEPS:
            return False
        current = self.state()
        if current == self.saved:
            return True
        self.since_saved += 1
        if self.saved is None or self.since_saved == self.power:
            self.power = 1 if self.saved is None else self.power * 2
            self.since_saved = 0
            self.saved = current
        return False

    def error(self, next_send: Optional[float]) -> Exception:
        """The error of the run found repeating; ``next_send``: when the next request would be
        sent (None or infinity: never)."""
        return self.make_error(stalled(self.since, next_send))


def stalled(since: float, next_send: Optional[float]) -> str:
    """The livelock error's account of time: from when the requests in the engine made no
    progress, and when the next request would arrive (``livelock.rs: stalled``, word for word)."""
    words = f"the requests in the engine make no progress from t={_seconds(since)} s on"
    if next_send is None or math.isinf(next_send):
        return words
    return f"{words}, and nothing changes before the next request would arrive, at t={_seconds(next_send)} s"


def _seconds(t: float) -> str:
    """``t`` as Rust's ``Display`` writes an f64: the shortest digits that read back as it,
    positional (``100000``, ``0.064``)."""
    return np.format_float_positional(t, unique=True, trim="-")


# --------------------------------------------------------------------------- the engine loop


def run(
    requests: Requests,
    config: EngineConfig,
    step_time: StepTimeModel,
    *,
    record: bool = False,
    concurrency: Optional[Concurrency] = None,
) -> EngineRun:
    """Serve ``requests`` with the engine ``config`` describes; each step takes
    ``step_time(batch)`` seconds (see :class:`~osbench.serve.StepTime`).

    The engine keeps a clock (:func:`osbench.serve.drive.drive`). Before each step, every request
    that has arrived joins the waiting queue, in arrival order; when nothing runs or waits the
    clock jumps to the next arrival. A step's output tokens come out at its end. With
    ``record=True`` the result also holds every step's detail
    (:class:`~osbench.serve.run.StepRecord`). With ``concurrency=N``, closed-loop clients: at
    most ``N`` requests in flight, the next sent when one finishes.
    """
    priority = check_requests(requests, config)
    concurrency = check_concurrency(concurrency)
    check_memory(requests, config.max_num_seqs, config.block_size, bool(record))
    recorder = Recorder(len(requests), record)
    stepper = Stepper(requests, config, priority, predicted_output_len(requests, config))
    return drive(
        requests,
        stepper,
        step_time,
        recorder,
        guard=LivelockGuard(stepper.state, stepper.livelock_error),
        concurrency=concurrency,
    )
