//! LRU-Prob: LRU whose hit moves the object to the front only sometimes (libCacheSim's
//! `LRUProb`, `LRU_Prob.c`), step for step as the reference engine's `LRUProb` class.
//!
//! A hit promotes with probability `1 / threshold`, where `threshold` is `1 / prob` truncated
//! to an integer, as libCacheSim computes it (`(int)1.0 / prob`): `prob` 0.5 promotes one hit
//! in 2, 0.3 one in 3, anything above 0.5 every hit (LRU). Fewer promotions is fewer writes to
//! the list, what a concurrent cache pays a lock for; an object then leaves by its insertion or
//! last promotion, not its last access. A newcomer enters at the front; the back leaves. The
//! draws are splitmix64 seeded with `seed` (`below(threshold) == 0`); libCacheSim draws from
//! its own generator (`next_rand() % threshold == 0`), so the two agree in distribution.

use crate::cache::demand::Evict;
use crate::cache::policies::lru::Lru;
use crate::cache::policy::{delegate, Options};
use crate::hash::SplitMix64;

/// A hit promotes when a draw below this is 0: `1 / prob` truncated, as libCacheSim computes
/// it (at least 1; `as` saturates where `1 / prob` is beyond `u64`).
pub fn threshold(prob: f64) -> u64 {
    ((1.0 / prob) as u64).max(1)
}

/// An LRU list whose hits promote only when a draw says so.
pub struct LruProb {
    lru: Lru,
    threshold: u64,
    rng: SplitMix64,
}

impl Evict for LruProb {
    fn new(capacity: usize, n_ids: usize, options: Options) -> Self {
        LruProb {
            lru: Lru::new(capacity, n_ids, options),
            threshold: threshold(options.real("prob")),
            rng: SplitMix64(options.int("seed")),
        }
    }
    #[inline(always)]
    fn hit(&mut self, id: u32, next_use: u64) -> bool {
        if !self.lru.contains(id) {
            // A miss through LRU's hit too: its lookup makes room for a new id, and it is false.
            return self.lru.hit(id, next_use);
        }
        // Every hit draws, as libCacheSim's does, even where the object is already in front;
        // LRU's hit is the promotion.
        if self.rng.below(self.threshold) == 0 {
            self.lru.hit(id, next_use);
        }
        true
    }
    #[inline]
    fn evict(&mut self) -> Option<u32> {
        self.lru.evict()
    }
    #[inline(always)]
    fn insert(&mut self, id: u32, next_use: u64) -> u32 {
        self.lru.insert(id, next_use)
    }
    delegate!(lru: prefetch, contains, len);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_threshold_truncates_one_over_prob_as_libcachesim_does() {
        assert_eq!(threshold(0.5), 2);
        assert_eq!(threshold(0.3), 3);
        assert_eq!(threshold(0.7), 1);
        assert_eq!(threshold(1.0), 1);
        assert_eq!(threshold(1e-300), u64::MAX);
    }
}
