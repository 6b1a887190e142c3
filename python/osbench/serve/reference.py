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
  to its place by ``(priority, arrival, index)`` (``priority``);
- a request's blocks are freed last block first; a freed block holding a cached hash goes to the
  back of the free queue (so the least recently used content is evicted first, a prompt's tail
  before its head), one without to the front (it is reused first);
- a request's blocks are hashed as they are scheduled, chained over the prompt keys of
  :meth:`Requests.prompt_block_keys` and then over content private to the request (the trailing
  partial prompt block and the output tokens), with :func:`block_hash`;
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

import enum
import heapq
from collections import OrderedDict, deque
from collections.abc import Iterable, Sequence
from typing import Callable, Optional, Union

import numpy as np

from osbench.errors import ArgumentError
from osbench.serve.config import EngineConfig
from osbench.serve.drive import Output, Planned, drive
from osbench.serve.requests import Requests, mix64
from osbench.serve.run import EngineRun, Recorder, StepTimeModel, check_concurrency, check_requests
from osbench.serve.steptime import StepWork

WAITING, RUNNING, PREEMPTED, FINISHED = "waiting", "running", "preempted", "finished"


def cdiv(a: int, b: int) -> int:
    """``vllm/utils/math_utils.py: cdiv``: ceiling division."""
    return -(-a // b)


# --------------------------------------------------------------------------- block hashes

ROOT_HASH = 0
"""The parent hash of a prompt's first block (vLLM's ``NONE_HASH``)."""


def block_hash(parent: int, content: int) -> int:
    """The hash of a block: of its parent's hash and its own content, so that equal hashes mean
    equal prefixes (``core/kv_cache_utils.py: hash_block_tokens`` hashes the parent hash and the
    block's tokens with SHA-256; a 64-bit mix of 64-bit content keys stands for it here)."""
    return mix64(parent ^ mix64(content))


def private_content(index: int, k: int) -> int:
    """The content key of block ``k`` of request ``index`` once it reaches past the prompt's full
    blocks: the trailing partial prompt block and the output tokens belong to the request alone
    (equal only to themselves, which is how a request recomputed after a preemption finds its
    own blocks still cached)."""
    return mix64((index << 32) ^ k ^ (1 << 61))


# --------------------------------------------------------------------------- requests


class Request:
    """A request as the engine sees it (``request.py: Request``): its progress, its status and
    the hashes of its full blocks."""

    __slots__ = (
        "arrival",
        "block_hashes",
        "hashed",
        "index",
        "num_computed_tokens",
        "num_output_tokens",
        "num_preemptions",
        "output_len",
        "priority",
        "prompt_len",
        "status",
    )

    def __init__(
        self, index: int, arrival: float, priority: int, prompt_len: int, output_len: int, keys: Optional[np.ndarray]
    ) -> None:
        self.index = index
        self.arrival = arrival
        self.priority = priority
        self.prompt_len = prompt_len
        self.output_len = output_len
        self.status = WAITING
        self.num_computed_tokens = 0
        """Tokens whose KV is in the cache (or being computed in the current step)."""
        self.num_output_tokens = 0
        self.num_preemptions = 0
        self.block_hashes: list[int] = []
        """One hash per full block of the known tokens (prompt, then outputs):
        ``request.py: Request.update_block_hashes``. Empty without prefix caching."""
        self.hashed = keys is not None
        if keys is not None:
            parent = ROOT_HASH
            for key in keys.tolist():
                parent = block_hash(parent, key)
                self.block_hashes.append(parent)

    @property
    def num_tokens(self) -> int:
        """Prompt and output tokens so far (``request.py: Request.num_tokens``)."""
        return self.prompt_len + self.num_output_tokens

    @property
    def sort_key(self) -> tuple[int, float, int]:
        """``request.py: Request.__lt__``: priority (smaller first), then arrival, then id (the
        index here; the vLLM peer harness numbers its ids the same way)."""
        return (self.priority, self.arrival, self.index)

    def append_output_token(self, block_size: int) -> None:
        """``request.py: Request.append_output_token_ids``: one more token, and the hash of
        any block it fills."""
        self.num_output_tokens += 1
        if self.hashed:
            hashes = self.block_hashes
            while (len(hashes) + 1) * block_size <= self.num_tokens:
                parent = hashes[-1] if hashes else ROOT_HASH
                hashes.append(block_hash(parent, private_content(self.index, len(hashes))))


# --------------------------------------------------------------------------- the block pool


class Block:
    """One KV block (``core/kv_cache_utils.py: KVCacheBlock``)."""

    __slots__ = ("block_hash", "block_id", "ref_cnt")

    def __init__(self, block_id: int) -> None:
        self.block_id = block_id
        self.ref_cnt = 0
        """Requests holding the block. At 0 it is free, though it may still hold a cached prefix."""
        self.block_hash: Optional[int] = None
        """Set while the block is in the prefix-cache map."""


class FreeBlockQueue:
    """``core/kv_cache_utils.py: FreeKVCacheBlockQueue``: the free blocks in the order they will
    be reused (and their cached content evicted), front first. vLLM links the blocks in a doubly
    linked list; an ordered dict does the same four things in O(1): pop the front, remove from
    the middle, push at either end. At start the blocks are in id order."""

    def __init__(self, blocks: Iterable[Block]) -> None:
        self._queue: OrderedDict[int, Block] = OrderedDict((b.block_id, b) for b in blocks)

    def __len__(self) -> int:
        return len(self._queue)

    def popleft(self) -> Block:
        return self._queue.popitem(last=False)[1]

    def remove(self, block: Block) -> None:
        del self._queue[block.block_id]

    def append_n(self, blocks: Sequence[Block]) -> None:
        for b in blocks:
            self._queue[b.block_id] = b

    def prepend_n(self, blocks: Sequence[Block]) -> None:
        """Put ``blocks`` at the front, the first of them first."""
        for b in reversed(blocks):
            self._queue[b.block_id] = b
            self._queue.move_to_end(b.block_id, last=False)


class BlockPool:
    """``core/block_pool.py: BlockPool``: every block, the free queue, and the prefix-cache map
    from a block hash to the blocks holding that content."""

    def __init__(self, num_blocks: int, enable_caching: bool) -> None:
        self.enable_caching = enable_caching
        self.blocks = [Block(i) for i in range(num_blocks)]
        self.free_queue = FreeBlockQueue(self.blocks)
        # BlockPool.__init__: block 0 becomes the null block, a placeholder never handed out.
        self.null_block = self.free_queue.popleft()
        # BlockHashToBlockMap: equal content computed twice is cached twice (vLLM does not
        # de-duplicate, so that block tables stay append-only); a lookup takes the oldest.
        self.cached: dict[int, dict[int, Block]] = {}

    @property
    def num_free_blocks(self) -> int:
        return len(self.free_queue)

    def get_cached_block(self, block_hash: int) -> Optional[Block]:
        """``BlockPool.get_cached_block``: a block holding this content, if any."""
        holders = self.cached.get(block_hash)
        return next(iter(holders.values())) if holders else None

    def cache_full_blocks(self, request: Request, blocks: list[Block], num_cached: int, num_full: int) -> None:
        """``BlockPool.cache_full_blocks``: blocks ``num_cached:num_full`` of the request are
        full; enter them in the map under the request's block hashes."""
        for i in range(num_cached, num_full):
            block, h = blocks[i], request.block_hashes[i]
            block.block_hash = h
            self.cached.setdefault(h, {})[block.block_id] = block

    def get_new_blocks(self, n: int) -> list[Block]:
        """``BlockPool.get_new_blocks``: the first ``n`` free blocks; a cached one loses its
        content (``_maybe_evict_cached_block``): this is the prefix cache's eviction."""
        new = [self.free_queue.popleft() for _ in range(n)]
        for block in new:
            if block.block_hash is not None:
                holders = self.cached[block.block_hash]
                del holders[block.block_id]
                if not holders:
                    del self.cached[block.block_hash]
                block.block_hash = None
            block.ref_cnt = 1
        return new

    def touch(self, blocks: Sequence[Block]) -> None:
        """``BlockPool.touch``: a prefix hit takes a reference; a free cached block leaves the
        free queue."""
        for block in blocks:
            if block.ref_cnt == 0:
                self.free_queue.remove(block)
            block.ref_cnt += 1

    def free_blocks(self, ordered_blocks: Iterable[Block]) -> None:
        """``BlockPool.free_blocks``: drop a reference to each block, in eviction order. Blocks
        no one holds any more go back to the free queue: with a cached hash to the back (reused
        last, least recently used first), without one to the front (reused first)."""
        evict_first: list[Block] = []
        evict_last: list[Block] = []
        for block in ordered_blocks:
            block.ref_cnt -= 1
            if block.ref_cnt == 0:
                if block.block_hash is None or not self.enable_caching:
                    evict_first.append(block)
                else:
                    evict_last.append(block)
        self.free_queue.prepend_n(evict_first)
        self.free_queue.append_n(evict_last)


# --------------------------------------------------------------------------- the KV cache manager


class KVCacheManager:
    """``core/kv_cache_manager.py: KVCacheManager`` for a model with one full-attention KV cache
    group: its ``UnitaryKVCacheCoordinator`` (``core/kv_cache_coordinator.py``) and
    ``FullAttentionManager`` (``core/single_type_kv_cache_manager.py``) folded in."""

    def __init__(self, config: EngineConfig) -> None:
        self.block_size = config.block_size
        self.enable_caching = config.enable_prefix_caching
        self.watermark_blocks = config.watermark_blocks
        self.pool = BlockPool(config.num_blocks, config.enable_prefix_caching)
        self.req_to_blocks: dict[int, list[Block]] = {}
        self.num_cached_block: dict[int, int] = {}
        """How many of each request's blocks are already in the prefix-cache map."""

    def get_computed_blocks(self, request: Request) -> tuple[list[Block], int]:
        """``KVCacheManager.get_computed_blocks`` and ``FullAttentionManager.find_longest_cache_hit``:
        the longest run of cached blocks from the prompt's start, and its length in tokens. At
        most ``num_tokens - 1`` tokens: the last one is always computed, for its logits."""
        if not self.enable_caching:
            return [], 0
        hits: list[Block] = []
        for h in request.block_hashes[: (request.num_tokens - 1) // self.block_size]:
            block = self.pool.get_cached_block(h)
            if block is None:  # hashes are chained: after a miss, everything misses
                break
            hits.append(block)
        return hits, len(hits) * self.block_size

    def blocks_to_allocate(self, request: Request, num_tokens: int, hits: Sequence[Block]) -> int:
        """``SingleTypeKVCacheManager.get_num_blocks_to_allocate``: new blocks to hold
        ``num_tokens`` tokens, plus the hit blocks that are free now (taking them removes them
        from the free queue just as allocating would)."""
        held = len(self.req_to_blocks.get(request.index, ()))
        new = max(cdiv(num_tokens, self.block_size) - (len(hits) + held), 0)
        return new + sum(block.ref_cnt == 0 for block in hits)

    def allocate_slots(
        self,
        request: Request,
        num_new_tokens: int,
        hits: Sequence[Block] = (),
        full_sequence_must_fit: bool = False,
        has_scheduled_reqs: bool = True,
    ) -> bool:
        """``KVCacheManager.allocate_slots``: blocks for the request's ``num_new_tokens`` next
        tokens (after its prefix ``hits``, for a request being admitted), or ``False`` if the free
        blocks are too few; then cache the blocks those tokens fill."""
        num_computed = request.num_computed_tokens + len(hits) * self.block_size
        # The watermark holds back admissions only, and only while someone else runs.
        watermark = self.watermark_blocks if has_scheduled_reqs and request.status in (WAITING, PREEMPTED) else 0
        free = self.pool.num_free_blocks
        # scheduler_reserve_full_isl: the whole sequence must fit, not just this chunk.
        if full_sequence_must_fit and self.blocks_to_allocate(request, request.num_tokens, hits) + watermark > free:
            return False
        # (vLLM caps these token counts at max_model_len; check_requests makes that a no-op.)
        num_tokens_need_slot = num_computed + num_new_tokens
        if self.blocks_to_allocate(request, num_tokens_need_slot, hits) + watermark > free:
            return False
        blocks = self.req_to_blocks.setdefault(request.index, [])
        if hits:  # KVCacheCoordinator.allocate_new_computed_blocks
            self.pool.touch(hits)
            blocks.extend(hits)
            self.num_cached_block[request.index] = len(blocks)
        num_new_blocks = cdiv(num_tokens_need_slot, self.block_size) - len(blocks)
        if num_new_blocks > 0:
            blocks.extend(self.pool.get_new_blocks(num_new_blocks))
        # Blocks are cached as they are scheduled, not once computed: a request admitted later
        # in the same step already finds them.
        self.cache_blocks(request, min(num_new_tokens + num_computed, request.num_tokens))
        return True

    def cache_blocks(self, request: Request, num_tokens: int) -> None:
        """``SingleTypeKVCacheManager.cache_blocks``: enter the request's newly full blocks (of
        its first ``num_tokens`` tokens) in the prefix-cache map."""
        if not self.enable_caching:
            return
        num_cached = self.num_cached_block.get(request.index, 0)
        num_full = min(num_tokens, len(request.block_hashes) * self.block_size) // self.block_size
        if num_cached >= num_full:
            return
        self.pool.cache_full_blocks(request, self.req_to_blocks[request.index], num_cached, num_full)
        self.num_cached_block[request.index] = num_full

    def free(self, request: Request) -> None:
        """``SingleTypeKVCacheManager.free``: give the request's blocks back, the last one first,
        so that a prompt's tail is evicted before its head."""
        blocks = self.req_to_blocks.pop(request.index, [])
        self.num_cached_block.pop(request.index, None)
        self.pool.free_blocks(reversed(blocks))


# --------------------------------------------------------------------------- the waiting queue


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


# --------------------------------------------------------------------------- the policy


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


# --------------------------------------------------------------------------- the scheduler


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
        self.policy = Policy(config.policy)
        self.waiting = self.policy.queue()
        self.running: list[Request] = []

    def add_request(self, request: Request) -> None:
        """``Scheduler.add_request``: a new arrival joins the waiting queue."""
        self.waiting.add_request(request)

    def has_unfinished_requests(self) -> bool:
        return bool(self.running) or len(self.waiting) > 0

    def schedule(self) -> StepPlan:
        """``Scheduler.schedule``: decide the step."""
        cfg, kv = self.config, self.kv_cache_manager
        plan = StepPlan()
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
                # It preempted itself; under priority the more urgent requests after it may still
                # fit (under fcfs it was the last running one: the loop ends).
                continue
            scheduled[request.index] = (request, num_new_tokens)
            token_budget -= num_new_tokens
            req_index += 1

        # Then the waiting requests, unless the pool was short this step ("Next, schedule the
        # WAITING requests"); the first one that does not fit stops admission.
        if not plan.preempted:
            while token_budget > 0 and len(self.waiting) > 0 and len(self.running) < cfg.max_num_seqs:
                request = self.waiting.peek_request()
                hits, num_hit_tokens = kv.get_computed_blocks(request)
                num_new_tokens = request.num_tokens - num_hit_tokens
                if 0 < threshold < num_new_tokens:
                    num_new_tokens = threshold
                if not cfg.enable_chunked_prefill and num_new_tokens > token_budget:
                    break  # without chunked prefill the whole rest must fit in this step
                num_new_tokens = min(num_new_tokens, token_budget)
                if not kv.allocate_slots(
                    request,
                    num_new_tokens,
                    hits,
                    full_sequence_must_fit=cfg.scheduler_reserve_full_isl,
                    has_scheduled_reqs=bool(self.running),
                ):
                    break
                self.waiting.pop_request()
                self.running.append(request)
                request.status = RUNNING
                request.num_computed_tokens = num_hit_tokens
                scheduled[request.index] = (request, num_new_tokens)
                plan.admitted.append((request, num_hit_tokens))
                token_budget -= num_new_tokens

        # _update_after_schedule: the scheduled tokens count as computed from now on.
        for request, num_new_tokens in scheduled.values():
            computed = request.num_computed_tokens
            plan.work.append((num_new_tokens, computed, request.num_tokens - computed))
            request.num_computed_tokens = computed + num_new_tokens
        return plan

    def _preempt_request(self, request: Request) -> None:
        """``Scheduler._preempt_request``: recompute preemption. The request's blocks are freed
        and its progress reset; it waits again, at the front of the queue."""
        self.kv_cache_manager.free(request)
        request.status = PREEMPTED
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


# --------------------------------------------------------------------------- a run that cannot end

QUIET_STEPS = 64
"""Steps without an output token before :class:`LivelockGuard` starts comparing states."""


class LivelockGuard:
    """Stops a run that cannot end. vLLM preempts the running request of the largest
    ``(priority, arrival)``, the first such in running order; under ``priority``, requests that
    tie on both can preempt one another forever, each losing its progress before it produces a
    token. The engine is deterministic, so such a run repeats its state exactly (the clock
    aside, once every request has arrived). After :data:`QUIET_STEPS` steps without an output
    token, the guard compares the whole state step after step with a saved one (Brent's cycle
    detection, saving anew after 1, 2, 4... steps): a repeat is a livelock. A token or an
    arrival resets it; runs that produce tokens never pay for it."""

    def __init__(self) -> None:
        self.quiet = 0
        self.saved: Optional[tuple] = None
        self.power = 1
        self.since_saved = 0

    def repeats(self, progressed: bool, state: Callable[..., tuple], *args: object) -> bool:
        """After a step: ``progressed`` when it produced a token or a request arrived;
        ``state(*args)`` is the engine's whole state. True when the state repeated."""
        if progressed:
            self.quiet, self.saved = 0, None
            return False
        self.quiet += 1
        if self.quiet < QUIET_STEPS:
            return False
        current = state(*args)
        if current == self.saved:
            return True
        self.since_saved += 1
        if self.saved is None or self.since_saved == self.power:
            self.power = 1 if self.saved is None else self.power * 2
            self.since_saved = 0
            self.saved = current
        return False


def engine_state(scheduler: Scheduler, clock: Optional[float]) -> tuple:
    """Everything that decides the steps to come: the running and waiting requests in order,
    with their progress and blocks, the pool (its free queue, reference counts, cached
    content), and ``clock`` (the time, until every request has arrived; else None)."""
    kv, pool = scheduler.kv_cache_manager, scheduler.kv_cache_manager.pool
    waiting = scheduler.waiting
    order = list(waiting._queue) if isinstance(waiting, FCFSQueue) else [r for _, r in sorted(waiting._heap)]
    requests = tuple(
        (
            r.index,
            r.status,
            r.num_computed_tokens,
            r.num_output_tokens,
            kv.num_cached_block.get(r.index, 0),
            tuple(b.block_id for b in kv.req_to_blocks.get(r.index, ())),
        )
        for r in [*scheduler.running, *order]
    )
    blocks = tuple((b.ref_cnt, b.block_hash) for b in pool.blocks)
    cached = tuple(sorted((h, tuple(holders)) for h, holders in pool.cached.items()))
    return clock, len(scheduler.running), requests, tuple(pool.free_queue._queue), blocks, cached


def livelock_error(scheduler: Scheduler, policy: str) -> ArgumentError:
    """The error of a run that repeats itself forever, naming the requests caught in it."""
    waiting = scheduler.waiting
    queued = list(waiting._queue) if isinstance(waiting, FCFSQueue) else [r for _, r in waiting._heap]
    caught = sorted(r.index for r in [*scheduler.running, *queued])
    more = f" (and {len(caught) - 5} more)" if len(caught) > 5 else ""
    return ArgumentError(
        f"requests={', '.join(map(str, caught[:5]))}{more} is not accepted: requests the scheduler can serve: "
        f"with policy={policy!r} these preempt one another forever, the same steps repeating without a token "
        "(vLLM 0.33.0 preempts the first running request of the largest (priority, arrival), so requests that "
        "tie keep resetting each other's progress); give them distinct priorities or arrivals, or use policy='fcfs'"
    )


# --------------------------------------------------------------------------- the engine loop


class Stepper:
    """The scheduler as :func:`osbench.serve.drive.drive` runs it: requests become
    :class:`Request` objects as they arrive, and each step's plan and output are reported by
    request index."""

    def __init__(self, requests: Requests, config: EngineConfig, priority: np.ndarray) -> None:
        self.config = config
        self.scheduler = Scheduler(config)
        self.requests = requests
        self.priority = priority
        self.keys: Optional[np.ndarray] = None
        self.offsets: Optional[np.ndarray] = None
        if config.enable_prefix_caching:
            self.keys, self.offsets = requests.prompt_block_keys(config.block_size)
        self.plan = StepPlan()

    def add_request(self, index: int, arrival: float) -> None:
        keys, offsets = self.keys, self.offsets
        own_keys = None if keys is None or offsets is None else keys[offsets[index] : offsets[index + 1]]
        r = self.requests
        request = Request(
            index, arrival, int(self.priority[index]), int(r.prompt_len[index]), int(r.output_len[index]), own_keys
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
        )

    def update_from_output(self) -> Output:
        produced, finished = self.scheduler.update_from_output(self.plan)
        tokens = [(r.index, r.num_output_tokens == 1, r.status == FINISHED) for r in produced]
        return Output(tokens, len(finished), len(self.scheduler.kv_cache_manager.pool.cached))

    def state(self, clock: Optional[float]) -> tuple:
        return engine_state(self.scheduler, clock)

    def livelock_error(self) -> Exception:
        return livelock_error(self.scheduler, self.config.policy)


def run(
    requests: Requests,
    config: EngineConfig,
    step_time: StepTimeModel,
    *,
    record: bool = False,
    concurrency: Optional[int] = None,
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
    recorder = Recorder(len(requests), record)
    stepper = Stepper(requests, config, priority)
    return drive(requests, stepper, step_time, recorder, guard=LivelockGuard(), concurrency=concurrency)
