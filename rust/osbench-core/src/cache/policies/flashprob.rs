//! FlashProb: an LRU in RAM in front of a FIFO on flash, an object leaving RAM written to flash
//! with probability `1 / threshold` (libCacheSim's `FlashProb`, `other/flashProb.c`), step for
//! step as the reference engine's `FlashProb` class.
//!
//! `threshold` is `1 / disk_admit_prob` truncated, as libCacheSim's `inv_prob` (shared with
//! LRU-Prob, [`lruprob::threshold`]). Flash holds `capacity - int(capacity * ram_size_ratio)`;
//! RAM's share bounds nothing, since libCacheSim never asks RAM's LRU for room: the whole cache
//! evicts while RAM and flash together cannot take the newcomer (`cache_get_base`), and RAM
//! takes every newcomer, so it holds what flash leaves. One eviction: with RAM empty, flash's
//! oldest leaves; else RAM's least recent leaves RAM and a draw (`below(threshold) == 0`)
//! decides whether it enters flash, where flash's oldest leave until it fits (an object larger
//! than flash is dropped). A move to flash frees nothing, so the loop goes on. A hit in RAM
//! moves the object to RAM's recent end; a hit on flash changes nothing. The draws are
//! splitmix64 seeded with `seed`; libCacheSim draws `next_rand() % inv_prob == 0` in the same
//! place, so the two agree in distribution, and miss for miss where `threshold` is 1.

use super::lruprob;
use crate::cache::list::Placed;
use crate::cache::policy::{delegate, Options, Policy};
use crate::hash::SplitMix64;

pub struct FlashProb {
    capacity: u64,
    disk_size: u64,
    threshold: u64,
    rng: SplitMix64,
    /// RAM (an LRU) and flash (a FIFO), each counting bytes in sized mode.
    places: Placed<2, 2>,
}

const RAM: usize = 0;
const DISK: usize = 1;

/// RAM's share of a cache of `capacity`, `int(capacity * ram_size_ratio)` in libCacheSim's
/// float arithmetic. It bounds nothing, but libCacheSim refuses a cache where it is 0.
pub(crate) fn ram_size(capacity: u64, ram_size_ratio: f64) -> u64 {
    (capacity as f64 * ram_size_ratio) as u64
}

/// Flash's share of a cache of `capacity`: what RAM's share leaves (at least 1, as the ratio
/// is below 1).
pub(crate) fn disk_size(capacity: u64, ram_size_ratio: f64) -> u64 {
    capacity - ram_size(capacity, ram_size_ratio)
}

/// The smallest capacity whose RAM share holds one object at `ratio` (libCacheSim refuses a
/// smaller one: "Invalid cache size configuration").
pub(crate) fn min_capacity(ratio: f64) -> u64 {
    let mut c = ((1.0 / ratio).ceil() as u64).max(1);
    while ram_size(c, ratio) < 1 && c < u64::MAX {
        // At least one step of `c as f64`, so that a large `c` does not creep up one by one.
        c = c.saturating_add((c >> 52).max(1));
    }
    while c > 1 && ram_size(c - 1, ratio) >= 1 {
        c -= 1;
    }
    c
}

impl FlashProb {
    /// libCacheSim's `flashProb_evict`: one object leaves RAM (perhaps for flash), or, with RAM
    /// empty, flash's oldest leaves the cache; false when both are empty.
    #[inline]
    fn evict<const SIZED: bool>(&mut self) -> bool {
        let q = &mut self.places;
        let Some(victim) = q.pop::<SIZED>(RAM) else {
            return q.drop_oldest::<SIZED>(DISK);
        };
        // The draw first, then flash's own get, which refuses an object larger than flash.
        let size = q.size::<SIZED>(victim);
        if self.rng.below(self.threshold) == 0 && size <= self.disk_size {
            q.make_room::<SIZED>(DISK, size, self.disk_size);
            q.push::<SIZED>(victim, DISK);
        } else {
            q.release(victim);
        }
        true
    }
}

impl Policy for FlashProb {
    fn new(capacity: usize, n_ids: usize, options: Options) -> Self {
        let capacity = capacity as u64;
        let expected = (capacity as usize).saturating_add(1).min(n_ids);
        FlashProb {
            capacity,
            disk_size: disk_size(capacity, options.real("ram_size_ratio")),
            threshold: lruprob::threshold(options.real("disk_admit_prob")),
            rng: SplitMix64(options.int("seed")),
            places: Placed::new(n_ids, expected),
        }
    }

    /// A lookup of a missing object changes nothing, so the trait's gated step is exact.
    #[inline(always)]
    fn step<const SIZED: bool>(&mut self, id: u32, size: u64, _next_use: u64) -> bool {
        match self.places.find(id) {
            Some((slot, RAM)) => {
                self.places.touch(RAM, slot);
                return true;
            }
            Some(_) => return true, // on flash
            None => {}
        }
        if SIZED && size > self.capacity {
            return false; // never admitted (libCacheSim's can_insert)
        }
        while self.places.used() + size > self.capacity && self.evict::<SIZED>() {}
        self.places.admit::<SIZED>(RAM, id, size);
        false
    }

    delegate!(places: prefetch, contains, len, used);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::params::Value;

    fn options(ratio: f64, prob: f64) -> Options {
        let o = Options::new().with("seed", Value::Int(0)).unwrap();
        let o = o.with("ram_size_ratio", Value::Real(ratio)).unwrap();
        o.with("disk_admit_prob", Value::Real(prob)).unwrap()
    }

    #[test]
    fn flash_takes_what_ram_leaves_as_libcachesim_computes_it() {
        assert_eq!(disk_size(100, 0.05), 95);
        assert_eq!(disk_size(20, 0.05), 19);
        assert_eq!(disk_size(7, 0.5), 4);
        assert_eq!(disk_size(2, 0.99), 1);
        assert_eq!((min_capacity(0.05), min_capacity(0.5), min_capacity(0.3), min_capacity(0.99)), (20, 2, 4, 2));
        assert_eq!(min_capacity(1e-300), u64::MAX);
        for ratio in [1e-17, 3e-17, 1e-18, 7.3e-19] {
            let c = min_capacity(ratio);
            assert!(ram_size(c, ratio) >= 1 && ram_size(c - 1, ratio) == 0, "{ratio}");
        }
    }

    #[test]
    fn ram_holds_the_whole_cache_while_flash_is_empty() {
        // Capacity 10, flash 5: ten newcomers all sit in RAM, beyond its share of 5.
        let mut c = FlashProb::new(10, 32, options(0.5, 1.0));
        for id in 0..10 {
            assert!(!c.step::<false>(id, 1, 0));
        }
        assert_eq!(c.places.held(RAM), 10);
        // The eleventh moves RAM's least recent objects to flash until one leaves it: flash
        // takes 0..5, then 5 pushes 0 out, freeing one place.
        assert!(!c.step::<false>(10, 1, 0));
        assert_eq!((c.places.held(RAM), c.places.held(DISK)), (5, 5));
        assert!(!c.contains(0) && (1..=10).all(|id| c.contains(id)));
        // A hit on flash leaves it first to go; a hit in RAM protects.
        assert!(c.step::<false>(1, 1, 0) && c.step::<false>(6, 1, 0));
        assert!(!c.step::<false>(11, 1, 0));
        assert!(!c.contains(1) && c.contains(6) && c.contains(7));
        assert_eq!(c.used(), 10);
    }

    #[test]
    fn what_held_counts_is_what_the_queues_hold() {
        let mut c = FlashProb::new(60, 64, options(0.3, 0.3));
        for i in 0..50_000u32 {
            c.step::<true>(i % 7 + (i / 900) % 13, u64::from(i % 5 * 9 + 1), 0);
            assert!(c.used() <= 60 && c.places.held(DISK) <= disk_size(60, 0.3));
        }
    }
}
