//! GDSF, Greedy-Dual-Size-Frequency (Cherkasova 1998; lecture section 4.5): evict by value
//! per byte. Priority = L + count * cost / size, recomputed at each hit; L, the inflation that
//! ages old objects, becomes the priority of each evicted object. As libCacheSim's GDSF, a
//! miss inserts first and then evicts the lowest priority while over capacity (the newcomer
//! may leave at once); equal priorities go to the least recently accessed. Priorities are
//! f64 with libCacheSim's operations in its order, so ties fall the same way.
//!
//! `cost` is libCacheSim's fixed [`GDSF_SCALE`] unless the caller gives one cost per access
//! (the price of bringing the object in, e.g. the recompute cost of a KV block): then an
//! object keeps the cost it entered with, as it keeps its size.
//!
//! The priority queue is a binary heap with lazy deletion: a hit pushes a fresh entry and
//! the old one is skipped when popped (its stamp no longer matches).

use super::list::Slots;
use super::{Policy, NIL};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// The value of one hit on a one-byte object (libCacheSim's constant): every object's cost
/// when no costs are given.
pub const GDSF_SCALE: f64 = 1.0e6;

pub struct Gdsf {
    capacity: usize,
    len: usize,
    inflation: f64,
    clock: u64,
    slots: Slots,
    /// Per slot: hits since the object entered (starting at 1), and the stamp (access
    /// time) of its current heap entry.
    count: Vec<u32>,
    stamp: Vec<u64>,
    /// (priority bits, stamp, slot): non-negative f64 bits order like the numbers.
    heap: BinaryHeap<Reverse<(u64, u64, u32)>>,
    /// Sized mode: bytes held, and the size of the object in each slot.
    used: u64,
    size_of: Vec<u64>,
    /// Costed mode: the cost of the object in each slot.
    cost_of: Vec<f64>,
}

impl Gdsf {
    pub fn new(capacity: usize, n_ids: usize) -> Self {
        let expected = capacity.min(n_ids);
        Gdsf {
            capacity,
            len: 0,
            inflation: 0.0,
            clock: 0,
            slots: Slots::new(n_ids, expected + 1),
            count: Vec::with_capacity(expected + 1),
            stamp: Vec::with_capacity(expected + 1),
            heap: BinaryHeap::with_capacity(2 * expected + 2),
            used: 0,
            size_of: Vec::new(),
            cost_of: Vec::new(),
        }
    }

    /// Entries in the heap, stale ones included (for tests).
    pub fn heap_len(&self) -> usize {
        self.heap.len()
    }

    /// Drop stale heap entries once they outnumber the live ones.
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
}

impl Gdsf {
    /// One access. `SIZED` and `COSTED` are compile-time switches so the plain path stays as
    /// lean: without them every object has size 1 and cost [`GDSF_SCALE`].
    #[inline(always)]
    fn step<const SIZED: bool, const COSTED: bool>(&mut self, id: u32, size: u64, cost: f64) -> bool {
        self.clock += 1;
        let mut slot = self.slots.get(id);
        let hit = slot != NIL;
        if hit {
            self.count[slot as usize] = self.count[slot as usize].saturating_add(1);
        } else {
            if SIZED && size > self.capacity as u64 {
                return false; // never admitted (libCacheSim's can_insert)
            }
            slot = self.slots.assign(id);
            let hw = self.slots.high_water();
            if self.count.len() < hw {
                self.count.resize(hw, 0);
                self.stamp.resize(hw, u64::MAX);
            }
            if SIZED && self.size_of.len() < hw {
                self.size_of.resize(hw, 0);
            }
            if COSTED && self.cost_of.len() < hw {
                self.cost_of.resize(hw, 0.0);
            }
            self.count[slot as usize] = 1;
            self.len += 1;
            if SIZED {
                self.size_of[slot as usize] = size;
                self.used += size;
            }
            if COSTED {
                self.cost_of[slot as usize] = cost;
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
        if SIZED {
            while self.used > self.capacity as u64 {
                self.evict_lowest::<true>();
            }
        } else {
            while self.len > self.capacity {
                self.evict_lowest::<false>();
            }
        }
        if self.heap.len() > 2 * self.len + 1024 {
            self.compact();
        }
        hit
    }

    /// One access with its cost (finite and positive: checked by the caller), `size` bytes
    /// in a cache counting bytes, or unit size for `None`.
    pub fn access_costed(&mut self, id: u32, size: Option<u64>, cost: f64) -> bool {
        match size {
            Some(size) => self.step::<true, true>(id, size, cost),
            None => self.step::<false, true>(id, 1, cost),
        }
    }

    /// Replay a run of accesses with one cost each (and one size each, or none for unit
    /// sizes); as [`Policy::replay_chunk`], `mask`, if not empty, receives the hit flags.
    pub fn replay_chunk_costed(&mut self, ids: &[u32], sizes: &[u64], costs: &[f64], mask: &mut [bool]) -> u64 {
        if sizes.is_empty() {
            self.costed_loop::<false>(ids, sizes, costs, mask)
        } else {
            self.costed_loop::<true>(ids, sizes, costs, mask)
        }
    }

    fn costed_loop<const SIZED: bool>(&mut self, ids: &[u32], sizes: &[u64], costs: &[f64], mask: &mut [bool]) -> u64 {
        let mut hits = 0u64;
        for (i, (&id, &cost)) in ids.iter().zip(costs).enumerate() {
            let size = if SIZED { sizes.get(i).copied().unwrap_or(1) } else { 1 };
            let hit = self.step::<SIZED, true>(id, size, cost);
            hits += hit as u64;
            if let Some(flag) = mask.get_mut(i) {
                *flag = hit;
            }
        }
        hits
    }
}

impl Policy for Gdsf {
    #[inline]
    fn access(&mut self, id: u32, _next_use: u64) -> bool {
        self.step::<false, false>(id, 1, GDSF_SCALE)
    }
    fn supports_sizes(&self) -> bool {
        true
    }
    fn access_sized(&mut self, id: u32, size: u64, _next_use: u64) -> bool {
        self.step::<true, false>(id, size, GDSF_SCALE)
    }
    fn contains(&self, id: u32) -> bool {
        self.slots.peek(id) != NIL
    }
    fn len(&self) -> usize {
        self.len
    }
    fn used_bytes(&self) -> u64 {
        self.used
    }
}
