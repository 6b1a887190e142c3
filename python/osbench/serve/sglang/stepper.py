"""SGLang's scheduler under the engine loop every Python engine shares
(:func:`osbench.serve.drive.drive`), and its run: the reference engine of this semantics."""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from osbench.errors import ArgumentError
from osbench.serve.drive import Output, Planned, drive, recomputed
from osbench.serve.requests import Requests
from osbench.serve.run import Concurrency, EngineRun, Recorder, StepTimeModel, check_concurrency, check_types
from osbench.serve.sglang.config import EngineConfig
from osbench.serve.sglang.request import Req
from osbench.serve.sglang.scheduler import Scheduler, StepWork
from osbench.serve.steptime import StepWork as Work


def prompt_tokens(requests: Requests) -> tuple[np.ndarray, np.ndarray]:
    """Token ids carrying exactly the content :meth:`Requests.prompt_block_keys` describes, one
    per prompt token (``(tokens, offsets)``, as that method lays them out): equal content gives
    equal tokens; output tokens are private to their request (:func:`~osbench.serve.sglang.
    request.private_token`)."""
    keys, offsets = requests.prompt_block_keys(1)
    return (keys >> np.uint64(2)).astype(np.int64), offsets  # below 2**62, apart from outputs


def check_requests(requests: Any, config: Any) -> None:
    """Refuse what this engine cannot serve, before it starts: a request that could never be
    admitted even alone in the pool. SGLang admits a request while its extend, its remaining
    output (capped at 4096) and a page are below the free and evictable tokens
    (:meth:`~osbench.serve.sglang.adder.PrefillAdder.add_one_req`); a retracted request extends
    its outputs too, so ``prompt_len + output_len + page_size`` must be below
    ``max_total_tokens``, else SGLang would leave it waiting forever."""
    check_types(requests, config, EngineConfig, "osbench.serve.sglang.EngineConfig")
    need = requests.prompt_len + requests.output_len + config.page_size
    too_big = np.flatnonzero(need >= config.max_total_tokens)
    if len(too_big):
        more = f" (and {len(too_big) - 5} more)" if len(too_big) > 5 else ""
        raise ArgumentError(
            f"requests={', '.join(map(str, too_big[:5].tolist()))}{more} is not accepted: "
            f"prompt_len + output_len + page_size={config.page_size} must be below the pool's "
            f"max_total_tokens={config.max_total_tokens}, else SGLang never admits the request"
        )


class Stepper:
    """SGLang's scheduler as :func:`osbench.serve.drive.drive` runs it, reported by request
    index. The block columns of the run count pages of ``page_size`` tokens: free ones are
    those an allocation may take now, the pool's free pages and the tree's evictable ones (as
    vLLM's free blocks include its cached ones no request holds)."""

    def __init__(self, requests: Requests, config: EngineConfig) -> None:
        self.requests = requests
        self.config = config
        self.scheduler = Scheduler(config)
        self.tokens, self.offsets = prompt_tokens(requests)
        self.work = StepWork()

    def add_request(self, index: int, arrival: float) -> None:
        prompt = self.tokens[self.offsets[index] : self.offsets[index + 1]].tolist()
        self.scheduler.add_request(Req(index, arrival, prompt, int(self.requests.output_len[index])))

    def has_unfinished_requests(self) -> bool:
        busy = self.scheduler.has_unfinished_requests()
        if not busy:
            self.scheduler.on_idle()  # the loop idles before the next request comes
        return busy

    def schedule(self) -> Planned:
        work = self.work = self.scheduler.schedule()
        kv = self.scheduler.kv
        batch = Work.of([(new, cached, len(r.fill) - cached) for r, new, cached in work.scheduled])
        again = 0
        for r, new, cached in work.scheduled:
            more, r.computed_high = recomputed(cached, new, r.computed_high)
            again += more
        return Planned(
            batch,
            [(r.index, new) for r, new, _ in work.scheduled],
            [r.index for r in work.retracted],
            [(r.index, hit) for r, hit in work.admitted],
            len(self.scheduler.waiting),
            kv.num_pages - kv.reusable_pages,
            kv.reusable_pages,
            recomputed_tokens=again,
        )

    def update_from_output(self) -> Output:
        produced, finished = self.scheduler.process_result(self.work)
        tokens = [(r.index, r.num_outputs == 1, r.finished()) for r in produced]
        return Output(tokens, len(finished), self.scheduler.kv.cached_pages)


def run(
    requests: Requests,
    config: EngineConfig,
    step_time: StepTimeModel,
    *,
    record: bool = False,
    concurrency: Optional[Concurrency] = None,
) -> EngineRun:
    """Serve ``requests`` with SGLang 0.5.23's scheduler as ``config`` describes it, each step
    taking ``step_time(batch)`` seconds, on the engine loop of :func:`osbench.serve.drive.drive`
    (the same clock, arrivals and closed-loop clients as every engine). No livelock guard is
    needed: every prefill ends in a token or advances a chunk, every decode gives each request
    a token, and a retracted request keeps its outputs, so every run ends."""
    check_requests(requests, config)
    concurrency = check_concurrency(concurrency)
    recorder = Recorder(len(requests), record)
    return drive(requests, Stepper(requests, config), step_time, recorder, concurrency=concurrency)


__all__ = ["Stepper", "check_requests", "prompt_tokens", "run"]
