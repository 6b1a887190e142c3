//! LRU: evict the object whose last access is oldest. A hit moves the object to the front.

use crate::cache::demand::Evict;
use crate::cache::list::{Links, List, Slots};
use crate::cache::policy::{delegate, Options};
use crate::cache::NIL;

pub struct Lru {
    slots: Slots,
    links: Links,
    list: List,
}

impl Evict for Lru {
    fn new(capacity: usize, n_ids: usize, _: Options) -> Self {
        let expected = capacity.min(n_ids);
        Lru { slots: Slots::new(n_ids, expected), links: Links::with_capacity(expected), list: List::default() }
    }
    #[inline(always)]
    fn hit(&mut self, id: u32, _next_use: u64) -> bool {
        let slot = self.slots.get(id);
        if slot == NIL {
            return false;
        }
        if self.list.head != slot {
            self.links.remove(&mut self.list, slot);
            self.links.push_front(&mut self.list, slot);
        }
        true
    }
    #[inline]
    fn evict(&mut self) -> Option<u32> {
        let victim = self.links.pop_back(&mut self.list)?;
        self.slots.release(victim);
        Some(victim)
    }
    #[inline(always)]
    fn insert(&mut self, id: u32, _next_use: u64) -> u32 {
        let slot = self.slots.assign(id);
        self.links.push_front(&mut self.list, slot);
        slot
    }
    delegate!(slots: prefetch, contains);
    fn len(&self) -> usize {
        self.list.len
    }
}
