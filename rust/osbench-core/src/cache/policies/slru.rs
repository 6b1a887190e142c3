//! SLRU, segmented LRU, as libCacheSim defines it (`SLRU.c`): `segments` LRU lists (4 by
//! default), each allowed `capacity / segments`; a hit moves an object one segment up, and an
//! over-full segment sends its least recent object one segment down (out of the cache from
//! segment 0). The rules, tie-breaks included, are spelled out in the reference engine's `SLRU`
//! class; this file follows them step for step. Sized mode counts bytes.

use crate::cache::list::{Links, List, Slots};
use crate::cache::policy::{delegate, put, Options, Policy};
use crate::cache::NIL;

/// The most segments a cache may have (libCacheSim's `SLRU_MAX_N_SEG`).
pub const MAX_SEGMENTS: usize = 16;

pub struct Slru {
    capacity: u64,
    /// Each segment's allowance.
    limit: u64,
    segments: usize,
    slots: Slots,
    links: Links,
    /// Each segment's list (front: most recent) and what it holds (bytes when sized).
    lists: Vec<List>,
    held: Vec<u64>,
    /// The segment of the object in each slot, and (sized) its size.
    segment: Vec<u8>,
    size_of: Vec<u64>,
    used: u64,
}

impl Slru {
    #[inline(always)]
    fn size<const SIZED: bool>(&self, slot: u32) -> u64 {
        if SIZED {
            self.size_of[slot as usize]
        } else {
            1
        }
    }

    /// Put `slot` at the recent end of segment `s`.
    #[inline]
    fn push<const SIZED: bool>(&mut self, slot: u32, s: usize) {
        self.links.push_front(&mut self.lists[s], slot);
        self.held[s] += self.size::<SIZED>(slot);
        self.segment[slot as usize] = s as u8;
    }

    /// Take `slot` out of segment `s`.
    #[inline]
    fn take<const SIZED: bool>(&mut self, slot: u32, s: usize) {
        self.links.remove(&mut self.lists[s], slot);
        self.held[s] -= self.size::<SIZED>(slot);
    }

    /// While segment `s` is over its allowance, its least recent object moves one segment
    /// down, the segment below draining first in turn (out of the cache from segment 0).
    fn drain<const SIZED: bool>(&mut self, s: usize) {
        while self.held[s] > self.limit {
            if s == 0 {
                self.evict::<SIZED>();
                continue;
            }
            let slot = self.lists[s].tail;
            self.take::<SIZED>(slot, s);
            self.push::<SIZED>(slot, s - 1);
            self.drain::<SIZED>(s - 1);
        }
    }

    /// Evict the least recent object of the lowest non-empty segment.
    fn evict<const SIZED: bool>(&mut self) {
        if let Some(s) = (0..self.segments).find(|&s| self.lists[s].len > 0) {
            let slot = self.lists[s].tail;
            self.take::<SIZED>(slot, s);
            self.used -= self.size::<SIZED>(slot);
            self.slots.release(slot);
        }
    }
}

impl Policy for Slru {
    fn new(capacity: usize, n_ids: usize, options: Options) -> Self {
        let segments = options.int("segments") as usize;
        let expected = capacity.min(n_ids);
        Slru {
            capacity: capacity as u64,
            // libCacheSim: (int64_t)cache_size / n_seg.
            limit: (capacity / segments) as u64,
            segments,
            slots: Slots::new(n_ids, expected),
            links: Links::with_capacity(expected),
            lists: vec![List::default(); segments],
            held: vec![0; segments],
            segment: Vec::with_capacity(expected),
            size_of: Vec::new(),
            used: 0,
        }
    }

    #[inline(always)]
    fn step<const SIZED: bool>(&mut self, id: u32, size: u64, _next_use: u64) -> bool {
        let slot = self.slots.get(id);
        if slot != NIL {
            let s = self.segment[slot as usize] as usize;
            if s + 1 == self.segments {
                if self.lists[s].head != slot {
                    self.links.remove(&mut self.lists[s], slot);
                    self.links.push_front(&mut self.lists[s], slot);
                }
            } else {
                self.take::<SIZED>(slot, s);
                self.push::<SIZED>(slot, s + 1);
                self.drain::<SIZED>(s + 1);
            }
            return true;
        }
        // libCacheSim admits only what fits in one segment (always true for unit sizes).
        if SIZED && (size > self.capacity || size > self.limit) {
            return false;
        }
        while self.used + size > self.capacity {
            self.evict::<SIZED>();
        }
        let into = (0..self.segments).find(|&s| self.held[s] + size <= self.limit).unwrap_or(0);
        let slot = self.slots.assign(id);
        put(&mut self.segment, slot, 0);
        if SIZED {
            put(&mut self.size_of, slot, size);
        }
        self.push::<SIZED>(slot, into);
        self.used += size;
        false
    }

    delegate!(slots: prefetch, contains);
    fn len(&self) -> usize {
        self.lists.iter().map(|l| l.len).sum()
    }
    fn used(&self) -> u64 {
        self.used
    }
}
