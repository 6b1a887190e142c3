//! LRU: evict the object whose last access is oldest. A hit moves the object to the front.

use super::list::{Links, List, Slots};
use super::{Policy, NIL};

pub struct Lru {
    capacity: usize,
    /// Sized mode: bytes held, and the size of the object in each slot.
    used: u64,
    size_of: Vec<u64>,
    slots: Slots,
    links: Links,
    list: List,
}

impl Lru {
    pub fn new(capacity: usize, n_ids: usize) -> Self {
        let expected = capacity.min(n_ids);
        Lru {
            capacity,
            used: 0,
            size_of: Vec::new(),
            slots: Slots::new(n_ids, expected),
            links: Links::with_capacity(expected),
            list: List::default(),
        }
    }
}

impl Policy for Lru {
    #[inline]
    fn access(&mut self, id: u32, _next_use: u64) -> bool {
        let slot = self.slots.get(id);
        if slot != NIL {
            if self.list.head != slot {
                self.links.remove(&mut self.list, slot);
                self.links.push_front(&mut self.list, slot);
            }
            return true;
        }
        if self.list.len == self.capacity {
            if let Some(victim) = self.links.pop_back(&mut self.list) {
                self.slots.release(victim);
            }
        }
        let slot = self.slots.assign(id);
        self.links.push_front(&mut self.list, slot);
        false
    }
    fn supports_sizes(&self) -> bool {
        true
    }
    fn access_sized(&mut self, id: u32, size: u64, _next_use: u64) -> bool {
        let slot = self.slots.get(id);
        if slot != NIL {
            if self.list.head != slot {
                self.links.remove(&mut self.list, slot);
                self.links.push_front(&mut self.list, slot);
            }
            return true;
        }
        if size > self.capacity as u64 {
            return false;
        }
        while self.used + size > self.capacity as u64 {
            match self.links.pop_back(&mut self.list) {
                Some(victim) => {
                    self.used -= self.size_of[victim as usize];
                    self.slots.release(victim);
                }
                None => break,
            }
        }
        let slot = self.slots.assign(id);
        if self.size_of.len() < self.slots.high_water() {
            self.size_of.resize(self.slots.high_water(), 0);
        }
        self.size_of[slot as usize] = size;
        self.used += size;
        self.links.push_front(&mut self.list, slot);
        false
    }
    fn contains(&self, id: u32) -> bool {
        self.slots.peek(id) != NIL
    }
    fn len(&self) -> usize {
        self.list.len
    }
    fn used_bytes(&self) -> u64 {
        self.used
    }
}
