"""vLLM's scheduler (``vllm/v1/core/sched/scheduler.py: Scheduler``): the waiting queue, the
running list, ``schedule()`` / ``update_from_output()``; and its whole state and livelock error
for the engine loop's guard."""

from __future__ import annotations

from osbench.errors import ArgumentError
from osbench.serve.drive import recomputed
from osbench.serve.vllm.config import EngineConfig
from osbench.serve.vllm.kv_cache_manager import KVCacheManager
from osbench.serve.vllm.policy import Mlfq, policy_of
from osbench.serve.vllm.request import FINISHED, PREEMPTED, RUNNING, Request
from osbench.serve.vllm.tiers import Tiers


class StepPlan:
    """What one call of the scheduler decided (``core/sched/output.py: SchedulerOutput``)."""

    def __init__(self) -> None:
        self.scheduled: dict[int, tuple[Request, int]] = {}
        """Request index -> (request, new tokens), in scheduling order."""
        self.preempted: list[Request] = []
        self.admitted: list[tuple[Request, int]] = []
        """Requests admitted from the waiting queue, with their prefix-hit tokens."""
        self.work: list[tuple[int, int, int]] = []
        """Per scheduled request: new tokens, tokens already cached, tokens outstanding."""
        self.swap_out_bytes = 0
        self.swap_in_bytes = 0
        """KV bytes the step copies to host memory and back (:mod:`osbench.serve.vllm.swap`)."""
        self.swap_time = 0.0
        """Seconds those copies add to the step."""
        self.recomputed_tokens = 0
        """Tokens the step computes whose KV the request had held before."""
        self.loaded: list[tuple[Request, int]] = []
        """Requests admitted with KV loaded from the tiers, with those tokens."""
        self.tier_load_bytes = 0
        self.tier_time = 0.0
        """KV bytes the step loads from the tiers, and the seconds the loads add to it
        (:mod:`osbench.serve.vllm.tiers`)."""

    @property
    def prefill_chunks(self) -> list[tuple[int, int]]:
        """Per prefill request of the step, in scheduling order: ``(new tokens, tokens already
        in its KV cache before this chunk)``, for step times that price each chunk."""
        return [(new, cached) for new, cached, outstanding in self.work if outstanding > 1]


class Scheduler:
    """``core/sched/scheduler.py: Scheduler``: the waiting queue, the running list, and
    ``schedule()`` / ``update_from_output()``, one pair per engine step."""

    def __init__(self, config: EngineConfig) -> None:
        self.config = config
        self.kv_cache_manager = KVCacheManager(config)
        self.policy = policy_of(config)
        self.waiting = self.policy.queue()
        self.running: list[Request] = []
        self._plan = StepPlan()
        """The plan being decided (preemption by swap counts its bytes there)."""
        self.steps = 0
        """Steps scheduled so far (``mlfq``'s boost counts them)."""
        self.swap = config.swap
        self.host_free = 0 if self.swap is None else self.swap.host_blocks
        """Free blocks of the host pool (preemption by swap)."""
        self.tiers = None
        if config.kv_tiers:
            self.tiers = Tiers(config.kv_tiers, config.kv_block_bytes, (config.block_flops, config.block_flops_step))
            self.kv_cache_manager.pool.evicted = []

    def add_request(self, request: Request) -> None:
        """``Scheduler.add_request``: a new arrival joins the waiting queue."""
        self.waiting.add_request(request)

    def has_unfinished_requests(self) -> bool:
        return bool(self.running) or len(self.waiting) > 0

    def schedule(self) -> StepPlan:
        """``Scheduler.schedule``: decide the step."""
        cfg, kv = self.config, self.kv_cache_manager
        if isinstance(self.policy, Mlfq) and self.policy.boost_due(self.steps):
            for request in [*self.running, *self.waiting.in_order()]:
                request.service_base = request.num_output_tokens
            self.waiting.rekey()
        self.steps += 1
        plan = self._plan = StepPlan()
        scheduled = plan.scheduled
        token_budget = cfg.max_num_batched_tokens
        # The long-prefill cap only applies when another request could use the budget.
        num_eligible = len(self.running) + len(self.waiting)
        threshold = cfg.long_prefill_token_threshold if num_eligible > 1 else 0

        # First the running requests, in order ("schedule(): First, schedule the RUNNING requests").
        req_index = 0
        while req_index < len(self.running) and token_budget > 0:
            request = self.running[req_index]
            num_new_tokens = request.num_tokens - request.num_computed_tokens
            if 0 < threshold < num_new_tokens:
                num_new_tokens = threshold
            num_new_tokens = min(num_new_tokens, token_budget)
            while True:
                if kv.allocate_slots(request, num_new_tokens):
                    allocated = True
                    break
                allocated = False
                # No blocks: preempt the policy's victim and retry.
                victim_index = self.policy.victim(self.running)
                victim = self.running.pop(victim_index)
                if victim_index < req_index:  # already scheduled this step: its tokens come back
                    req_index -= 1
                    token_budget += scheduled.pop(victim.index)[1]
                self._preempt_request(victim)
                plan.preempted.append(victim)
                if victim is request:  # nothing left to preempt: it cannot run this step
                    break
            if not allocated:
                # It preempted itself; under a keyed policy the more urgent requests after it may
                # still fit (under fcfs it was the last running one: the loop ends).
                continue
            scheduled[request.index] = (request, num_new_tokens)
            token_budget -= num_new_tokens
            req_index += 1

        # Then the waiting requests, unless the pool was short this step ("Next, schedule the
        # WAITING requests"); the first one that does not fit stops admission.
        if not plan.preempted:
            while token_budget > 0 and len(self.waiting) > 0 and len(self.running) < cfg.max_num_seqs:
                request = self.waiting.peek_request()
                # A swapped request brings its KV back from the host pool, the whole block
                # table, without a prefix lookup (osbench.serve.vllm.swap).
                swapped = request.swapped_blocks
                hits, num_hit_tokens = ([], 0) if swapped else kv.get_computed_blocks(request)
                # The lookup goes on in the KV tiers (osbench.serve.vllm.tiers): what they hold
                # is loaded into fresh blocks, computed, outside the token budget.
                found = [] if swapped or self.tiers is None else self._find_in_tiers(request, len(hits))
                num_tier_tokens = len(found) * cfg.block_size
                # KV sent by a prefill instance (the connector's get_num_new_matched_tokens):
                # computed beyond the local hit, in fresh blocks, outside the token budget.
                num_local = num_hit_tokens + num_tier_tokens
                num_external = 0 if swapped else max(request.external - num_local, 0)
                num_computed = request.num_computed_tokens if swapped else num_local + num_external
                num_new_tokens = request.num_tokens - num_computed
                if 0 < threshold < num_new_tokens:
                    num_new_tokens = threshold
                if not cfg.enable_chunked_prefill and num_new_tokens > token_budget:
                    break  # without chunked prefill the whole rest must fit in this step
                num_new_tokens = min(num_new_tokens, token_budget)
                if not kv.allocate_slots(
                    request,
                    num_new_tokens + num_tier_tokens + num_external,
                    hits,
                    full_sequence_must_fit=cfg.scheduler_reserve_full_isl,
                    has_scheduled_reqs=bool(self.running),
                ):
                    break
                self.waiting.pop_request()
                self.running.append(request)
                request.status = RUNNING
                request.num_computed_tokens = num_computed
                request.external = 0  # a preempted request recomputes its prompt here
                if swapped:
                    request.swapped_blocks = 0
                    self.host_free += swapped
                    plan.swap_in_bytes += swapped * self._block_bytes()
                if self.tiers is not None:
                    # Each block found is loaded: a hit of its tier's cache.
                    for k, tier in enumerate(found, start=len(hits)):
                        self.tiers.load(tier, request.block_hashes[k], k)
                    if num_tier_tokens:
                        plan.loaded.append((request, num_tier_tokens))
                scheduled[request.index] = (request, num_new_tokens)
                plan.admitted.append((request, num_hit_tokens))
                token_budget -= num_new_tokens

        # The contents the GPU evicted this step go to the tiers once it is decided; then the
        # step's loads are priced.
        if self.tiers is not None:
            evicted = kv.pool.evicted
            assert evicted is not None
            for key, position in evicted:
                self.tiers.store(key, position)
            evicted.clear()
            plan.tier_load_bytes, plan.tier_time = self.tiers.take_step_loads()

        # _update_after_schedule: the scheduled tokens count as computed from now on.
        for request, num_new_tokens in scheduled.values():
            computed = request.num_computed_tokens
            plan.work.append((num_new_tokens, computed, request.num_tokens - computed))
            again, request.computed_high = recomputed(computed, num_new_tokens, request.computed_high)
            plan.recomputed_tokens += again
            request.num_computed_tokens = computed + num_new_tokens
        if self.swap is not None:
            plan.swap_time = self.swap.seconds(plan.swap_out_bytes + plan.swap_in_bytes)
        return plan

    def _find_in_tiers(self, request: Request, gpu_hits: int) -> list[int]:
        """The tier of each block of the request's prompt after its ``gpu_hits`` GPU hits that
        some tier holds (the fastest holding it), block by block until one no tier holds; at
        most ``num_tokens - 1`` tokens with the GPU's. Prompts without content are never in a
        tier."""
        assert self.tiers is not None
        if request.private:
            return []
        found = []
        limit = min((request.num_tokens - 1) // self.config.block_size, len(request.block_hashes))
        for k in range(gpu_hits, limit):
            tier = self.tiers.find(request.block_hashes[k])
            if tier is None:
                break
            found.append(tier)
        return found

    def _block_bytes(self) -> int:
        return 0 if self.swap is None else self.swap.block_bytes

    def _preempt_request(self, request: Request) -> None:
        """``Scheduler._preempt_request``: the request's blocks are freed; it waits again, at
        the front of the queue. By recompute its progress is reset; by swap
        (:mod:`osbench.serve.vllm.swap`) the blocks of its computed tokens go to the host pool
        first and its progress is kept, unless the host pool has too few free blocks: then it
        is recomputed."""
        self.kv_cache_manager.free(request)
        request.status = PREEMPTED
        blocks = -(-request.num_computed_tokens // self.config.block_size)
        if self.swap is not None and 0 < blocks <= self.host_free:
            self.host_free -= blocks
            request.swapped_blocks = blocks
            self._plan.swap_out_bytes += blocks * self.swap.block_bytes
        else:
            request.num_computed_tokens = 0
        request.num_preemptions += 1
        self.waiting.prepend_request(request)

    def update_from_output(self, plan: StepPlan) -> tuple[list[Request], list[Request]]:
        """``Scheduler.update_from_output``: the model ran the step. Each request whose tokens
        are all computed gets one output token (``check_stop``: it finishes at ``output_len``);
        a finished request frees its blocks at once. Returns the requests that got a token and
        those that finished, in order."""
        produced: list[Request] = []
        finished: list[Request] = []
        for request, _ in plan.scheduled.values():
            if request.num_computed_tokens < request.num_tokens:
                continue  # a chunk of a prompt: no token yet
            request.append_output_token(self.config.block_size)
            produced.append(request)
            if request.num_output_tokens >= request.output_len:
                request.status = FINISHED
                self.kv_cache_manager.free(request)
                finished.append(request)
        if finished:
            self.running = [r for r in self.running if r.status != FINISHED]
        return produced, finished


def engine_state(scheduler: Scheduler) -> tuple:
    """Everything that decides the steps to come, with the requests sent so far: the running
    and waiting requests in order, with their progress and blocks, and the pool (its free
    queue, reference counts, cached content)."""
    kv, pool = scheduler.kv_cache_manager, scheduler.kv_cache_manager.pool
    order = scheduler.waiting.in_order()
    requests = tuple(
        (
            r.index,
            r.status,
            r.num_computed_tokens,
            r.num_output_tokens,
            r.service_base,
            r.swapped_blocks,
            kv.num_cached_block.get(r.index, 0),
            tuple(b.block_id for b in kv.req_to_blocks.get(r.index, ())),
        )
        for r in [*scheduler.running, *order]
    )
    blocks = tuple((b.ref_cnt, b.block_hash) for b in pool.blocks)
    cached = tuple(sorted((h, tuple(holders)) for h, holders in pool.cached.items()))
    policy = scheduler.policy
    # mlfq's boost comes every `boost` steps: where the run stands in that period decides too.
    phase = scheduler.steps % policy.boost if isinstance(policy, Mlfq) and policy.boost else 0
    free_queue = tuple(pool.free_queue._queue)
    tiers = () if scheduler.tiers is None else scheduler.tiers.state()
    return phase, scheduler.host_free, tiers, len(scheduler.running), requests, free_queue, blocks, cached


def livelock_error(scheduler: Scheduler, policy: str, stalled: str) -> ArgumentError:
    """The error of a run that repeats itself forever, naming the requests caught in it;
    ``stalled``: since when, and until when (:func:`osbench.serve.reference.stalled`)."""
    caught = sorted(r.index for r in [*scheduler.running, *scheduler.waiting.in_order()])
    more = f" (and {len(caught) - 5} more)" if len(caught) > 5 else ""
    return ArgumentError(
        f"requests={', '.join(map(str, caught[:5]))}{more} is not accepted: requests the scheduler can serve: "
        f"with policy={policy!r} these preempt one another forever, the same steps repeating without a token: "
        f"{stalled} (the policy preempts the first running request of the largest key, as vLLM 0.33.0 does under "
        "priority with (priority, arrival), so requests that tie keep resetting each other's progress); give them "
        "distinct priorities or arrivals, or use policy='fcfs'"
    )
