//! Size: evict the largest cached object (libCacheSim's `Size`), step for step as the
//! reference engine's `Size` class.
//!
//! The objects sit in libCacheSim's binary max-heap by size, libpqueue's (`pqueue.c`):
//! entries `1..n` of an array, moved up past a strictly smaller parent and down past the
//! larger child while strictly smaller, the right child taken only when strictly larger. Equal
//! sizes (every object, with unit sizes) are ordered by where the heap holds them, so the heap
//! is kept exactly as libpqueue keeps it and the ties fall as libCacheSim's do.
//!
//! A hit sets the object's priority to the access's size and settles it (up if it grew, else
//! down); the bytes it holds stay those it entered with. A miss of an object larger than the
//! cache changes nothing; otherwise the heap's top leaves until the newcomer fits, which then
//! joins at the heap's end and moves up.

use crate::cache::list::Slots;
use crate::cache::policy::{delegate, put, Options, Policy};
use crate::cache::NIL;

pub struct Size {
    capacity: u64,
    /// Bytes held in sized mode, objects in unit mode.
    used: u64,
    slots: Slots,
    /// libpqueue's array of slots: index 0 unused, the top at 1.
    heap: Vec<u32>,
    /// Per slot: its index in `heap`.
    position: Vec<u32>,
    /// Per slot: its priority (the size its last access gave).
    priority: Vec<u64>,
    /// Per slot, sized mode: the bytes it entered with.
    size_of: Vec<u64>,
}

impl Size {
    /// Put `slot` at heap index `i`.
    #[inline(always)]
    fn place(&mut self, i: usize, slot: u32) {
        self.heap[i] = slot;
        self.position[slot as usize] = i as u32;
    }

    /// libpqueue's `bubble_up`: the entry at `i` moves up past every strictly smaller parent.
    fn bubble_up(&mut self, mut i: usize) {
        let moving = self.heap[i];
        let pri = self.priority[moving as usize];
        while i > 1 && self.priority[self.heap[i / 2] as usize] < pri {
            self.place(i, self.heap[i / 2]);
            i /= 2;
        }
        self.place(i, moving);
    }

    /// libpqueue's `percolate_down`: the entry at `i` moves down past its larger child (the
    /// right one only when strictly larger) while strictly smaller than it.
    fn percolate_down(&mut self, mut i: usize) {
        let moving = self.heap[i];
        let pri = self.priority[moving as usize];
        let n = self.heap.len();
        loop {
            let mut child = 2 * i;
            if child >= n {
                break;
            }
            if child + 1 < n && self.priority[self.heap[child] as usize] < self.priority[self.heap[child + 1] as usize]
            {
                child += 1;
            }
            if pri >= self.priority[self.heap[child] as usize] {
                break;
            }
            self.place(i, self.heap[child]);
            i = child;
        }
        self.place(i, moving);
    }

    /// libpqueue's `pqueue_pop`: the top leaves, the last entry takes its place and moves down.
    fn evict<const SIZED: bool>(&mut self) -> bool {
        if self.heap.len() < 2 {
            return false;
        }
        let victim = self.heap[1];
        let last = self.heap.pop().unwrap_or(victim);
        if self.heap.len() > 1 {
            self.place(1, last);
            self.percolate_down(1);
        }
        self.used -= if SIZED { self.size_of[victim as usize] } else { 1 };
        self.slots.release(victim);
        true
    }
}

impl Policy for Size {
    fn new(capacity: usize, n_ids: usize, _: Options) -> Self {
        let expected = capacity.min(n_ids) + 1;
        let mut heap = Vec::with_capacity(expected + 1);
        heap.push(NIL);
        Size {
            capacity: capacity as u64,
            used: 0,
            slots: Slots::new(n_ids, expected),
            heap,
            position: Vec::with_capacity(expected),
            priority: Vec::with_capacity(expected),
            size_of: Vec::new(),
        }
    }
    #[inline(always)]
    fn step<const SIZED: bool>(&mut self, id: u32, size: u64, _next_use: u64) -> bool {
        let slot = self.slots.get(id);
        if slot != NIL {
            let s = slot as usize;
            let old = std::mem::replace(&mut self.priority[s], size);
            // libpqueue settles the entry even when its priority is unchanged, but then it stays
            // put: its parent is no smaller and its children no larger (every unit-size hit).
            if old != size {
                let i = self.position[s] as usize;
                if old < size {
                    self.bubble_up(i);
                } else {
                    self.percolate_down(i);
                }
            }
            return true;
        }
        if SIZED && size > self.capacity {
            return false; // never admitted (libCacheSim's can_insert)
        }
        while self.used + size > self.capacity && self.evict::<SIZED>() {}
        let slot = self.slots.assign(id);
        put(&mut self.priority, slot, size);
        put(&mut self.position, slot, 0);
        if SIZED {
            put(&mut self.size_of, slot, size);
        }
        self.used += if SIZED { size } else { 1 };
        self.heap.push(slot);
        self.bubble_up(self.heap.len() - 1);
        false
    }
    delegate!(slots: prefetch, contains);
    fn len(&self) -> usize {
        self.heap.len() - 1
    }
    fn used(&self) -> u64 {
        self.used
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_largest_object_leaves_first() {
        let mut c = Size::new(10, 8, Options::default());
        for (id, size) in [(0, 2), (1, 5), (2, 3)] {
            assert!(!c.step::<true>(id, size, 0));
        }
        // 10 bytes held; a 1-byte newcomer evicts the 5-byte object alone.
        assert!(!c.step::<true>(3, 1, 0));
        assert!(!c.contains(1) && c.contains(0) && c.contains(2) && c.contains(3));
        assert_eq!(c.used(), 6);
    }

    #[test]
    fn the_heap_holds_exactly_the_cached_objects() {
        let mut c = Size::new(7, 16, Options::default());
        for i in 0..50_000u32 {
            c.step::<true>(i % 5 + (i / 700) % 11, u64::from(i % 4 + 1), 0);
            assert_eq!(c.heap.len() - 1, c.len());
            let held: u64 = c.heap[1..].iter().map(|&s| c.size_of[s as usize]).sum();
            assert_eq!(held, c.used());
        }
    }
}
