"""vLLM's KV block pool (``vllm/v1/core/block_pool.py``, ``kv_cache_utils.py``): every block, the
free queue and the prefix-cache map."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Sequence
from typing import Optional

from osbench.serve.vllm.request import Request

UNTOUCHED = 0
"""The free queue's entry for its run of untouched blocks: the null block's id, as the null
block itself is never queued."""


class Block:
    """One KV block (``core/kv_cache_utils.py: KVCacheBlock``)."""

    __slots__ = ("block_hash", "block_id", "position", "ref_cnt")

    def __init__(self, block_id: int) -> None:
        self.block_id = block_id
        self.ref_cnt = 0
        """Requests holding the block. At 0 it is free, though it may still hold a cached prefix."""
        self.block_hash: Optional[int] = None
        """Set while the block is in the prefix-cache map."""
        self.position = 0
        """Its place in its request's blocks while cached (what recomputing it would cost)."""


class FreeBlockQueue:
    """``core/kv_cache_utils.py: FreeKVCacheBlockQueue``: the free blocks in the order they will
    be reused (and their cached content evicted), front first. vLLM links the blocks in a doubly
    linked list; an ordered dict does the same four things in O(1): pop the front, remove from
    the middle, push at either end.

    At start the queue is blocks ``1..num_blocks-1`` in id order (block 0 is the null block).
    The blocks no one has taken yet stay one run in that order, wherever freed blocks are put
    around it: one entry (:data:`UNTOUCHED`) holds the run's place, and a block of it is made
    when it is taken, the next id first. A pool of 10**8 blocks costs the blocks a run touches."""

    def __init__(self, blocks: list[Block], num_blocks: int) -> None:
        self._blocks = blocks
        """The pool's blocks made so far, ids ``0..len - 1``; the next untouched id is ``len``."""
        self._untouched = num_blocks - len(blocks)
        """Blocks never taken yet."""
        self._queue: OrderedDict[int, Optional[Block]] = OrderedDict()
        if self._untouched > 0:
            self._queue[UNTOUCHED] = None

    def __len__(self) -> int:
        # The run's entry is no block; the run's blocks are.
        return len(self._queue) + self._untouched - (self._untouched > 0)

    def popleft(self) -> Block:
        first = next(iter(self._queue))
        if first != UNTOUCHED:
            block = self._queue.pop(first)
            assert block is not None
            return block
        block = Block(len(self._blocks))
        self._blocks.append(block)
        self._untouched -= 1
        if self._untouched == 0:
            del self._queue[UNTOUCHED]
        return block

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
        # BlockPool.__init__: block 0 becomes the null block, a placeholder never handed out
        # (vLLM pops it from the queue at once: the queue starts at block 1).
        self.null_block = Block(0)
        self.blocks = [self.null_block]
        """The blocks made so far (:class:`FreeBlockQueue` makes the others when first taken)."""
        self.free_queue = FreeBlockQueue(self.blocks, num_blocks)
        # BlockHashToBlockMap: equal content computed twice is cached twice (vLLM does not
        # de-duplicate, so that block tables stay append-only); a lookup takes the oldest.
        self.cached: dict[int, dict[int, Block]] = {}
        self.evicted: Optional[list[tuple[int, int]]] = None
        """With KV tiers: the contents ``(hash, position)`` whose last block was evicted, in
        order, until the tiers take them (:mod:`osbench.serve.vllm.tiers`); None without."""

    @property
    def num_free_blocks(self) -> int:
        return len(self.free_queue)

    def get_cached_block(self, block_hash: int) -> Optional[Block]:
        """``BlockPool.get_cached_block``: a block holding this content, if any."""
        holders = self.cached.get(block_hash)
        return next(iter(holders.values())) if holders else None

    def cache_full_blocks(self, request: Request, blocks: list[Block], num_cached: int, num_full: int) -> None:
        """``BlockPool.cache_full_blocks``: blocks ``num_cached:num_full`` of the request are
        full; enter them in the map under the request's block hashes (or private tags)."""
        for i in range(num_cached, num_full):
            block, h = blocks[i], request.block_key(i)
            block.block_hash, block.position = h, i
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
                    # Private tags (below 0) go to no tier: no other request can hit them.
                    if self.evicted is not None and block.block_hash >= 0:
                        self.evicted.append((block.block_hash, block.position))
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
