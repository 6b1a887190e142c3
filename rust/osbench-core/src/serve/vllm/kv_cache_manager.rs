//! The KV cache manager (`vllm/v1/core/kv_cache_manager.py: KVCacheManager`, for one
//! full-attention KV cache group: `UnitaryKVCacheCoordinator` and `FullAttentionManager`
//! folded in): each request's blocks, the prefix lookup at admission, slot allocation, and
//! freeing a request's blocks tail first.

use super::block_pool::BlockPool;
use super::request::{Request, Status};
use crate::error::{try_grow, Result};

/// `vllm/utils/math_utils.py: cdiv`.
#[inline]
pub fn cdiv(a: u64, b: u64) -> u64 {
    a.div_ceil(b)
}

#[derive(Debug, Clone)]
pub struct KvCacheManager {
    block_size: u64,
    enable_caching: bool,
    watermark_blocks: u64,
    pub pool: BlockPool,
    /// Each request's blocks, in token order (empty when it holds none).
    req_blocks: Vec<Vec<u32>>,
    /// How many of each request's blocks are in the prefix-cache map.
    num_cached_block: Vec<u64>,
    scratch: Vec<u32>,
}

impl KvCacheManager {
    pub fn new(
        num_requests: usize,
        num_blocks: u64,
        block_size: u64,
        enable_caching: bool,
        watermark_blocks: u64,
    ) -> Self {
        KvCacheManager {
            block_size,
            enable_caching,
            watermark_blocks,
            pool: BlockPool::new(num_blocks, enable_caching),
            req_blocks: Vec::with_capacity(num_requests),
            num_cached_block: Vec::with_capacity(num_requests),
            scratch: Vec::new(),
        }
    }

    /// Room for one more request (the next index).
    pub fn add_request(&mut self) {
        self.req_blocks.push(Vec::new());
        self.num_cached_block.push(0);
    }

    /// Blocks request `index` holds.
    pub fn num_blocks_held(&self, index: u32) -> u64 {
        self.req_blocks[index as usize].len() as u64
    }

    /// Blocks of request `index` entered in the prefix-cache map.
    pub fn num_cached_blocks(&self, index: u32) -> u64 {
        self.num_cached_block[index as usize]
    }

    /// The longest run of cached blocks from the prompt's start, into `hits`, and its length
    /// in tokens (`get_computed_blocks`, `find_longest_cache_hit`). At most `num_tokens - 1`
    /// tokens: the last one is always computed, for its logits.
    pub fn get_computed_blocks(&self, request: &Request, hits: &mut Vec<u32>) -> u64 {
        hits.clear();
        if !self.enable_caching {
            return 0;
        }
        let limit = (request.num_tokens() - 1) / self.block_size;
        // Hashes are chained: after a miss, everything misses.
        if request.private {
            // Only its own blocks can match (a request recomputed after a preemption).
            for k in 0..limit.min(request.num_keyed_blocks(self.block_size)) {
                match self.pool.get_private_block(request.index, k) {
                    Some(block) => hits.push(block),
                    None => break,
                }
            }
        } else {
            for &hash in request.block_hashes.iter().take(limit as usize) {
                match self.pool.get_cached_block(hash) {
                    Some(block) => hits.push(block),
                    None => break,
                }
            }
        }
        hits.len() as u64 * self.block_size
    }

    /// New blocks to hold `num_tokens` tokens, plus the hit blocks that are free now
    /// (`get_num_blocks_to_allocate`).
    fn blocks_to_allocate(&self, index: u32, num_tokens: u64, hits: &[u32]) -> u64 {
        let held = self.req_blocks[index as usize].len() as u64;
        let new = cdiv(num_tokens, self.block_size).saturating_sub(hits.len() as u64 + held);
        new + hits.iter().filter(|&&b| self.pool.ref_cnt(b) == 0).count() as u64
    }

    /// Blocks for the request's `num_new_tokens` next tokens, after its prefix `hits` (a request
    /// being admitted), or false if too few are free; then cache the blocks those tokens fill
    /// (`allocate_slots`).
    pub fn allocate_slots(
        &mut self,
        request: &Request,
        num_new_tokens: u64,
        hits: &[u32],
        full_sequence_must_fit: bool,
        has_scheduled_reqs: bool,
    ) -> Result<bool> {
        let index = request.index;
        let num_computed = request.num_computed_tokens + hits.len() as u64 * self.block_size;
        // The watermark holds back admissions only, and only while someone else runs.
        let admitting = matches!(request.status, Status::Waiting | Status::Preempted);
        let watermark = if has_scheduled_reqs && admitting { self.watermark_blocks } else { 0 };
        let free = self.pool.num_free_blocks();
        // scheduler_reserve_full_isl: the whole sequence must fit, not just this chunk.
        if full_sequence_must_fit && self.blocks_to_allocate(index, request.num_tokens(), hits) + watermark > free {
            return Ok(false);
        }
        let num_tokens_need_slot = num_computed + num_new_tokens;
        if self.blocks_to_allocate(index, num_tokens_need_slot, hits) + watermark > free {
            return Ok(false);
        }
        let blocks = &mut self.req_blocks[index as usize];
        let wanted = cdiv(num_tokens_need_slot, self.block_size);
        try_grow(blocks, (wanted as usize).saturating_sub(blocks.len()), "a request's block table")?;
        if !hits.is_empty() {
            self.pool.touch(hits);
            blocks.extend_from_slice(hits);
            self.num_cached_block[index as usize] = blocks.len() as u64;
        }
        if wanted > blocks.len() as u64 {
            let n = wanted - blocks.len() as u64;
            self.pool.get_new_blocks(n, blocks)?;
        }
        // Blocks are cached as they are scheduled: a request admitted later in the same step
        // already finds them.
        self.cache_blocks(request, (num_new_tokens + num_computed).min(request.num_tokens()))?;
        Ok(true)
    }

    /// Enter the request's newly full blocks (of its first `num_tokens` tokens) in the
    /// prefix-cache map (`cache_blocks`).
    fn cache_blocks(&mut self, request: &Request, num_tokens: u64) -> Result<()> {
        if !self.enable_caching {
            return Ok(());
        }
        let index = request.index as usize;
        let num_cached = self.num_cached_block[index];
        let hashed_tokens = request.num_keyed_blocks(self.block_size) * self.block_size;
        let num_full = num_tokens.min(hashed_tokens) / self.block_size;
        if num_cached >= num_full {
            return Ok(());
        }
        for i in num_cached..num_full {
            let block = self.req_blocks[index][i as usize];
            if request.private {
                self.pool.cache_private_block(block, request.index, i)?;
            } else {
                self.pool.cache_block(block, request.block_hashes[i as usize], i)?;
            }
        }
        self.num_cached_block[index] = num_full;
        Ok(())
    }

    /// Give the request's blocks back, the last one first, so that a prompt's tail is evicted
    /// before its head (`free`).
    pub fn free(&mut self, index: u32) {
        let blocks = std::mem::take(&mut self.req_blocks[index as usize]);
        self.num_cached_block[index as usize] = 0;
        self.pool.free_blocks(blocks.iter().rev().copied(), &mut self.scratch);
    }

    /// Request `index`'s blocks, as numbers (`livelock.rs`).
    pub fn write_request_state(&self, index: u32, out: &mut Vec<u64>) {
        let blocks = &self.req_blocks[index as usize];
        out.extend([self.num_cached_block[index as usize], blocks.len() as u64]);
        out.extend(blocks.iter().map(|&b| u64::from(b)));
    }
}
