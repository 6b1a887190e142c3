//! Hyperbolic caching (Blankstein, Sen and Freedman, USENIX ATC 2017) as libCacheSim defines it:
//! each object's priority is its access count over its age in the cache; on eviction,
//! `samples` objects are drawn at random (with replacement) and the one of lowest priority
//! leaves. The rules are spelled out in the reference engine's `Hyperbolic` class; this file
//! follows it step for step, with the same draws (splitmix64, seeded) and the same float
//! operations.
//!
//! The cached objects sit in one dense array of entries (id, count, entry time, size), so that a
//! draw reads one entry, a cache line at most; an eviction takes the victim's place with the
//! last entry (swap-remove).

use crate::cache::list::{Dense, Member};
use crate::cache::policy::{delegate, Options, Policy};
use crate::cache::NIL;
use crate::hash::SplitMix64;

#[derive(Clone, Copy)]
struct Entry {
    id: u32,
    /// Accesses since it entered (1 on entry).
    count: u64,
    /// The request number at which it entered (requests are counted from 1).
    entered: u64,
    /// Its size when it entered (1 in unit mode).
    size: u64,
}

pub struct Hyperbolic {
    capacity: u64,
    samples: u64,
    used: u64,
    /// Requests seen, this one included: every access counts, hit or miss, admitted or not.
    now: u64,
    entries: Dense<Entry>,
    rng: SplitMix64,
}

impl Member for Entry {
    #[inline(always)]
    fn id(&self) -> u32 {
        self.id
    }
}

impl Hyperbolic {
    /// Draw `samples` entries and remove the one of lowest priority (the first drawn among
    /// equals), returning its size.
    fn evict(&mut self) -> Option<u64> {
        if self.entries.is_empty() {
            return None;
        }
        let n = self.entries.len() as u64;
        let mut best = 0;
        let mut best_priority = f64::INFINITY;
        for _ in 0..self.samples {
            let at = self.rng.below(n) as usize;
            let e = self.entries[at];
            let priority = 1.0e8 * e.count as f64 / (self.now - e.entered) as f64;
            if priority < best_priority {
                best = at;
                best_priority = priority;
            }
        }
        Some(self.entries.swap_remove(best).size)
    }
}

impl Policy for Hyperbolic {
    fn new(capacity: usize, n_ids: usize, options: Options) -> Self {
        Hyperbolic {
            capacity: capacity as u64,
            samples: options.int("samples"),
            used: 0,
            now: 0,
            entries: Dense::new(capacity.min(n_ids), n_ids),
            rng: SplitMix64(options.int("seed")),
        }
    }

    #[inline(always)]
    fn step<const SIZED: bool>(&mut self, id: u32, size: u64, _next_use: u64) -> bool {
        self.now += 1;
        let at = self.entries.get(id);
        if at != NIL {
            self.entries[at as usize].count += 1;
            return true;
        }
        if SIZED && size > self.capacity {
            return false;
        }
        while self.used + size > self.capacity {
            let Some(freed) = self.evict() else { break };
            self.used -= freed;
        }
        self.entries.push(Entry { id, count: 1, entered: self.now, size });
        self.used += size;
        false
    }

    delegate!(entries: contains, len, prefetch, prefetch_near);
    fn used(&self) -> u64 {
        self.used
    }
}
