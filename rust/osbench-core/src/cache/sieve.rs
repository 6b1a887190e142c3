//! SIEVE (Zhang et al., NSDI 2024): a FIFO queue with one visited bit per object and a hand
//! that sweeps from the oldest object towards the newest.
//!
//! A hit sets the bit and moves nothing. A newcomer enters at the front with its bit clear.
//! To evict, the hand resumes where it stopped (at the back the first time, or after passing
//! the front): visited objects have their bit cleared and stay; the first unvisited one is
//! evicted and the hand rests on its newer neighbour. As libCacheSim's Sieve.

use super::list::{Links, List, Slots};
use super::{Policy, NIL};

pub struct Sieve {
    capacity: usize,
    slots: Slots,
    links: Links,
    queue: List,
    /// Visited bit of the object in each slot.
    visited: Vec<bool>,
    /// The slot the hand rests on, or NIL to start from the back.
    hand: u32,
    /// Sized mode: bytes held, and the size of the object in each slot.
    used: u64,
    size_of: Vec<u64>,
}

impl Sieve {
    pub fn new(capacity: usize, n_ids: usize) -> Self {
        let expected = capacity.min(n_ids);
        Sieve {
            capacity,
            slots: Slots::new(n_ids, expected),
            links: Links::with_capacity(expected),
            queue: List::default(),
            visited: Vec::with_capacity(expected),
            hand: NIL,
            used: 0,
            size_of: Vec::new(),
        }
    }

    /// Evict one object; returns its slot (released, its per-slot data still readable).
    fn evict(&mut self) -> u32 {
        let mut slot = if self.hand == NIL { self.queue.tail } else { self.hand };
        if slot == NIL {
            return NIL;
        }
        while self.visited[slot as usize] {
            self.visited[slot as usize] = false;
            let newer = self.links.newer(slot);
            slot = if newer == NIL { self.queue.tail } else { newer };
        }
        self.hand = self.links.newer(slot);
        self.links.remove(&mut self.queue, slot);
        self.slots.release(slot);
        slot
    }
}

impl Policy for Sieve {
    #[inline]
    fn access(&mut self, id: u32, _next_use: u64) -> bool {
        let slot = self.slots.get(id);
        if slot != NIL {
            self.visited[slot as usize] = true;
            return true;
        }
        if self.queue.len == self.capacity {
            let _ = self.evict();
        }
        let slot = self.slots.assign(id);
        if self.visited.len() < self.slots.high_water() {
            self.visited.resize(self.slots.high_water(), false);
        }
        self.visited[slot as usize] = false;
        self.links.push_front(&mut self.queue, slot);
        false
    }
    fn supports_sizes(&self) -> bool {
        true
    }
    fn access_sized(&mut self, id: u32, size: u64, _next_use: u64) -> bool {
        let slot = self.slots.get(id);
        if slot != NIL {
            self.visited[slot as usize] = true;
            return true;
        }
        if size > self.capacity as u64 {
            return false;
        }
        while self.used + size > self.capacity as u64 {
            let victim = self.evict();
            if victim == NIL {
                break;
            }
            self.used -= self.size_of[victim as usize];
        }
        let slot = self.slots.assign(id);
        let hw = self.slots.high_water();
        if self.visited.len() < hw {
            self.visited.resize(hw, false);
        }
        if self.size_of.len() < hw {
            self.size_of.resize(hw, 0);
        }
        self.visited[slot as usize] = false;
        self.size_of[slot as usize] = size;
        self.used += size;
        self.links.push_front(&mut self.queue, slot);
        false
    }
    fn contains(&self, id: u32) -> bool {
        self.slots.peek(id) != NIL
    }
    fn len(&self) -> usize {
        self.queue.len
    }
    fn used_bytes(&self) -> u64 {
        self.used
    }
}
