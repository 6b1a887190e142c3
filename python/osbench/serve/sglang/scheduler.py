"""SGLang's scheduler loop (``managers/scheduler.py: Scheduler``, its non-overlapped loop
``event_loop_normal``): ``get_next_batch_to_run`` picks each step's batch, and the batch's
result (``scheduler_components/batch_result_processor.py``) updates the requests.

Paths are inside SGLang 0.5.23's ``sglang/srt`` package; each rule cites its function.
"""

from __future__ import annotations

from typing import Optional

from osbench.errors import ArgumentError
from osbench.serve.sglang.adder import AddReqResult, PrefillAdder
from osbench.serve.sglang.config import EngineConfig, ceil_pages
from osbench.serve.sglang.kv import KVCache
from osbench.serve.sglang.policy import SchedulePolicy, shortest_prefill_chunk_limit
from osbench.serve.sglang.request import Req

SGLANG_MIN_NEW_TOKEN_RATIO_FACTOR = 0.14
SGLANG_NEW_TOKEN_RATIO_DECAY_STEPS = 600
SGLANG_RETRACT_DECODE_STEPS = 20
"""``environ.py``'s defaults, read by the ratio tracker and by ``release_req``."""


class NewTokenRatioTracker:
    """``scheduler_components/new_token_ratio_tracker.py: NewTokenRatioTracker``: the share of
    their remaining output that running requests are expected to still produce."""

    def __init__(self, conservativeness_ratio: float) -> None:
        self.init = conservativeness_ratio
        self.min = min(self.init * SGLANG_MIN_NEW_TOKEN_RATIO_FACTOR, 1.0)
        self.decay = (self.init - self.min) / SGLANG_NEW_TOKEN_RATIO_DECAY_STEPS
        self.current = self.init

    def decay_step(self) -> None:
        self.current = max(self.current - self.decay, self.min)

    def reset(self) -> None:
        self.current = self.init

    @staticmethod
    def estimate_after_retract(reqs: list[Req]) -> float:
        """``estimate_new_token_ratio_after_retract``: from the progress of those that stay."""
        decoded = sum(r.num_outputs for r in reqs)
        max_new = sum(r.max_new_tokens for r in reqs)
        return min(1.0, (decoded + SGLANG_RETRACT_DECODE_STEPS * len(reqs)) / (max_new + 1))


class Batch:
    """``managers/schedule_batch.py: ScheduleBatch``: its requests in order, whether it extends
    (a prefill) or decodes, and the flag that stops admission until a request leaves."""

    def __init__(self, reqs: Optional[list[Req]] = None, extend: bool = False) -> None:
        self.reqs: list[Req] = reqs if reqs is not None else []
        self.extend = extend
        self.batch_is_full = False
        self.chunked_req: Optional[Req] = None
        self.decoding_reqs: list[Req] = []
        """Mixed chunk: the running requests decoding inside this prefill batch."""

    def is_empty(self) -> bool:
        return not self.reqs

    def filter(self, exclude: tuple[Optional[Req], ...] = ()) -> None:
        """``ScheduleBatch.filter_batch``: drop finished and excluded requests."""
        self.reqs = [r for r in self.reqs if not r.finished() and r not in exclude]


class StepWork:
    """What one step ran: per request ``(request, new tokens, tokens already cached)`` in the
    batch's order, the retracted requests and the admitted ones ``(request, prefix hit)``."""

    def __init__(self) -> None:
        self.scheduled: list[tuple[Req, int, int]] = []
        self.retracted: list[Req] = []
        self.admitted: list[tuple[Req, int]] = []
        self.batch: Optional[Batch] = None


class Scheduler:
    """``managers/scheduler.py: Scheduler``: the waiting queue, the running batch, the one
    chunked request, the ratio tracker; one :meth:`schedule` and one :meth:`process_result`
    per step."""

    def __init__(self, config: EngineConfig) -> None:
        self.config = config
        self.kv = KVCache(config.num_pages, config.page_size)
        self.policy = SchedulePolicy(config.schedule_policy, self.kv, config.random_seed)
        self.ratio = NewTokenRatioTracker(config.init_new_token_ratio)
        self.waiting: list[Req] = []
        self.running = Batch()
        self.last_batch: Optional[Batch] = None
        self.chunked_req: Optional[Req] = None
        self.max_running = config.running_cap
        self.processed_tokens = 0
        """Tokens of every prefill batch run so far (``processed_tokens_counter``, for ``hrrn``)."""

    def add_request(self, req: Req) -> None:
        """``_add_request_to_queue``: to the back of the waiting queue."""
        req.arrival_processed_tokens = self.processed_tokens
        self.waiting.append(req)

    def has_unfinished_requests(self) -> bool:
        last = self.last_batch
        return (
            bool(self.waiting)
            or any(not r.finished() for r in self.running.reqs)
            or self.chunked_req is not None
            or (last is not None and last.extend and any(not r.finished() for r in last.reqs))
        )

    # --------------------------------------------------------------------------- one step

    def schedule(self) -> StepWork:
        """``get_next_batch_to_run``: merge the last prefill batch into the running batch, then
        run a new prefill batch if one can be formed ("prefill first"), else decode the running
        batch."""
        work = StepWork()
        excluded: tuple[Optional[Req], ...] = ()
        if self.chunked_req is not None:
            # The chunk it just computed goes into the tree (stash_chunked_request).
            excluded = (self.chunked_req,)
            req = self.chunked_req
            if req.extend_end > req.prefix_len:
                self.kv.checkpoint(req, req.extend_end)
                req.prefix_len = req.extend_end
        last = self.last_batch
        if last is not None and last.extend:
            before = len(last.reqs)
            last.filter((*excluded, last.chunked_req))
            if len(last.reqs) < before:
                self.running.batch_is_full = False
            if not last.is_empty():
                if self.running.is_empty():
                    self.running = Batch(last.reqs)
                else:
                    self.running.reqs.extend(last.reqs)
        before = len(self.running.reqs)
        self.running.filter()
        if len(self.running.reqs) < before:
            self.running.batch_is_full = False

        batch = self._get_new_batch_prefill(work)
        if batch is None and not self.running.is_empty():
            batch = self._update_running_batch(work)
        assert batch is not None, "the scheduler formed no batch with requests waiting: this is a bug"
        if batch.extend:
            # run_batch: the prefill-token counter grows by the batch's extend tokens (a
            # mixed batch's decoding requests count one each: mix_with_running).
            self.processed_tokens += sum(
                1 if r in batch.decoding_reqs else r.extend_end - r.prefix_len for r in batch.reqs
            )
        work.batch = batch
        self.last_batch = batch
        decoding = batch.decoding_reqs if batch.extend else batch.reqs
        for r in batch.reqs:
            if r in decoding:
                work.scheduled.append((r, 1, r.committed - 1))
            else:
                work.scheduled.append((r, r.extend_end - r.prefix_len, r.prefix_len))
        return work

    def _num_allocatable_reqs(self, num_held_rows: int) -> int:
        """``get_num_allocatable_reqs``: the requests that may still join, by the running cap
        and by the free rows of the request pool (the chunked request holds one)."""
        running_bs = len(self.running.reqs)
        held = running_bs + (1 if self.chunked_req is not None else 0)
        return min(self.max_running - running_bs, max(self.max_running - held + num_held_rows, 0))

    def _get_new_batch_prefill(self, work: StepWork) -> Optional[Batch]:
        """``_get_new_batch_prefill_raw``."""
        cfg, kv, running = self.config, self.kv, self.running
        if running.is_empty():
            running.batch_is_full = False
        if (running.batch_is_full or not self.waiting) and self.chunked_req is None:
            return None
        if self._num_allocatable_reqs(0) <= 0 and self.chunked_req is None:
            running.batch_is_full = True
            return None
        self.policy.calc_priority(self.waiting, self.processed_tokens)
        adder = PrefillAdder(
            kv,
            running.reqs,
            self.ratio.current,
            cfg.max_prefill_tokens,
            cfg.chunk_tokens,
            len(running.reqs) if cfg.is_mixed_chunk else 0,
            cfg.schedule_policy,
        )
        if self.chunked_req is not None:
            adder.chunked_req_limit = shortest_prefill_chunk_limit(
                cfg.schedule_policy, self.chunked_req, self.waiting, adder.rem_chunk_tokens or 0, kv.page_size
            )
            self.chunked_req = adder.add_chunked_req(self.chunked_req)
        for req in self.waiting:
            if adder.budget_state() == AddReqResult.OTHER:
                break
            held = sum(1 for r in adder.can_run_list if r.alloc_len > 0)
            if len(adder.can_run_list) >= self._num_allocatable_reqs(held):
                running.batch_is_full = True
            if running.batch_is_full:
                break
            # init_next_round_input: match again, one token short of the whole fill.
            kv.match(req, req.max_prefix_len(len(req.fill)))
            res = adder.add_one_req(req, has_chunked_req=self.chunked_req is not None)
            if res != AddReqResult.CONTINUE:
                if res == AddReqResult.NO_TOKEN:
                    running.batch_is_full = bool(adder.can_run_list) or not running.is_empty()
                break
        can_run = adder.can_run_list
        if not can_run:
            return None
        chosen = set(map(id, can_run))
        for r in can_run:
            if r in self.waiting:
                work.admitted.append((r, r.prefix_len))
        self.waiting = [r for r in self.waiting if id(r) not in chosen]
        if adder.new_chunked_req is not None:
            assert self.chunked_req is None
            self.chunked_req = adder.new_chunked_req
        batch = Batch(list(can_run), extend=True)
        batch.chunked_req = self.chunked_req
        self._prepare_for_extend(batch)
        if cfg.is_mixed_chunk and not running.is_empty() and self._check_decode_mem(running.reqs):
            # Mixed-style chunked prefill (mix_with_running): the running requests decode in
            # this batch, after its prefills, when their next tokens fit (a mixed step does
            # not retract); an empty running batch keeps the flag until they merge back.
            self._prepare_for_decode(running.reqs)
            batch.decoding_reqs = list(running.reqs)
            batch.reqs.extend(running.reqs)
            self.running = Batch()
            self.running.batch_is_full = running.batch_is_full
        return batch

    def _prepare_for_extend(self, batch: Batch) -> None:
        """``ScheduleBatch.prepare_for_extend`` (``mem_cache/allocation.py: alloc_for_extend``):
        evict for the batch's new tokens (one page more per request when pages are larger than
        a token), then give each request slots up to the end of its extend."""
        kv = self.kv
        demand = sum(r.extend_end - r.prefix_len for r in batch.reqs)
        if kv.page_size > 1:
            demand += len(batch.reqs) * kv.page_size
        kv.evict_to_free_tokens(demand)
        pages = sum(
            ceil_pages(r.extend_end, kv.page_size) - ceil_pages(max(r.alloc_len, r.prefix_len), kv.page_size)
            for r in batch.reqs
        )
        if pages > kv.free_pages:
            raise ArgumentError(
                f"max_total_tokens={self.config.max_total_tokens} is not accepted: for these requests SGLang 0.5.23 "
                f"runs out of KV in a prefill of requests {', '.join(str(r.index) for r in batch.reqs)} "
                f"({pages * kv.page_size} tokens wanted, {kv.free_pages * kv.page_size} free after eviction), "
                "where it raises 'Out of memory. Try to lower your batch size.' (mem_cache/allocation.py: "
                "alloc_token_slots). A continuing chunk takes a whole chunk when the admission budget has none "
                "left (prefill_budget.py: PrefillBudget.available_chunk_tokens); give the pool more tokens"
            )
        for r in batch.reqs:
            if r.alloc_len < r.prefix_len:  # a new request: its prefix is the tree's
                r.alloc_len = r.protected = r.prefix_len
            kv.allocate(r, r.extend_end)
            r.committed = r.extend_end

    def _new_tokens_required_next_decode(self, reqs: list[Req]) -> int:
        page = self.kv.page_size
        return sum(1 for r in reqs if r.committed % page == 0) * page

    def _check_decode_mem(self, reqs: list[Req]) -> bool:
        """``ScheduleBatch.check_decode_mem``: evict until the next decode's new pages fit."""
        need = self._new_tokens_required_next_decode(reqs)
        self.kv.evict_to_free_tokens(need)
        return self.kv.available_size() >= need

    def _prepare_for_decode(self, reqs: list[Req]) -> None:
        """``ScheduleBatch.prepare_for_decode`` (``alloc_for_decode``): a slot for each
        request's last token, evicting first (a page per request when pages are larger)."""
        kv = self.kv
        kv.evict_to_free_tokens(len(reqs) * (kv.page_size if kv.page_size > 1 else 1))
        for r in reqs:
            kv.allocate(r, r.committed + 1)
            r.committed += 1

    def _update_running_batch(self, work: StepWork) -> Batch:
        """``update_running_batch``: decode the running batch, retracting requests first when
        the next token of every one does not fit (``ScheduleBatch.retract_decode``)."""
        batch = self.running
        initial = len(batch.reqs)
        if not self._check_decode_mem(batch.reqs):
            retracted, ratio = self._retract_decode(batch)
            self.ratio.current = ratio
            work.retracted = retracted
            for r in retracted:
                self.add_request(r)  # _add_request_to_queue(is_retracted=True)
        else:
            self.ratio.decay_step()
        if len(batch.reqs) < initial:
            batch.batch_is_full = False
        self._prepare_for_decode(batch.reqs)
        return batch

    def _retract_decode(self, batch: Batch) -> tuple[list[Req], float]:
        """``ScheduleBatch.retract_decode``: keep the requests with the most output (ties: the
        shortest prompt, then batch order), retracting from the other end, at least one and
        never the last, until the rest decode. A retracted request loses its KV (its tree
        prefix stays, unlocked) and goes back to the waiting queue with its outputs, to be
        prefilled again (``release_req``, ``Req.reset_for_retract``); after each, the tree is
        evicted down for the remaining requests' next 20 tokens. The batch keeps the sorted
        order; the new ratio is estimated from those that stay."""
        reqs = batch.reqs
        order = sorted(range(len(reqs)), key=lambda i: (reqs[i].num_outputs, -reqs[i].prompt_len), reverse=True)
        retracted: list[Req] = []
        first = True
        while first or not self._check_decode_mem([reqs[i] for i in order]):
            if len(order) == 1:
                break
            first = False
            req = reqs[order.pop()]
            self.kv.release(req, checkpoint=False)
            self.kv.evict_to_free_tokens(len(order) * SGLANG_RETRACT_DECODE_STEPS)
            req.prefix_len = req.extend_end = req.num_matched = 0
            req.last_node = None
            req.retractions += 1
            retracted.append(req)
        if len(order) <= 1 and not self._check_decode_mem([reqs[i] for i in order]):
            raise RuntimeError("a request cannot decode even alone in the pool: this is a bug")
        batch.reqs = [reqs[i] for i in order]
        return retracted, NewTokenRatioTracker.estimate_after_retract(batch.reqs)

    # --------------------------------------------------------------------------- its result

    def process_result(self, work: StepWork) -> tuple[list[Req], list[Req]]:
        """``process_batch_result_prefill`` / ``_decode``: every request of the batch but the
        one still being chunked gets a token; a finished request gives its tokens to the tree
        and frees the rest (``release_kv_cache`` with a checkpoint); a prefilled one that goes
        on decoding checkpoints its prompt into the tree (``checkpoint_kv_cache``). Returns the
        requests that got a token and those that finished, in order."""
        batch = work.batch
        assert batch is not None
        produced: list[Req] = []
        finished: list[Req] = []
        decoding = batch.decoding_reqs if batch.extend else batch.reqs
        for r in batch.reqs:
            if r is self.chunked_req:
                continue  # a middle chunk: no token
            r.append_output()
            produced.append(r)
            if r.finished():
                self.kv.release(r, checkpoint=True)
                finished.append(r)
            elif r not in decoding:
                self.kv.checkpoint(r, r.extend_end)
                r.prefix_len = r.extend_end
        return produced, finished

    def on_idle(self) -> None:
        """``Scheduler.on_idle``: with nothing running or waiting the ratio starts over."""
        self.ratio.reset()


__all__ = ["Batch", "NewTokenRatioTracker", "Scheduler", "StepWork"]
