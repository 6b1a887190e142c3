//! Random: evict an object drawn uniformly from the cached ones (libCacheSim's `Random`). The
//! draws come from splitmix64 seeded with the `seed` parameter, as in the reference engine's
//! `Random` class, which this file follows step for step.
//!
//! The cached ids sit in one dense array; a draw picks a position, and the victim's place is
//! taken by the last member (swap-remove), so a draw is one index and an eviction O(1).

use crate::cache::demand::Evict;
use crate::cache::memory::filled;
use crate::cache::policy::{ensure, Options};
use crate::cache::NIL;
use crate::hash::SplitMix64;

pub struct Random {
    /// The cached ids, in no particular order.
    members: Vec<u32>,
    /// Each id's position in `members`, or NIL.
    position: Vec<u32>,
    rng: SplitMix64,
}

impl Evict for Random {
    fn new(capacity: usize, n_ids: usize, options: Options) -> Self {
        Random {
            members: Vec::with_capacity(capacity.min(n_ids)),
            position: filled(n_ids, NIL),
            rng: SplitMix64(options.int("seed")),
        }
    }
    #[inline(always)]
    fn hit(&mut self, id: u32, _next_use: u64) -> bool {
        ensure(&mut self.position, id, NIL);
        self.position[id as usize] != NIL
    }
    #[inline]
    fn evict(&mut self) -> Option<u32> {
        if self.members.is_empty() {
            return None;
        }
        let at = self.rng.below(self.members.len() as u64) as usize;
        let victim = self.members.swap_remove(at);
        if let Some(&moved) = self.members.get(at) {
            self.position[moved as usize] = at as u32;
        }
        self.position[victim as usize] = NIL;
        Some(victim)
    }
    #[inline(always)]
    fn insert(&mut self, id: u32, _next_use: u64) -> u32 {
        self.position[id as usize] = self.members.len() as u32;
        self.members.push(id);
        id
    }
    #[inline(always)]
    fn prefetch(&self, id: u32) {
        crate::cache::memory::prefetch(self.position.as_ptr().wrapping_add(id as usize));
    }
    fn contains(&self, id: u32) -> bool {
        self.position.get(id as usize).is_some_and(|&p| p != NIL)
    }
    fn len(&self) -> usize {
        self.members.len()
    }
}
