//! SIEVE (Zhang et al., NSDI 2024): a FIFO queue with one visited bit per object and a hand
//! that sweeps from the oldest object towards the newest.
//!
//! A hit sets the bit and moves nothing. A newcomer enters at the front with its bit clear.
//! To evict, the hand resumes where it stopped (at the back the first time, or after passing
//! the front): visited objects have their bit cleared and stay; the first unvisited one is
//! evicted and the hand rests on its newer neighbour. As libCacheSim's Sieve.

use crate::cache::demand::Evict;
use crate::cache::list::{Links, List, Slots};
use crate::cache::policy::{delegate, put, Options};
use crate::cache::NIL;

pub struct Sieve {
    slots: Slots,
    links: Links,
    queue: List,
    /// Visited bit of the object in each slot.
    visited: Vec<bool>,
    /// The slot the hand rests on, or NIL to start from the back.
    hand: u32,
}

impl Evict for Sieve {
    fn new(capacity: usize, n_ids: usize, _: Options) -> Self {
        let expected = capacity.min(n_ids);
        Sieve {
            slots: Slots::new(n_ids, expected),
            links: Links::with_capacity(expected),
            queue: List::default(),
            visited: Vec::with_capacity(expected),
            hand: NIL,
        }
    }
    #[inline(always)]
    fn hit(&mut self, id: u32, _next_use: u64) -> bool {
        let slot = self.slots.get(id);
        if slot == NIL {
            return false;
        }
        self.visited[slot as usize] = true;
        true
    }
    #[inline]
    fn evict(&mut self) -> Option<u32> {
        let mut slot = if self.hand == NIL { self.queue.tail } else { self.hand };
        if slot == NIL {
            return None;
        }
        while self.visited[slot as usize] {
            self.visited[slot as usize] = false;
            let newer = self.links.newer(slot);
            slot = if newer == NIL { self.queue.tail } else { newer };
        }
        self.hand = self.links.newer(slot);
        self.links.remove(&mut self.queue, slot);
        self.slots.release(slot);
        Some(slot)
    }
    #[inline(always)]
    fn insert(&mut self, id: u32, _next_use: u64) -> u32 {
        let slot = self.slots.assign(id);
        put(&mut self.visited, slot, false);
        self.links.push_front(&mut self.queue, slot);
        slot
    }
    delegate!(slots: prefetch, contains);
    fn len(&self) -> usize {
        self.queue.len
    }
}
