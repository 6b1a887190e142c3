//! Random: evict an object drawn uniformly from the cached ones (libCacheSim's `Random`). The
//! draws come from splitmix64 seeded with the `seed` parameter, as in the reference engine's
//! `Random` class, which this file follows step for step.
//!
//! The cached ids sit in one dense array; a draw picks a position, and the victim's place is
//! taken by the last member (swap-remove), so a draw is one index and an eviction O(1).

use crate::cache::demand::Evict;
use crate::cache::list::Dense;
use crate::cache::policy::{delegate, Options};
use crate::cache::NIL;
use crate::hash::SplitMix64;

pub struct Random {
    /// The cached ids, in no particular order.
    members: Dense<u32>,
    rng: SplitMix64,
}

impl Evict for Random {
    fn new(capacity: usize, n_ids: usize, options: Options) -> Self {
        Random { members: Dense::new(capacity.min(n_ids), n_ids), rng: SplitMix64(options.int("seed")) }
    }
    #[inline(always)]
    fn hit(&mut self, id: u32, _next_use: u64) -> bool {
        self.members.get(id) != NIL
    }
    #[inline]
    fn evict(&mut self) -> Option<u32> {
        if self.members.is_empty() {
            return None;
        }
        let at = self.rng.below(self.members.len() as u64) as usize;
        Some(self.members.swap_remove(at))
    }
    #[inline(always)]
    fn insert(&mut self, id: u32, _next_use: u64) -> u32 {
        self.members.push(id);
        id
    }
    delegate!(members: prefetch, contains, len);
}
