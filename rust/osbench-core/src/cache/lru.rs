//! LRU: evict the object whose last access is oldest. A hit moves the object to the front.

use super::list::{Links, List};
use super::{ensure, Policy};

pub struct Lru {
    capacity: usize,
    links: Links,
    list: List,
    cached: Vec<bool>,
}

impl Lru {
    pub fn new(capacity: usize, n_ids: usize) -> Self {
        Lru { capacity, links: Links::with_ids(n_ids), list: List::default(), cached: vec![false; n_ids] }
    }
}

impl Policy for Lru {
    #[inline]
    fn access(&mut self, id: u32, _next_use: u64) -> bool {
        ensure(&mut self.cached, id, false);
        self.links.ensure(id);
        if self.cached[id as usize] {
            if self.list.head != id {
                self.links.remove(&mut self.list, id);
                self.links.push_front(&mut self.list, id);
            }
            return true;
        }
        if self.list.len == self.capacity {
            if let Some(victim) = self.links.pop_back(&mut self.list) {
                self.cached[victim as usize] = false;
            }
        }
        self.links.push_front(&mut self.list, id);
        self.cached[id as usize] = true;
        false
    }
    fn contains(&self, id: u32) -> bool {
        self.cached.get(id as usize).copied().unwrap_or(false)
    }
    fn len(&self) -> usize {
        self.list.len
    }
}
