//! GDSF, Greedy-Dual-Size-Frequency (Cherkasova 1998; lecture section 4.5): evict by value
//! per byte. Priority = L + count * cost / size, recomputed at each hit; L, the inflation that
//! ages old objects, becomes the priority of each evicted object. As libCacheSim's GDSF, a
//! miss inserts first and then evicts the lowest priority while over capacity (the newcomer
//! may leave at once); equal priorities go to the least recently accessed. Priorities are
//! f64 with libCacheSim's operations in its order, so ties fall the same way.
//!
//! `cost` is libCacheSim's fixed [`GDSF_SCALE`] unless the caller gives one cost per access
//! (the price of bringing the object in, e.g. the recompute cost of a KV block): then an
//! object keeps the cost it entered with, as it keeps its size. It inserts before it evicts,
//! so it keeps its own byte count instead of running under `Demand`.
//!
//! The priority queue is a binary heap with lazy deletion: a hit pushes a fresh entry and
//! the old one is skipped when popped (its stamp no longer matches).

use crate::cache::list::Slots;
use crate::cache::policy::{ensure, put, Options, Policy};
use crate::cache::NIL;
use crate::error::Result;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// The value of one hit on a one-byte object (libCacheSim's constant): every object's cost
/// when no costs are given.
pub const GDSF_SCALE: f64 = 1.0e6;

pub struct Gdsf {
    capacity: u64,
    len: usize,
    /// Sized mode: bytes held (unit mode counts `len` only).
    used: u64,
    inflation: f64,
    clock: u64,
    slots: Slots,
    /// Per slot: hits since the object entered (starting at 1), and the stamp (access
    /// time) of its current heap entry.
    count: Vec<u32>,
    stamp: Vec<u64>,
    /// (priority bits, stamp, slot): non-negative f64 bits order like the numbers.
    heap: BinaryHeap<Reverse<(u64, u64, u32)>>,
    /// Sized mode: the size of the object in each slot.
    size_of: Vec<u64>,
    /// Costed mode: the cost of the object in each slot.
    cost_of: Vec<f64>,
}

impl Gdsf {
    /// Entries in the heap, stale ones included.
    #[cfg(test)]
    fn heap_len(&self) -> usize {
        self.heap.len()
    }

    /// Drop stale heap entries once they outnumber the live ones (rare: kept out of the
    /// per-access path).
    #[cold]
    #[inline(never)]
    fn compact(&mut self) {
        let stamp = &self.stamp;
        let live: Vec<_> = self.heap.drain().filter(|Reverse((_, t, s))| stamp[*s as usize] == *t).collect();
        self.heap = BinaryHeap::from(live);
    }

    fn evict_lowest<const SIZED: bool>(&mut self) {
        while let Some(Reverse((bits, t, slot))) = self.heap.pop() {
            if self.stamp[slot as usize] == t {
                self.inflation = f64::from_bits(bits);
                self.stamp[slot as usize] = u64::MAX;
                self.slots.release(slot);
                self.len -= 1;
                if SIZED {
                    self.used -= self.size_of[slot as usize];
                }
                return;
            }
        }
    }

    /// One access. `SIZED` and `COSTED` are compile-time switches so the plain path stays as
    /// lean: without them every object has size 1 and cost [`GDSF_SCALE`].
    #[inline(always)]
    fn visit<const SIZED: bool, const COSTED: bool>(&mut self, id: u32, size: u64, cost: f64) -> bool {
        self.clock += 1;
        let mut slot = self.slots.get(id);
        let hit = slot != NIL;
        if hit {
            self.count[slot as usize] = self.count[slot as usize].saturating_add(1);
        } else {
            if SIZED && size > self.capacity {
                return false; // never admitted (libCacheSim's can_insert)
            }
            slot = self.slots.assign(id);
            put(&mut self.count, slot, 1);
            ensure(&mut self.stamp, slot, u64::MAX);
            self.len += 1;
            if SIZED {
                self.used += size;
                put(&mut self.size_of, slot, size);
            }
            if COSTED {
                put(&mut self.cost_of, slot, cost);
            }
        }
        // The size and cost the object entered with; same operations, same order as the
        // reference (count * cost first), so equal priorities stay equal in both engines.
        let s = slot as usize;
        let bytes = if SIZED { self.size_of[s] as f64 } else { 1.0 };
        let value = if COSTED { self.cost_of[s] } else { GDSF_SCALE };
        let priority = self.inflation + self.count[s] as f64 * value / bytes;
        self.stamp[s] = self.clock;
        self.heap.push(Reverse((priority.to_bits(), self.clock, slot)));
        while if SIZED { self.used > self.capacity } else { self.len as u64 > self.capacity } {
            self.evict_lowest::<SIZED>();
        }
        if self.heap.len() > 2 * self.len + 1024 {
            self.compact();
        }
        hit
    }
}

impl Policy for Gdsf {
    fn new(capacity: usize, n_ids: usize, _: Options) -> Self {
        let expected = capacity.min(n_ids);
        Gdsf {
            capacity: capacity as u64,
            len: 0,
            used: 0,
            inflation: 0.0,
            clock: 0,
            slots: Slots::new(n_ids, expected + 1),
            count: Vec::with_capacity(expected + 1),
            stamp: Vec::with_capacity(expected + 1),
            heap: BinaryHeap::with_capacity(2 * expected + 2),
            size_of: Vec::new(),
            cost_of: Vec::new(),
        }
    }
    #[inline(always)]
    fn step<const SIZED: bool>(&mut self, id: u32, size: u64, _next_use: u64) -> bool {
        self.visit::<SIZED, false>(id, size, GDSF_SCALE)
    }
    #[inline(always)]
    fn step_costed<const SIZED: bool>(&mut self, id: u32, size: u64, cost: f64) -> Result<bool> {
        Ok(self.visit::<SIZED, true>(id, size, cost))
    }
    fn contains(&self, id: u32) -> bool {
        self.slots.peek(id) != NIL
    }
    fn len(&self) -> usize {
        self.len
    }
    fn used(&self) -> u64 {
        // Bytes in sized mode (at least one per object), objects in unit mode (`used` stays 0).
        self.used.max(self.len as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heap_stays_small_under_many_hits() {
        let mut g = Gdsf::new(4, 8, Options::default());
        for i in 0..100_000u32 {
            g.step::<false>(i % 3, 1, 0);
        }
        assert!(g.heap_len() < 2 * 4 + 1100);
    }
}
