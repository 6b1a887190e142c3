//! OPT, Belady's MIN (1966), with demand paging: every miss inserts the object, and when the
//! cache is full the victim is the cached object whose next use is farthest in the future
//! (never used again counts as infinitely far). Offline: it needs each access's next-use time.
//!
//! A max-heap keyed by next use, with lazy deletion: a hit pushes a fresh entry and leaves the
//! old one behind; stale entries are skipped when popped and swept when the heap grows large.
//! Which of several never-used-again objects goes first does not change any hit.
//!
//! Sized mode (libCacheSim's Belady in bytes): a miss evicts the farthest next uses until
//! the newcomer fits. Never-used-again objects still go before any other, so which of them
//! goes first still changes no hit.

use super::{ensure, Policy, NEVER};
use std::collections::BinaryHeap;

/// `next[id]` for an object that is not cached.
const ABSENT: u64 = NEVER - 1;

pub struct Opt {
    capacity: usize,
    len: usize,
    /// Next use of each cached id; ABSENT when not cached. NEVER is a valid next use.
    next: Vec<u64>,
    heap: BinaryHeap<(u64, u32)>,
    /// Sized mode: bytes held, and each id's size when it entered.
    used: u64,
    size_of: Vec<u64>,
}

impl Opt {
    pub fn new(capacity: usize, n_ids: usize) -> Self {
        Opt {
            capacity,
            len: 0,
            next: vec![ABSENT; n_ids],
            heap: BinaryHeap::with_capacity(capacity.min(n_ids) + 1),
            used: 0,
            size_of: Vec::new(),
        }
    }

    fn sweep_stale(&mut self) {
        let next = &self.next;
        let live: Vec<(u64, u32)> = self.heap.drain().filter(|&(t, id)| next[id as usize] == t).collect();
        self.heap = BinaryHeap::from(live);
    }
}

impl Policy for Opt {
    #[inline]
    fn access(&mut self, id: u32, next_use: u64) -> bool {
        ensure(&mut self.next, id, ABSENT);
        // Time stamps are access indices, far below ABSENT; never-again is NEVER.
        let next_use = if next_use == ABSENT { NEVER } else { next_use };
        let hit = self.next[id as usize] != ABSENT;
        if !hit {
            if self.len == self.capacity {
                while let Some((t, victim)) = self.heap.pop() {
                    if self.next[victim as usize] == t {
                        self.next[victim as usize] = ABSENT;
                        self.len -= 1;
                        break;
                    }
                }
            }
            self.len += 1;
        }
        self.next[id as usize] = next_use;
        self.heap.push((next_use, id));
        if self.heap.len() > 2 * self.len + 64 {
            self.sweep_stale();
        }
        hit
    }
    fn supports_sizes(&self) -> bool {
        true
    }
    fn access_sized(&mut self, id: u32, size: u64, next_use: u64) -> bool {
        ensure(&mut self.next, id, ABSENT);
        let next_use = if next_use == ABSENT { NEVER } else { next_use };
        let hit = self.next[id as usize] != ABSENT;
        if !hit {
            if size > self.capacity as u64 {
                return false;
            }
            ensure(&mut self.size_of, id, 0);
            while self.used + size > self.capacity as u64 {
                let Some((t, victim)) = self.heap.pop() else { break };
                if self.next[victim as usize] == t {
                    self.next[victim as usize] = ABSENT;
                    self.used -= self.size_of[victim as usize];
                    self.len -= 1;
                }
            }
            self.size_of[id as usize] = size;
            self.used += size;
            self.len += 1;
        }
        self.next[id as usize] = next_use;
        self.heap.push((next_use, id));
        if self.heap.len() > 2 * self.len + 64 {
            self.sweep_stale();
        }
        hit
    }
    fn contains(&self, id: u32) -> bool {
        self.next.get(id as usize).is_some_and(|&t| t != ABSENT)
    }
    fn len(&self) -> usize {
        self.len
    }
    fn used_bytes(&self) -> u64 {
        self.used
    }
    fn needs_future(&self) -> bool {
        true
    }
}
