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
//! The priority queue is an [`IndexedHeap`] of slots keyed by (priority, last access), lowest
//! first: a hit moves the object's own entry, an eviction pops the lowest.

use crate::cache::heap::IndexedHeap;
use crate::cache::list::Slots;
use crate::cache::policy::{delegate, put, Options, Policy};
use crate::cache::NIL;
use crate::error::Result;

/// The value of one hit on a one-byte object (libCacheSim's constant): every object's cost
/// when no costs are given.
pub const GDSF_SCALE: f64 = 1.0e6;

/// The heap's key of an object of `priority` last accessed at `clock`: the larger, the sooner it
/// leaves. Non-negative f64 bits order like the numbers, so the key is the (priority bits,
/// clock) pair, inverted, in one integer: one comparison instead of two.
#[inline(always)]
fn rank(priority: f64, clock: u64) -> u128 {
    !((u128::from(priority.to_bits()) << 64) | u128::from(clock))
}

/// The priority a [`rank`] was made from.
#[inline(always)]
fn priority_of(rank: u128) -> f64 {
    f64::from_bits(((!rank) >> 64) as u64)
}

pub struct Gdsf {
    capacity: u64,
    len: usize,
    /// Sized mode: bytes held (unit mode counts `len` only).
    used: u64,
    inflation: f64,
    clock: u64,
    slots: Slots,
    /// Per slot: hits since the object entered (starting at 1).
    count: Vec<u32>,
    /// The cached slots by [`rank`]: the lowest priority first, and among equal priorities
    /// the least recent access.
    heap: IndexedHeap<u128>,
    /// Sized mode: the size of the object in each slot.
    size_of: Vec<u64>,
    /// Costed mode: the cost of the object in each slot.
    cost_of: Vec<f64>,
}

impl Gdsf {
    /// Evict the lowest priority; false when nothing is cached.
    fn evict_lowest<const SIZED: bool>(&mut self) -> bool {
        let Some((rank, slot)) = self.heap.pop() else { return false };
        self.inflation = priority_of(rank);
        self.slots.release(slot);
        self.len -= 1;
        if SIZED {
            self.used -= self.size_of[slot as usize];
        }
        true
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
        let key = rank(priority, self.clock);
        if hit {
            self.heap.update(slot, key);
        } else {
            self.heap.push(slot, key);
        }
        while (if SIZED { self.used > self.capacity } else { self.len as u64 > self.capacity })
            && self.evict_lowest::<SIZED>()
        {}
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
            heap: IndexedHeap::new(expected + 1, expected + 1),
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
    delegate!(slots: prefetch, contains);
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
    fn the_heap_holds_exactly_the_cached_objects() {
        let mut g = Gdsf::new(4, 8, Options::default());
        for i in 0..100_000u32 {
            g.step::<false>(i % 3 + (i / 1000) % 5, 1, 0);
            assert_eq!(g.heap.len(), g.len());
        }
    }
}
