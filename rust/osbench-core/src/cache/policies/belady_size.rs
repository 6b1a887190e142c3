//! Belady-size (`belady-size`): Belady's MIN weighed by size, as libCacheSim's BeladySize
//! defines it, with the victim found exactly. Offline: it needs each access's next use.
//!
//! The victim is the cached object of the largest `ln(size) + ln(next_use - now)` (bytes times
//! distance, compared as libCacheSim compares them, in floats; `now` counts the accesses so
//! far, this one included, as libCacheSim's `n_req`), the later next use first among equal
//! scores. An object never used again is not admitted (the room for it is still made), and a
//! hit that is the object's last use takes it out. The rules, and where libCacheSim's sampled
//! search differs, are spelled out in the reference engine's `BeladySize` class.
//!
//! With unit sizes the score orders objects by next use alone, so an [`IndexedHeap`] keyed by
//! next use finds the victim in O(log n), as for OPT. With sizes the order changes as time
//! passes (two objects' lines cross), so each eviction scans the cached objects.

use crate::cache::heap::IndexedHeap;
use crate::cache::list::Slots;
use crate::cache::policy::{delegate, put, Options, Policy};
use crate::cache::{NEVER, NIL};

pub struct BeladySize {
    capacity: u64,
    /// Accesses so far, this one included (libCacheSim's `n_req`).
    now: u64,
    used: u64,
    slots: Slots,
    /// Per slot: the object's next use and its size.
    next_of: Vec<u64>,
    size_of: Vec<u64>,
    /// Unit sizes: the cached slots by next use.
    heap: IndexedHeap<u64>,
    /// Sizes: the cached slots, and each one's index in it.
    cached: Vec<u32>,
    index_of: Vec<u32>,
}

/// The score of an object of `size` next used at `next`, at time `now`: the logarithm of bytes
/// times distance; minus infinity for a distance of 0 (libCacheSim's `log(0)`; a negative
/// distance, from a next use given wrongly, counts the same: libCacheSim's NaN is never picked).
#[inline]
fn score(size: u64, next: u64, now: u64) -> f64 {
    if next <= now {
        return f64::NEG_INFINITY;
    }
    (size as f64).ln() + ((next - now) as f64).ln()
}

impl BeladySize {
    fn remove<const SIZED: bool>(&mut self, slot: u32) {
        if SIZED {
            let i = self.index_of[slot as usize] as usize;
            self.cached.swap_remove(i);
            if let Some(&moved) = self.cached.get(i) {
                self.index_of[moved as usize] = i as u32;
            }
            self.used -= self.size_of[slot as usize];
        } else {
            self.heap.remove(slot);
            self.used -= 1;
        }
        self.slots.release(slot);
    }

    /// Evict the largest score (the later next use among equals); false when empty.
    fn evict<const SIZED: bool>(&mut self) -> bool {
        if !SIZED {
            let Some((_, slot)) = self.heap.pop() else { return false };
            self.used -= 1;
            self.slots.release(slot);
            return true;
        }
        let mut best: Option<(f64, u64, u32)> = None;
        for &slot in &self.cached {
            let next = self.next_of[slot as usize];
            let s = score(self.size_of[slot as usize], next, self.now);
            if best.is_none_or(|(bs, bn, _)| s > bs || (s == bs && next > bn)) {
                best = Some((s, next, slot));
            }
        }
        match best {
            Some((_, _, slot)) => {
                self.remove::<SIZED>(slot);
                true
            }
            None => false,
        }
    }
}

impl Policy for BeladySize {
    fn new(capacity: usize, n_ids: usize, _: Options) -> Self {
        let expected = capacity.min(n_ids) + 1;
        BeladySize {
            capacity: capacity as u64,
            now: 0,
            used: 0,
            slots: Slots::new(n_ids, expected),
            next_of: Vec::with_capacity(expected),
            size_of: Vec::new(),
            heap: IndexedHeap::new(expected, expected),
            cached: Vec::new(),
            index_of: Vec::new(),
        }
    }

    #[inline(always)]
    fn step<const SIZED: bool>(&mut self, id: u32, size: u64, next_use: u64) -> bool {
        self.now += 1;
        let slot = self.slots.get(id);
        if slot != NIL {
            if next_use == NEVER {
                self.remove::<SIZED>(slot);
            } else {
                self.next_of[slot as usize] = next_use;
                if !SIZED {
                    self.heap.update(slot, next_use);
                }
            }
            return true;
        }
        if SIZED && size > self.capacity {
            return false;
        }
        while self.used + size > self.capacity {
            if !self.evict::<SIZED>() {
                break;
            }
        }
        if next_use == NEVER {
            return false;
        }
        let slot = self.slots.assign(id);
        put(&mut self.next_of, slot, next_use);
        if SIZED {
            put(&mut self.size_of, slot, size);
            put(&mut self.index_of, slot, self.cached.len() as u32);
            self.cached.push(slot);
        } else {
            self.heap.push(slot, next_use);
        }
        self.used += size;
        false
    }

    delegate!(slots: prefetch, contains);
    fn len(&self) -> usize {
        self.heap.len() + self.cached.len()
    }
    fn used(&self) -> u64 {
        self.used
    }
}
