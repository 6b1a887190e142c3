//! LRU-K (O'Neil, O'Neil and Weikum, SIGMOD 1993) as libCacheSim defines it (`LRU_K.cpp`):
//! evict the object whose K-th most recent access is oldest; objects with fewer than K
//! accesses since they entered go first, in the order they entered. Time counts every
//! request. The rules are spelled out in the reference engine's `LRUK` class; this file
//! follows them. Demand paging does the byte accounting.

use crate::cache::demand::Evict;
use crate::cache::heap::IndexedHeap;
use crate::cache::list::{Links, List, Slots};
use crate::cache::policy::{delegate, put, Options};
use crate::cache::NIL;

pub struct LruK {
    k: usize,
    /// Requests so far (libCacheSim's `n_req`), the current one included.
    clock: u64,
    slots: Slots,
    /// Objects with fewer than K accesses, the newest at the front.
    young: List,
    links: Links,
    /// The others, by the time of their K-th most recent access (the heap is a max-heap:
    /// keyed by its complement, the oldest comes first; times are distinct).
    ranked: IndexedHeap<u64>,
    /// Per slot, its last K access times in a ring (`slot * k ..`), and its accesses since it
    /// entered (the ring's next position is `count % k`).
    times: Vec<u64>,
    count: Vec<u64>,
}

impl LruK {
    /// Record an access of `slot` at the current time; the time of its K-th most recent access
    /// if it has K.
    #[inline(always)]
    fn record(&mut self, slot: u32) -> Option<u64> {
        let (s, k) = (slot as usize, self.k);
        let n = self.count[s];
        self.times[s * k + (n % k as u64) as usize] = self.clock;
        self.count[s] = n + 1;
        // The oldest of the last K is the next one the ring overwrites.
        (n + 1 >= k as u64).then(|| self.times[s * k + ((n + 1) % k as u64) as usize])
    }
}

impl Evict for LruK {
    fn new(capacity: usize, n_ids: usize, options: Options) -> Self {
        let expected = capacity.min(n_ids);
        let k = options.int("k") as usize;
        LruK {
            k,
            clock: 0,
            slots: Slots::new(n_ids, expected),
            young: List::default(),
            links: Links::with_capacity(expected),
            ranked: IndexedHeap::new(expected + 1, expected + 1),
            times: Vec::with_capacity(expected.saturating_mul(k)),
            count: Vec::with_capacity(expected),
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
        let young = self.count[slot as usize] < self.k as u64;
        if let Some(kth) = self.record(slot) {
            if young {
                self.links.remove(&mut self.young, slot);
                self.ranked.push(slot, !kth);
            } else {
                self.ranked.update(slot, !kth);
            }
        }
        true
    }

    #[inline]
    fn evict(&mut self) -> Option<u32> {
        let victim = match self.links.pop_back(&mut self.young) {
            Some(slot) => slot,
            None => self.ranked.pop()?.1,
        };
        self.slots.release(victim);
        Some(victim)
    }

    #[inline(always)]
    fn insert(&mut self, id: u32, _next_use: u64) -> u32 {
        let slot = self.slots.assign(id);
        put(&mut self.count, slot, 0);
        let need = (slot as usize + 1) * self.k;
        if self.times.len() < need {
            self.times.resize(need.max(self.times.len() * 2), 0);
        }
        if self.record(slot).is_some() {
            // K = 1: ranked from its first access (LRU).
            self.ranked.push(slot, !self.clock);
        } else {
            self.links.push_front(&mut self.young, slot);
        }
        slot
    }

    delegate!(slots: prefetch, contains);
    fn len(&self) -> usize {
        self.young.len + self.ranked.len()
    }
}
