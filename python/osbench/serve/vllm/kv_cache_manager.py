"""vLLM's KV cache manager (``vllm/v1/core/kv_cache_manager.py``): each request's blocks, the
prefix lookup at admission, slot allocation, tail-first free."""

from __future__ import annotations

from collections.abc import Sequence

from osbench.serve.vllm.block_pool import Block, BlockPool
from osbench.serve.vllm.config import EngineConfig
from osbench.serve.vllm.request import PREEMPTED, WAITING, Request


def cdiv(a: int, b: int) -> int:
    """``vllm/utils/math_utils.py: cdiv``: ceiling division."""
    return -(-a // b)


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
        limit = min((request.num_tokens - 1) // self.block_size, request.num_keyed_blocks(self.block_size))
        for k in range(limit):
            block = self.pool.get_cached_block(request.block_key(k))
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
        num_full = min(num_tokens, request.num_keyed_blocks(self.block_size) * self.block_size) // self.block_size
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
