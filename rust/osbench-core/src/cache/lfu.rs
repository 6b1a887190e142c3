//! LFU: evict the object with the fewest accesses since it entered the cache; among equals,
//! the least recently used. Counts start at 1 on insert and are forgotten on eviction.
//!
//! O(1) per access: one recency list per frequency. An object enters list f only when it is
//! accessed, so each list is in last-access order and its back is the least recently used.

use super::list::{Links, List, Slots};
use super::{Policy, NIL};

pub struct Lfu {
    capacity: usize,
    /// Sized mode: bytes held, and the size of the object in each slot.
    used: u64,
    size_of: Vec<u64>,
    len: usize,
    slots: Slots,
    links: Links,
    /// Access count of the object in each slot.
    freq: Vec<u32>,
    /// `buckets[f]`: the slots with count f, most recent at the front.
    buckets: Vec<List>,
    min_freq: u32,
}

impl Lfu {
    pub fn new(capacity: usize, n_ids: usize) -> Self {
        let expected = capacity.min(n_ids);
        Lfu {
            capacity,
            used: 0,
            size_of: Vec::new(),
            len: 0,
            slots: Slots::new(n_ids, expected),
            links: Links::with_capacity(expected),
            freq: Vec::with_capacity(expected),
            buckets: vec![List::default(); 2],
            min_freq: 0,
        }
    }

    /// Move `slot` to the front of bucket `f`.
    #[inline]
    fn push(&mut self, f: u32, slot: u32) {
        if f as usize >= self.buckets.len() {
            self.buckets.resize(f as usize + 1, List::default());
        }
        self.links.push_front(&mut self.buckets[f as usize], slot);
    }
}

impl Policy for Lfu {
    #[inline]
    fn access(&mut self, id: u32, _next_use: u64) -> bool {
        let slot = self.slots.get(id);
        if slot != NIL {
            let f = self.freq[slot as usize];
            let from = &mut self.buckets[f as usize];
            self.links.remove(from, slot);
            if self.min_freq == f && from.len == 0 {
                self.min_freq = f + 1;
            }
            self.push(f + 1, slot);
            self.freq[slot as usize] = f + 1;
            return true;
        }
        if self.len == self.capacity {
            if let Some(victim) = self.links.pop_back(&mut self.buckets[self.min_freq as usize]) {
                self.slots.release(victim);
                self.len -= 1;
            }
        }
        let slot = self.slots.assign(id);
        if self.freq.len() < self.slots.high_water() {
            self.freq.resize(self.slots.high_water(), 0);
        }
        self.freq[slot as usize] = 1;
        self.push(1, slot);
        self.min_freq = 1;
        self.len += 1;
        false
    }
    fn supports_sizes(&self) -> bool {
        true
    }
    fn access_sized(&mut self, id: u32, size: u64, next_use: u64) -> bool {
        if self.slots.get(id) != NIL {
            return self.access(id, next_use);
        }
        if size > self.capacity as u64 {
            return false;
        }
        while self.used + size > self.capacity as u64 && self.len > 0 {
            // Several evictions in a row: the lowest non-empty bucket may move up.
            while self.buckets.get(self.min_freq as usize).is_some_and(|b| b.len == 0) {
                self.min_freq += 1;
            }
            let Some(bucket) = self.buckets.get_mut(self.min_freq as usize) else { break };
            if let Some(victim) = self.links.pop_back(bucket) {
                self.used -= self.size_of[victim as usize];
                self.slots.release(victim);
                self.len -= 1;
            }
        }
        let slot = self.slots.assign(id);
        let hw = self.slots.high_water();
        if self.freq.len() < hw {
            self.freq.resize(hw, 0);
        }
        if self.size_of.len() < hw {
            self.size_of.resize(hw, 0);
        }
        self.freq[slot as usize] = 1;
        self.size_of[slot as usize] = size;
        self.used += size;
        self.push(1, slot);
        self.min_freq = 1;
        self.len += 1;
        false
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
