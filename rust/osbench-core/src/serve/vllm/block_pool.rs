//! The KV block pool: every block, the free queue, and the prefix-cache map
//! (`vllm/v1/core/block_pool.py: BlockPool`, `kv_cache_utils.py: FreeKVCacheBlockQueue`).
//!
//! The free queue is an intrusive doubly linked list over block ids, as vLLM's: taking the
//! head, putting freed blocks at either end and removing a cached block from the middle on a
//! prefix hit are O(1). Blocks are materialised lazily: at start the queue is blocks
//! `1..num_blocks` in id order (block 0 is vLLM's null block, never handed out), and the part
//! of that run no one has taken yet is one placeholder node (slot 0, the null block's) that
//! hands out the next untouched id. Memory follows the blocks a run touches, not
//! `num_blocks`.
//!
//! The map from a block hash to the blocks holding that content keeps, per hash, its blocks
//! in the order they were entered (equal content computed twice is cached twice, as vLLM's
//! `BlockHashToBlockMap`; a lookup takes the oldest): one more intrusive list per hash.
//!
//! A request without content (`Request::private`) has blocks no other request can hit: their
//! hashes would equal no other. Only the request itself can hit them, after a preemption. So
//! they are cached under (request, position) in a table of that request's own, with the same
//! lists, instead of hashed into the map: the same cache as vLLM's (the same blocks cached,
//! counted, found and evicted, in the same order), without a hash or a map operation.

use crate::error::{internal, invalid, try_grow, Error, Result};
use crate::radix::tree::MixBuild;
use std::collections::HashMap;

/// No block: the end of a list.
const NIL: u32 = u32::MAX;
/// The placeholder of the untouched blocks in the free queue (the null block's slot).
const UNTOUCHED: u32 = 0;

#[derive(Debug, Clone)]
struct Block {
    /// Requests holding the block; at 0 it is free (it may still hold cached content).
    ref_cnt: u32,
    /// Set while the block is in the prefix-cache map (or its request's private table).
    cached: bool,
    /// Cached under (request, position) in a private table, not under a hash.
    private: bool,
    /// The hash, or for a private block `request << 32 | position`.
    hash: u64,
    /// Its place in its request's blocks while cached (what recomputing it would cost).
    position: u64,
    /// Free-queue links.
    prev: u32,
    next: u32,
    /// Links among the blocks cached under the same hash, oldest first.
    hash_prev: u32,
    hash_next: u32,
}

impl Block {
    const NEW: Block = Block {
        ref_cnt: 0,
        cached: false,
        private: false,
        hash: 0,
        position: 0,
        prev: NIL,
        next: NIL,
        hash_prev: NIL,
        hash_next: NIL,
    };
}

/// The blocks cached under one hash: the ends of their list.
#[derive(Debug, Clone, Copy)]
struct Holders {
    oldest: u32,
    newest: u32,
}

impl Holders {
    /// No block (a private table's empty position).
    const NONE: Holders = Holders { oldest: NIL, newest: NIL };
}

/// The pool. Block ids are `u32`; `num_blocks` may be far larger (untouched blocks cost
/// nothing).
#[derive(Debug, Clone)]
pub struct BlockPool {
    enable_caching: bool,
    num_blocks: u64,
    /// Materialised blocks, ids `0..blocks.len()`; the next untouched id is `blocks.len()`.
    blocks: Vec<Block>,
    head: u32,
    tail: u32,
    /// Materialised blocks in the free queue.
    queued: u64,
    cached: HashMap<u64, Holders, MixBuild>,
    /// Private tables: per request (by index), per block position, its own cached blocks;
    /// dropped when it finishes (nothing can look them up any more).
    private: Vec<Vec<Holders>>,
    /// Positions with a block in a private table: distinct contents, as the map's hashes.
    num_private: u64,
    /// Blocks taken from the free queue and blocks entered in the map, since the start: a step
    /// that changes neither left the pool as it was.
    pub allocations: u64,
    pub registrations: u64,
    /// With KV tiers: the contents (hash, position) whose last block was evicted, in order,
    /// until the tiers take them (`tiers.py`); None without tiers.
    pub evicted: Option<Vec<(u64, u64)>>,
}

impl BlockPool {
    pub fn new(num_blocks: u64, enable_caching: bool) -> Self {
        // Slot 0 is the null block, popped at start (`BlockPool.__init__`); its node stands
        // for the untouched run `1..num_blocks` (empty when num_blocks is 1).
        let mut pool = BlockPool {
            enable_caching,
            num_blocks,
            blocks: vec![Block::NEW],
            head: NIL,
            tail: NIL,
            queued: 0,
            cached: HashMap::default(),
            private: Vec::new(),
            num_private: 0,
            allocations: 0,
            registrations: 0,
            evicted: None,
        };
        if num_blocks > 1 {
            pool.push_back(UNTOUCHED);
        }
        pool
    }

    /// Untouched blocks left (never handed out yet).
    fn untouched(&self) -> u64 {
        self.num_blocks - self.blocks.len() as u64
    }

    /// Free blocks, cached ones no request holds included (`get_num_free_blocks`).
    pub fn num_free_blocks(&self) -> u64 {
        // The placeholder is queued but is not a block.
        let placeholder = u64::from(self.untouched() > 0);
        self.queued - placeholder + self.untouched()
    }

    /// Distinct contents cached (`len(cached_block_hash_to_block)`): hashes in the map and
    /// positions in the private tables.
    pub fn num_cached_hashes(&self) -> u64 {
        self.cached.len() as u64 + self.num_private
    }

    pub fn ref_cnt(&self, block: u32) -> u32 {
        self.blocks[block as usize].ref_cnt
    }

    // ------------------------------------------------------------------ the free queue

    fn push_back(&mut self, b: u32) {
        let tail = self.tail;
        let node = &mut self.blocks[b as usize];
        node.prev = tail;
        node.next = NIL;
        if tail == NIL {
            self.head = b;
        } else {
            self.blocks[tail as usize].next = b;
        }
        self.tail = b;
        self.queued += 1;
    }

    fn push_front(&mut self, b: u32) {
        let head = self.head;
        let node = &mut self.blocks[b as usize];
        node.prev = NIL;
        node.next = head;
        if head == NIL {
            self.tail = b;
        } else {
            self.blocks[head as usize].prev = b;
        }
        self.head = b;
        self.queued += 1;
    }

    fn unlink(&mut self, b: u32) {
        let Block { prev, next, .. } = self.blocks[b as usize];
        if prev == NIL {
            self.head = next;
        } else {
            self.blocks[prev as usize].next = next;
        }
        if next == NIL {
            self.tail = prev;
        } else {
            self.blocks[next as usize].prev = prev;
        }
        let node = &mut self.blocks[b as usize];
        node.prev = NIL;
        node.next = NIL;
        self.queued -= 1;
    }

    /// The first free block (`FreeKVCacheBlockQueue.popleft`). Called only when one is free.
    fn pop_front(&mut self) -> Result<u32> {
        let b = self.head;
        if b == NIL {
            return Err(internal("a block was taken from an empty free queue"));
        }
        if b != UNTOUCHED {
            self.unlink(b);
            return Ok(b);
        }
        // The next untouched block, materialised now.
        let id = self.blocks.len();
        if id >= NIL as usize - 1 {
            return Err(invalid(
                "num_blocks",
                self.num_blocks,
                format!("a pool whose run touches fewer than {} distinct blocks", NIL - 1),
            ));
        }
        self.blocks.push(Block::NEW);
        if self.untouched() == 0 {
            self.unlink(UNTOUCHED);
        }
        Ok(id as u32)
    }

    // ------------------------------------------------------------------ the prefix-cache map

    /// The oldest block holding this content, if any (`get_cached_block`).
    pub fn get_cached_block(&self, hash: u64) -> Option<u32> {
        self.cached.get(&hash).map(|h| h.oldest)
    }

    /// The oldest block request `index` cached at `position`, if any: `get_cached_block` for
    /// a private request.
    pub fn get_private_block(&self, index: u32, position: u64) -> Option<u32> {
        let oldest = self.private.get(index as usize)?.get(position as usize)?.oldest;
        (oldest != NIL).then_some(oldest)
    }

    /// Enter `block`, block `position` of its request, in the map under `hash`, after the
    /// blocks already there (`cache_full_blocks`, one block).
    pub fn cache_block(&mut self, block: u32, hash: u64, position: u64) -> Result<()> {
        if self.cached.len() == self.cached.capacity() {
            self.cached.try_reserve(1).map_err(|_| Error::OutOfMemory { what: "the prefix-cache map".into() })?;
        }
        let holders = self.cached.entry(hash).or_insert(Holders::NONE);
        let first = holders.oldest == NIL;
        let newest = std::mem::replace(&mut holders.newest, block);
        if first {
            holders.oldest = block;
        }
        self.blocks[block as usize].position = position;
        self.link_holder(block, hash, false, newest);
        Ok(())
    }

    /// Enter `block` in request `index`'s private table at `position` (`cache_full_blocks` for
    /// a private request: the same list, without the hash).
    pub fn cache_private_block(&mut self, block: u32, index: u32, position: u64) -> Result<()> {
        let (i, k) = (index as usize, position as usize);
        if self.private.len() <= i {
            let more = i + 1 - self.private.len();
            try_grow(&mut self.private, more, "the private prefix-cache tables")?;
            self.private.resize_with(i + 1, Vec::new);
        }
        let table = &mut self.private[i];
        if table.len() <= k {
            let more = k + 1 - table.len();
            try_grow(table, more, "a request's private prefix-cache table")?;
            table.resize(k + 1, Holders::NONE);
        }
        let holders = &mut table[k];
        if holders.oldest == NIL {
            holders.oldest = block;
            self.num_private += 1;
        }
        let newest = std::mem::replace(&mut holders.newest, block);
        self.link_holder(block, u64::from(index) << 32 | position, true, newest);
        Ok(())
    }

    /// Mark `block` cached under `key`, after `newest` (NIL: the first) in its list.
    fn link_holder(&mut self, block: u32, key: u64, private: bool, newest: u32) {
        let node = &mut self.blocks[block as usize];
        debug_assert!(!node.cached, "a block is cached once");
        node.cached = true;
        node.private = private;
        node.hash = key;
        node.hash_prev = newest;
        node.hash_next = NIL;
        if newest != NIL {
            self.blocks[newest as usize].hash_next = block;
        }
        self.registrations += 1;
    }

    /// A finished request's private table goes: nothing can look it up again. Its blocks stay
    /// cached (and counted) until evicted; their lists still link them.
    pub fn forget_private(&mut self, index: u32) {
        if let Some(table) = self.private.get_mut(index as usize) {
            *table = Vec::new();
        }
    }

    /// Take `block` out of the map: its cached content is evicted (`_maybe_evict_cached_block`).
    fn evict(&mut self, block: u32) {
        let Block { hash, private, hash_prev, hash_next, .. } = self.blocks[block as usize];
        if hash_prev != NIL {
            self.blocks[hash_prev as usize].hash_next = hash_next;
        }
        if hash_next != NIL {
            self.blocks[hash_next as usize].hash_prev = hash_prev;
        }
        let last = hash_prev == NIL && hash_next == NIL;
        let holders = if private {
            if last {
                self.num_private -= 1;
            }
            // A finished request's table is gone; its lists need no ends any more.
            let (i, k) = ((hash >> 32) as usize, (hash & u64::from(u32::MAX)) as usize);
            self.private.get_mut(i).and_then(|table| table.get_mut(k))
        } else if last {
            self.cached.remove(&hash);
            if let Some(evicted) = &mut self.evicted {
                evicted.push((hash, self.blocks[block as usize].position));
            }
            None
        } else {
            self.cached.get_mut(&hash)
        };
        if let Some(holders) = holders {
            if hash_prev == NIL {
                holders.oldest = hash_next;
            }
            if hash_next == NIL {
                holders.newest = hash_prev;
            }
        }
        let node = &mut self.blocks[block as usize];
        node.cached = false;
        node.private = false;
        node.hash_prev = NIL;
        node.hash_next = NIL;
    }

    // ------------------------------------------------------------------ requests' blocks

    /// The first `n` free blocks, appended to `out` (`get_new_blocks`); a cached one loses its
    /// content: this is the prefix cache's eviction, least recently freed first. Called only
    /// when `n` blocks are free.
    pub fn get_new_blocks(&mut self, n: u64, out: &mut Vec<u32>) -> Result<()> {
        // Those not in the queue yet are materialised: room for them first.
        let placeholder = u64::from(self.untouched() > 0);
        let materialised = n.saturating_sub(self.queued - placeholder) as usize;
        try_grow(&mut self.blocks, materialised, "the KV blocks")?;
        try_grow(out, n as usize, "a request's block table")?;
        for _ in 0..n {
            let b = self.pop_front()?;
            if self.blocks[b as usize].cached {
                self.evict(b);
            }
            self.blocks[b as usize].ref_cnt = 1;
            self.allocations += 1;
            out.push(b);
        }
        Ok(())
    }

    /// A prefix hit takes a reference to each block; a free one leaves the free queue
    /// (`touch`).
    pub fn touch(&mut self, blocks: &[u32]) {
        for &b in blocks {
            if self.blocks[b as usize].ref_cnt == 0 {
                self.unlink(b);
            }
            self.blocks[b as usize].ref_cnt += 1;
        }
    }

    /// Drop a reference to each block, in eviction order (`free_blocks`). Blocks no one holds
    /// go back to the free queue: with cached content to the back (evicted last, least
    /// recently used first), without to the front (reused first, the first of them first).
    /// `scratch` is reused between calls.
    pub fn free_blocks(&mut self, ordered: impl Iterator<Item = u32>, scratch: &mut Vec<u32>) {
        scratch.clear();
        for b in ordered {
            let node = &mut self.blocks[b as usize];
            node.ref_cnt -= 1;
            if node.ref_cnt == 0 {
                if node.cached && self.enable_caching {
                    self.push_back(b);
                } else {
                    scratch.push(b);
                }
            }
        }
        // prepend_n: the first of them ends at the very front.
        for i in (0..scratch.len()).rev() {
            let b = scratch[i];
            self.push_front(b);
        }
    }

    /// How many numbers [`BlockPool::write_state`] writes.
    pub fn state_len(&self) -> u64 {
        4 + 7 * self.blocks.len() as u64
    }

    /// The whole state, as numbers (`livelock.rs`): every block, the queue's ends.
    pub fn write_state(&self, out: &mut Vec<u64>) {
        out.extend([self.blocks.len() as u64, u64::from(self.head), u64::from(self.tail), self.queued]);
        for b in &self.blocks {
            out.extend([u64::from(b.ref_cnt), u64::from(b.cached) | u64::from(b.private) << 1, b.hash]);
            out.extend([u64::from(b.prev), u64::from(b.next)]);
            out.extend([u64::from(b.hash_prev), u64::from(b.hash_next)]);
        }
    }
}
