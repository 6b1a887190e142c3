//! OPT, Belady's MIN (1966), with demand paging: every miss inserts the object, and to make
//! room the victim is the cached object whose next use is farthest in the future (never used
//! again counts as infinitely far). Offline: it needs each access's next-use time.
//!
//! Each cached id holds a slot. The slots of objects used again sit in an [`IndexedHeap`] keyed
//! by next use (a hit moves the object's own entry, an eviction pops the farthest); those never
//! used again sit in a plain list, and leave first, in O(1): they are more than half of the
//! evictions of a typical trace. Which of them goes first changes no hit (they are never asked
//! for again, and every one leaves before any object that is), and next uses of different
//! objects otherwise differ (they are times of different accesses). In sized mode (libCacheSim's
//! Belady in bytes) the farthest next uses leave until the newcomer fits.

use crate::cache::demand::Evict;
use crate::cache::heap::IndexedHeap;
use crate::cache::list::{Links, List, Slots};
use crate::cache::policy::{delegate, Options};
use crate::cache::{NEVER, NIL};

pub struct Opt {
    slots: Slots,
    /// The cached slots used again, by next use.
    heap: IndexedHeap<u64>,
    /// The cached slots never used again.
    links: Links,
    never: List,
}

impl Opt {
    /// File `slot` (cached, in neither place) by its next use.
    #[inline(always)]
    fn file(&mut self, slot: u32, next_use: u64) {
        if next_use == NEVER {
            self.links.push_front(&mut self.never, slot);
        } else {
            self.heap.push(slot, next_use);
        }
    }
}

impl Evict for Opt {
    fn new(capacity: usize, n_ids: usize, _: Options) -> Self {
        let expected = capacity.min(n_ids) + 1;
        Opt {
            slots: Slots::new(n_ids, expected),
            heap: IndexedHeap::new(expected, expected),
            links: Links::with_capacity(expected),
            never: List::default(),
        }
    }
    #[inline(always)]
    fn hit(&mut self, id: u32, next_use: u64) -> bool {
        let slot = self.slots.get(id);
        if slot == NIL {
            return false;
        }
        // The common case: used again, and again after this access.
        if next_use != NEVER && self.heap.update(slot, next_use) {
            return true;
        }
        if !self.heap.remove(slot) {
            // Filed as never used again, yet used (a next use given wrongly): refile it.
            self.links.remove(&mut self.never, slot);
        }
        self.file(slot, next_use);
        true
    }
    #[inline]
    fn evict(&mut self) -> Option<u32> {
        let slot = match self.links.pop_back(&mut self.never) {
            Some(slot) => slot,
            None => self.heap.pop()?.1,
        };
        self.slots.release(slot);
        Some(slot)
    }
    #[inline(always)]
    fn insert(&mut self, id: u32, next_use: u64) -> u32 {
        let slot = self.slots.assign(id);
        self.file(slot, next_use);
        slot
    }
    delegate!(slots: prefetch, contains);
    fn len(&self) -> usize {
        self.heap.len() + self.never.len
    }
}
