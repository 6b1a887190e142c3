//! LFU: evict the object with the fewest accesses since it entered the cache; among equals,
//! the least recently used. Counts start at 1 on insert and are forgotten on eviction.
//!
//! O(1) per access: one recency list per frequency. An object enters list f only when it is
//! accessed, so each list is in last-access order and its back is the least recently used.

use crate::cache::demand::Evict;
use crate::cache::list::{Links, List, Slots};
use crate::cache::memory::prefetch;
use crate::cache::policy::{delegate, put, Options};
use crate::cache::NIL;

pub struct Lfu {
    len: usize,
    slots: Slots,
    links: Links,
    /// Access count of the object in each slot.
    freq: Vec<u32>,
    /// `buckets[f]`: the slots with count f, most recent at the front.
    buckets: Vec<List>,
    /// No non-empty bucket lies below this one.
    min_freq: u32,
}

impl Lfu {
    /// Move `slot` to the front of bucket `f`.
    #[inline]
    fn push(&mut self, f: u32, slot: u32) {
        if f as usize >= self.buckets.len() {
            self.buckets.resize(f as usize + 1, List::default());
        }
        self.links.push_front(&mut self.buckets[f as usize], slot);
    }
}

impl Evict for Lfu {
    fn new(capacity: usize, n_ids: usize, _: Options) -> Self {
        let expected = capacity.min(n_ids);
        Lfu {
            len: 0,
            slots: Slots::new(n_ids, expected),
            links: Links::with_capacity(expected),
            freq: Vec::with_capacity(expected),
            buckets: vec![List::default(); 2],
            min_freq: 0,
        }
    }
    #[inline(always)]
    fn hit(&mut self, id: u32, _next_use: u64) -> bool {
        let slot = self.slots.get(id);
        if slot == NIL {
            return false;
        }
        let f = self.freq[slot as usize];
        let from = &mut self.buckets[f as usize];
        self.links.remove(from, slot);
        if self.min_freq == f && from.len == 0 {
            self.min_freq = f + 1;
        }
        self.push(f + 1, slot);
        self.freq[slot as usize] = f + 1;
        true
    }
    #[inline]
    fn evict(&mut self) -> Option<u32> {
        // Several evictions in a row (sized mode) may empty the lowest bucket.
        while self.buckets.get(self.min_freq as usize).is_some_and(|b| b.len == 0) {
            self.min_freq += 1;
        }
        let victim = self.links.pop_back(self.buckets.get_mut(self.min_freq as usize)?)?;
        self.len -= 1;
        self.slots.release(victim);
        Some(victim)
    }
    #[inline(always)]
    fn insert(&mut self, id: u32, _next_use: u64) -> u32 {
        let slot = self.slots.assign(id);
        put(&mut self.freq, slot, 1);
        self.push(1, slot);
        self.min_freq = 1;
        self.len += 1;
        slot
    }
    delegate!(slots: prefetch, contains);
    /// A hit moves the slot from its bucket to the next: ask for the slot's links and the next
    /// bucket's head (a hot object's count is its own, far from the others' in `buckets`).
    #[inline(always)]
    fn prefetch_near(&self, id: u32) {
        let slot = self.slots.peek(id);
        if let Some(&f) = self.freq.get(slot as usize) {
            self.links.prefetch(slot);
            prefetch(self.buckets.as_ptr().wrapping_add(f as usize + 1));
        }
    }
    fn len(&self) -> usize {
        self.len
    }
}
