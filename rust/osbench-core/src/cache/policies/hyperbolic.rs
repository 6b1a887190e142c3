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

use crate::cache::memory::{filled, prefetch};
use crate::cache::policy::{ensure, Options, Policy};
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
    entries: Vec<Entry>,
    /// Each id's position in `entries`, or NIL.
    position: Vec<u32>,
    rng: SplitMix64,
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
        let victim = self.entries.swap_remove(best);
        if let Some(moved) = self.entries.get(best) {
            self.position[moved.id as usize] = best as u32;
        }
        self.position[victim.id as usize] = NIL;
        Some(victim.size)
    }
}

impl Policy for Hyperbolic {
    fn new(capacity: usize, n_ids: usize, options: Options) -> Self {
        Hyperbolic {
            capacity: capacity as u64,
            samples: options.int("samples"),
            used: 0,
            now: 0,
            entries: Vec::with_capacity(capacity.min(n_ids)),
            position: filled(n_ids, NIL),
            rng: SplitMix64(options.int("seed")),
        }
    }

    #[inline(always)]
    fn step<const SIZED: bool>(&mut self, id: u32, size: u64, _next_use: u64) -> bool {
        self.now += 1;
        ensure(&mut self.position, id, NIL);
        let at = self.position[id as usize];
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
        self.position[id as usize] = self.entries.len() as u32;
        self.entries.push(Entry { id, count: 1, entered: self.now, size });
        self.used += size;
        false
    }

    fn contains(&self, id: u32) -> bool {
        self.position.get(id as usize).is_some_and(|&p| p != NIL)
    }
    fn len(&self) -> usize {
        self.entries.len()
    }
    fn used(&self) -> u64 {
        self.used
    }
    #[inline(always)]
    fn prefetch(&self, id: u32) {
        prefetch(self.position.as_ptr().wrapping_add(id as usize));
    }
    #[inline(always)]
    fn prefetch_near(&self, id: u32) {
        let at = self.position.get(id as usize).copied().unwrap_or(NIL);
        if at != NIL {
            prefetch(self.entries.as_ptr().wrapping_add(at as usize));
        }
    }
}
