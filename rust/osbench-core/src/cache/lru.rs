//! LRU: evict the object whose last access is oldest. A hit moves the object to the front.

use super::list::{Links, List, Slots};
use super::{Policy, NIL};

pub struct Lru {
    capacity: usize,
    slots: Slots,
    links: Links,
    list: List,
}

impl Lru {
    pub fn new(capacity: usize, n_ids: usize) -> Self {
        let expected = capacity.min(n_ids);
        Lru { capacity, slots: Slots::new(n_ids, expected), links: Links::with_capacity(expected), list: List::default() }
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
    fn contains(&self, id: u32) -> bool {
        self.slots.peek(id) != NIL
    }
    fn len(&self) -> usize {
        self.list.len
    }
}
