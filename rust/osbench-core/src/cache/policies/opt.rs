//! OPT, Belady's MIN (1966), with demand paging: every miss inserts the object, and to make
//! room the victim is the cached object whose next use is farthest in the future (never used
//! again counts as infinitely far). Offline: it needs each access's next-use time.
//!
//! A max-heap keyed by next use, with lazy deletion: a hit pushes a fresh entry and leaves the
//! old one behind; stale entries are skipped when popped and swept when the heap grows large.
//! Which of several never-used-again objects goes first does not change any hit. In sized mode
//! (libCacheSim's Belady in bytes) the farthest next uses leave until the newcomer fits.

use crate::cache::demand::Evict;
use crate::cache::policy::{ensure, Options};
use crate::cache::NEVER;
use std::collections::BinaryHeap;

/// `next[id]` for an object that is not cached.
const ABSENT: u64 = NEVER - 1;

pub struct Opt {
    len: usize,
    /// Next use of each cached id; ABSENT when not cached. NEVER is a valid next use.
    next: Vec<u64>,
    heap: BinaryHeap<(u64, u32)>,
}

impl Opt {
    /// Record `id`'s next use (cached now) with a fresh heap entry.
    #[inline]
    fn schedule(&mut self, id: u32, next_use: u64) {
        // Time stamps are access indices, far below ABSENT; never-again is NEVER.
        let next_use = if next_use == ABSENT { NEVER } else { next_use };
        self.next[id as usize] = next_use;
        self.heap.push((next_use, id));
        if self.heap.len() > 2 * self.len + 64 {
            self.sweep_stale();
        }
    }

    /// Drop the stale heap entries (rare: kept out of the per-access path).
    #[cold]
    #[inline(never)]
    fn sweep_stale(&mut self) {
        let next = &self.next;
        let live: Vec<(u64, u32)> = self.heap.drain().filter(|&(t, id)| next[id as usize] == t).collect();
        self.heap = BinaryHeap::from(live);
    }
}

impl Evict for Opt {
    fn new(capacity: usize, n_ids: usize, _: Options) -> Self {
        Opt { len: 0, next: vec![ABSENT; n_ids], heap: BinaryHeap::with_capacity(capacity.min(n_ids) + 1) }
    }
    #[inline(always)]
    fn hit(&mut self, id: u32, next_use: u64) -> bool {
        ensure(&mut self.next, id, ABSENT);
        if self.next[id as usize] == ABSENT {
            return false;
        }
        self.schedule(id, next_use);
        true
    }
    #[inline]
    fn evict(&mut self) -> Option<u32> {
        while let Some((t, victim)) = self.heap.pop() {
            if self.next[victim as usize] == t {
                self.next[victim as usize] = ABSENT;
                self.len -= 1;
                return Some(victim);
            }
        }
        None
    }
    #[inline(always)]
    fn insert(&mut self, id: u32, next_use: u64) -> u32 {
        self.len += 1;
        self.schedule(id, next_use);
        id
    }
    fn contains(&self, id: u32) -> bool {
        self.next.get(id as usize).is_some_and(|&t| t != ABSENT)
    }
    fn len(&self) -> usize {
        self.len
    }
}
