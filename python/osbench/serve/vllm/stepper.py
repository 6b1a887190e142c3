"""vLLM's scheduler as the engine loop (:func:`osbench.serve.drive.drive`) runs it."""

from __future__ import annotations

from typing import Optional

import numpy as np

from osbench.serve.drive import Output, Planned
from osbench.serve.requests import Requests
from osbench.serve.steptime import StepWork
from osbench.serve.vllm.config import EngineConfig
from osbench.serve.vllm.request import FINISHED, Request
from osbench.serve.vllm.scheduler import Scheduler, StepPlan, engine_state, livelock_error


class Stepper:
    """The scheduler as :func:`osbench.serve.drive.drive` runs it: requests become
    :class:`Request` objects as they arrive, and each step's plan and output are reported by
    request index."""

    def __init__(
        self,
        requests: Requests,
        config: EngineConfig,
        priority: np.ndarray,
        predicted: np.ndarray,
        external: Optional[np.ndarray] = None,
    ) -> None:
        self.config = config
        self.external = external
        """Per request, prompt tokens whose KV a prefill instance sent (None: none). With it,
        the engine numbers its requests as it receives them (0, 1, 2...: they come in any
        order), and reports them so."""
        self.received = 0
        self.predicted = predicted
        self.scheduler = Scheduler(config)
        self.requests = requests
        self.priority = priority
        self.keys: Optional[np.ndarray] = None
        self.offsets: Optional[np.ndarray] = None
        # Prompts without content are not hashed: their blocks get private tags instead.
        if config.enable_prefix_caching and requests.block_ids is not None:
            self.keys, self.offsets = requests.prompt_block_keys(config.block_size)
        self.plan = StepPlan()

    def add_request(self, index: int, arrival: float) -> None:
        keys, offsets = self.keys, self.offsets
        own_keys = None if keys is None or offsets is None else keys[offsets[index] : offsets[index + 1]]
        r = self.requests
        number = index if self.external is None else self.received
        self.received += 1
        request = Request(
            number,
            arrival,
            int(self.priority[index]),
            int(r.prompt_len[index]),
            int(r.output_len[index]),
            own_keys,
            int(self.predicted[index]),
            private=self.config.enable_prefix_caching,
            external=0 if self.external is None else int(self.external[index]),
        )
        self.scheduler.add_request(request)

    def has_unfinished_requests(self) -> bool:
        return self.scheduler.has_unfinished_requests()

    def schedule(self) -> Planned:
        plan = self.plan = self.scheduler.schedule()
        free_blocks = self.scheduler.kv_cache_manager.pool.num_free_blocks
        return Planned(
            StepWork.of(plan.work),
            [(r.index, tokens) for r, tokens in plan.scheduled.values()],
            [r.index for r in plan.preempted],
            [(r.index, hit) for r, hit in plan.admitted],
            len(self.scheduler.waiting),
            self.config.usable_blocks - free_blocks,
            free_blocks,
            plan.swap_out_bytes,
            plan.swap_in_bytes,
            plan.swap_time,
            plan.recomputed_tokens,
            [(r.index, tokens) for r, tokens in plan.loaded],
            plan.tier_load_bytes,
            plan.tier_time,
        )

    def update_from_output(self) -> Output:
        produced, finished = self.scheduler.update_from_output(self.plan)
        tokens = [(r.index, r.num_output_tokens == 1, r.status == FINISHED) for r in produced]
        tiers = self.scheduler.tiers
        counts = () if tiers is None else tuple((a, b, c) for a, b, c in tiers.counts)
        return Output(tokens, len(finished), len(self.scheduler.kv_cache_manager.pool.cached), counts)

    def state(self) -> tuple:
        return engine_state(self.scheduler)

    def livelock_error(self, stalled: str) -> Exception:
        return livelock_error(self.scheduler, self.config.policy, stalled)
