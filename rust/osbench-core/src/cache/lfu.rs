//! LFU: evict the object with the fewest accesses since it entered the cache; among equals,
//! the least recently used. Counts start at 1 on insert and are forgotten on eviction.
//!
//! O(1) per access: one recency list per frequency. An object enters list f only when it is
//! accessed, so each list is in last-access order and its back is the least recently used.

use super::list::{Links, List};
use super::{ensure, Policy};

pub struct Lfu {
    capacity: usize,
    len: usize,
    links: Links,
    /// Access count of each cached id; 0 = not cached.
    freq: Vec<u32>,
    /// `buckets[f]`: the cached ids with count f, most recent at the front.
    buckets: Vec<List>,
    min_freq: u32,
}

impl Lfu {
    pub fn new(capacity: usize, n_ids: usize) -> Self {
        Lfu {
            capacity,
            len: 0,
            links: Links::with_ids(n_ids),
            freq: vec![0; n_ids],
            buckets: vec![List::default(); 2],
            min_freq: 0,
        }
    }

    #[inline]
    fn bucket(&mut self, f: u32) -> &mut List {
        if f as usize >= self.buckets.len() {
            self.buckets.resize(f as usize + 1, List::default());
        }
        &mut self.buckets[f as usize]
    }
}

impl Policy for Lfu {
    #[inline]
    fn access(&mut self, id: u32, _next_use: u64) -> bool {
        ensure(&mut self.freq, id, 0);
        self.links.ensure(id);
        let f = self.freq[id as usize];
        if f > 0 {
            let mut from = *self.bucket(f);
            self.links.remove(&mut from, id);
            self.buckets[f as usize] = from;
            let mut to = *self.bucket(f + 1);
            self.links.push_front(&mut to, id);
            self.buckets[f as usize + 1] = to;
            self.freq[id as usize] = f + 1;
            if self.min_freq == f && from.len == 0 {
                self.min_freq = f + 1;
            }
            return true;
        }
        if self.len == self.capacity {
            let mut bucket = self.buckets[self.min_freq as usize];
            if let Some(victim) = self.links.pop_back(&mut bucket) {
                self.freq[victim as usize] = 0;
                self.len -= 1;
            }
            self.buckets[self.min_freq as usize] = bucket;
        }
        let mut ones = *self.bucket(1);
        self.links.push_front(&mut ones, id);
        self.buckets[1] = ones;
        self.freq[id as usize] = 1;
        self.min_freq = 1;
        self.len += 1;
        false
    }
    fn contains(&self, id: u32) -> bool {
        self.freq.get(id as usize).copied().unwrap_or(0) > 0
    }
    fn len(&self) -> usize {
        self.len
    }
}
