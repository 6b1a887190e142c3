//! LFUDA, LFU with dynamic aging (Arlitt et al., 2000): priority `L + count`, recomputed at
//! each hit; the victim is the lowest priority (among equals, the one that took it first) and
//! `L` becomes its priority. The rules, and why libCacheSim's `LFUDA` is not its peer, are in
//! the reference engine's `LFUDA` class. Demand paging does the byte accounting.

use crate::cache::demand::Evict;
use crate::cache::heap::IndexedHeap;
use crate::cache::list::Slots;
use crate::cache::policy::{delegate, put, Options};
use crate::cache::NIL;

pub struct Lfuda {
    /// L: the priority of the latest victim.
    age: u64,
    /// Requests so far; it orders equal priorities.
    clock: u64,
    slots: Slots,
    count: Vec<u64>,
    /// Slots by (priority, when set), lowest first: the heap is a max-heap, so each key is the
    /// complement of `priority << 64 | when`.
    ranked: IndexedHeap<u128>,
}

impl Lfuda {
    #[inline(always)]
    fn key(&self, slot: u32) -> u128 {
        !((((self.age + self.count[slot as usize]) as u128) << 64) | self.clock as u128)
    }
}

impl Evict for Lfuda {
    fn new(capacity: usize, n_ids: usize, _: Options) -> Self {
        let expected = capacity.min(n_ids);
        Lfuda {
            age: 0,
            clock: 0,
            slots: Slots::new(n_ids, expected),
            count: Vec::with_capacity(expected),
            ranked: IndexedHeap::new(expected + 1, expected + 1),
        }
    }

    /// Called once per request, first: the clock ticks here.
    #[inline(always)]
    fn hit(&mut self, id: u32, _next_use: u64) -> bool {
        self.clock += 1;
        let slot = self.slots.get(id);
        if slot == NIL {
            return false;
        }
        self.count[slot as usize] += 1;
        let key = self.key(slot);
        self.ranked.update(slot, key);
        true
    }

    #[inline]
    fn evict(&mut self) -> Option<u32> {
        let (key, victim) = self.ranked.pop()?;
        self.age = ((!key) >> 64) as u64;
        self.slots.release(victim);
        Some(victim)
    }

    #[inline(always)]
    fn insert(&mut self, id: u32, _next_use: u64) -> u32 {
        let slot = self.slots.assign(id);
        put(&mut self.count, slot, 1);
        let key = self.key(slot);
        self.ranked.push(slot, key);
        slot
    }

    delegate!(slots: prefetch, contains);
    fn len(&self) -> usize {
        self.ranked.len()
    }
}
