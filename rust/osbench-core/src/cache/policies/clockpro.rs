//! CLOCK-Pro (`clockpro`) as libCacheSim's ClockPro behaves with the parameters its Python
//! class takes (`init_ratio_cold` up to 1): it admits a newcomer while the cold pages' bytes,
//! with the newcomer's, stay within their target (`init_ratio_cold` of the capacity, rounded
//! down), and it never evicts. A hit sets the object's reference bit, which no hand ever reads.
//!
//! Why it never evicts: libCacheSim's `ClockPro_can_insert` refuses a newcomer unless
//! `mem_cold + size <= mem_cold_max`, and an eviction (`ClockPro_run_cold`, the only way a
//! page turns hot or leaves) runs only when `occupied + size > capacity`. Every admitted page
//! is cold and nothing else is ever cached, so `occupied == mem_cold` and an admitted
//! newcomer always fits. The reference engine's `ClockPro` class says this at length.

use crate::cache::policy::{ensure, Options, Policy};

/// Per id: not cached, cached with a clear reference bit, cached with it set.
const ABSENT: u8 = 0;
const CLEAR: u8 = 1;
const REFERENCED: u8 = 2;

pub struct ClockPro {
    capacity: u64,
    /// The cold pages' target: `init_ratio_cold` of the capacity, rounded down.
    cold_max: u64,
    /// Bytes (objects) held, all of them cold.
    cold: u64,
    held: usize,
    bit_on_insert: bool,
    state: Vec<u8>,
}

/// The cold target of a cache of `capacity` at `ratio`, as libCacheSim computes it
/// (`(int64_t)((double)cache_size * ratio)`).
pub(crate) fn cold_max(capacity: u64, ratio: f64) -> u64 {
    (capacity as f64 * ratio) as u64
}

/// The smallest capacity whose cold target holds one object at `ratio`.
pub(crate) fn min_capacity(ratio: f64) -> u64 {
    let mut c = ((1.0 / ratio).ceil() as u64).max(1);
    while cold_max(c, ratio) < 1 {
        c += 1;
    }
    while c > 1 && cold_max(c - 1, ratio) >= 1 {
        c -= 1;
    }
    c
}

impl Policy for ClockPro {
    fn new(capacity: usize, n_ids: usize, options: Options) -> Self {
        let capacity = capacity as u64;
        ClockPro {
            capacity,
            cold_max: cold_max(capacity, options.real("init_ratio_cold")),
            cold: 0,
            held: 0,
            bit_on_insert: options.flag("bit_on_insert"),
            state: vec![ABSENT; n_ids],
        }
    }

    #[inline(always)]
    fn step<const SIZED: bool>(&mut self, id: u32, size: u64, _next_use: u64) -> bool {
        ensure(&mut self.state, id, ABSENT);
        let s = &mut self.state[id as usize];
        if *s != ABSENT {
            *s = REFERENCED;
            return true;
        }
        if (SIZED && size > self.capacity) || self.cold + size > self.cold_max {
            return false;
        }
        *s = if self.bit_on_insert { REFERENCED } else { CLEAR };
        self.cold += size;
        self.held += 1;
        false
    }

    #[inline(always)]
    fn prefetch(&self, id: u32) {
        crate::cache::memory::prefetch(self.state.as_ptr().wrapping_add(id as usize));
    }
    fn contains(&self, id: u32) -> bool {
        self.state.get(id as usize).is_some_and(|&s| s != ABSENT)
    }
    fn len(&self) -> usize {
        self.held
    }
    fn used(&self) -> u64 {
        self.cold
    }
}
