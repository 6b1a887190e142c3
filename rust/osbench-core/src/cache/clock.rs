//! CLOCK (second chance): the cached objects sit on a circle with one reference bit each.
//! A hit sets the bit. On a miss with a full cache the hand sweeps: a set bit is cleared and
//! the hand moves on; the first object with a clear bit is evicted and the new object takes
//! its slot, after which the hand moves past it (so the newcomer is the last to be examined).
//! A new object starts with its bit clear, or set when `bit_on_insert` (the textbook variant).
//!
//! Sized mode keeps the circle as a queue whose front is under the hand (as libCacheSim's
//! Clock): a set bit sends the object to the back, the hand evicts until the newcomer fits,
//! and the newcomer joins at the back. With unit sizes both give the same evictions.

use super::{ensure, Policy};
use std::collections::VecDeque;

pub struct Clock {
    capacity: usize,
    bit_on_insert: bool,
    slots: Vec<u32>,
    hand: usize,
    referenced: Vec<bool>,
    cached: Vec<bool>,
    /// Sized mode: the circle (front under the hand), bytes held, each id's size.
    circle: VecDeque<u32>,
    used: u64,
    size_of: Vec<u64>,
}

impl Clock {
    pub fn new(capacity: usize, n_ids: usize, bit_on_insert: bool) -> Self {
        Clock {
            capacity,
            bit_on_insert,
            slots: Vec::with_capacity(capacity.min(n_ids)),
            hand: 0,
            referenced: vec![false; n_ids],
            cached: vec![false; n_ids],
            circle: VecDeque::new(),
            used: 0,
            size_of: Vec::new(),
        }
    }
}

impl Policy for Clock {
    #[inline]
    fn access(&mut self, id: u32, _next_use: u64) -> bool {
        ensure(&mut self.cached, id, false);
        ensure(&mut self.referenced, id, false);
        let i = id as usize;
        if self.cached[i] {
            self.referenced[i] = true;
            return true;
        }
        if self.slots.len() < self.capacity {
            self.slots.push(id);
        } else {
            loop {
                let candidate = self.slots[self.hand] as usize;
                if !self.referenced[candidate] {
                    break;
                }
                self.referenced[candidate] = false;
                self.hand = (self.hand + 1) % self.slots.len();
            }
            self.cached[self.slots[self.hand] as usize] = false;
            self.slots[self.hand] = id;
            self.hand = (self.hand + 1) % self.slots.len();
        }
        self.cached[i] = true;
        self.referenced[i] = self.bit_on_insert;
        false
    }
    fn supports_sizes(&self) -> bool {
        true
    }
    fn access_sized(&mut self, id: u32, size: u64, _next_use: u64) -> bool {
        ensure(&mut self.cached, id, false);
        ensure(&mut self.referenced, id, false);
        let i = id as usize;
        if self.cached[i] {
            self.referenced[i] = true;
            return true;
        }
        if size > self.capacity as u64 {
            return false;
        }
        ensure(&mut self.size_of, id, 0);
        while self.used + size > self.capacity as u64 {
            let Some(candidate) = self.circle.pop_front() else { break };
            let c = candidate as usize;
            if self.referenced[c] {
                self.referenced[c] = false;
                self.circle.push_back(candidate);
            } else {
                self.cached[c] = false;
                self.used -= self.size_of[c];
            }
        }
        self.circle.push_back(id);
        self.cached[i] = true;
        self.referenced[i] = self.bit_on_insert;
        self.size_of[i] = size;
        self.used += size;
        false
    }
    fn contains(&self, id: u32) -> bool {
        self.cached.get(id as usize).copied().unwrap_or(false)
    }
    fn len(&self) -> usize {
        self.slots.len() + self.circle.len()
    }
    fn used_bytes(&self) -> u64 {
        self.used
    }
}
