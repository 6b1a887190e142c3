//! A set of access times with fast "how many marks up to t" queries, for LRU stack distances.

/// Times per block: 8 words of 64 bits, one cache line of the bitmap.
pub(super) const BLOCK_BITS: usize = 512;
const WORDS_PER_BLOCK: usize = BLOCK_BITS / 64;

/// A set of times: a bitmap plus a Fenwick tree of per-block counts (a block is one cache
/// line of the bitmap, so the tree is 512 times smaller than the window and stays in L1/L2).
///
/// New marks always land in the newest block, which counts by popcount only; it joins the
/// tree when time moves past it. That saves one of the three tree walks per access.
pub(super) struct Marks {
    bits: Vec<u64>,
    tree: Vec<u32>, // 1-based Fenwick tree over the blocks before `open_block`
    open_block: usize,
    pub(super) live: u32,
}

impl Marks {
    pub(super) fn new(window: usize) -> Self {
        let blocks = window.div_ceil(BLOCK_BITS);
        Marks { bits: vec![0; blocks * WORDS_PER_BLOCK], tree: vec![0; blocks + 1], open_block: 0, live: 0 }
    }

    fn block_count(&self, block: usize) -> u32 {
        self.bits[block * WORDS_PER_BLOCK..(block + 1) * WORDS_PER_BLOCK].iter().map(|w| w.count_ones()).sum()
    }

    /// Number of marks at times <= t.
    #[inline]
    pub(super) fn count_through(&self, t: usize) -> u32 {
        let word = t >> 6;
        let block = t / BLOCK_BITS;
        let mut sum = (self.bits[word] & (u64::MAX >> (63 - (t & 63)))).count_ones();
        for w in &self.bits[block * WORDS_PER_BLOCK..word] {
            sum += w.count_ones();
        }
        let mut i = block; // blocks [0, block): a Fenwick prefix of length `block`
        while i > 0 {
            sum += self.tree[i];
            i &= i - 1;
        }
        sum
    }

    #[inline]
    fn add(&mut self, block: usize, delta: u32) {
        let mut i = block + 1;
        while i < self.tree.len() {
            self.tree[i] = self.tree[i].wrapping_add(delta);
            i += i & i.wrapping_neg();
        }
    }

    /// Mark time `t`, the newest time so far.
    #[inline]
    pub(super) fn set(&mut self, t: usize) {
        let block = t / BLOCK_BITS;
        while self.open_block < block {
            let count = self.block_count(self.open_block);
            self.add(self.open_block, count);
            self.open_block += 1;
        }
        self.bits[t >> 6] |= 1 << (t & 63);
        self.live += 1;
    }

    /// Whether time `t` is marked.
    #[inline]
    pub(super) fn is_set(&self, t: usize) -> bool {
        self.bits[t >> 6] & (1 << (t & 63)) != 0
    }

    #[inline]
    pub(super) fn clear(&mut self, t: usize) {
        self.bits[t >> 6] &= !(1 << (t & 63));
        if t / BLOCK_BITS < self.open_block {
            self.add(t / BLOCK_BITS, u32::MAX); // -1, wrapping
        }
        self.live -= 1;
    }

    /// Rebuild from scratch with times 0..n marked.
    pub(super) fn reset_to_prefix(&mut self, n: usize) {
        for (w, word) in self.bits.iter_mut().enumerate() {
            let lo = w * 64;
            *word = if n >= lo + 64 {
                u64::MAX
            } else if n > lo {
                u64::MAX >> (64 - (n - lo))
            } else {
                0
            };
        }
        self.tree.iter_mut().for_each(|v| *v = 0);
        self.open_block = n / BLOCK_BITS;
        for b in 0..self.open_block {
            self.tree[b + 1] = self.block_count(b);
        }
        for i in 1..self.tree.len() {
            let parent = i + (i & i.wrapping_neg());
            if parent < self.tree.len() {
                self.tree[parent] += self.tree[i];
            }
        }
        self.live = n as u32;
    }
}
