//! S3-FIFO (Yang et al., SOSP 2023) as libCacheSim defines it with its defaults: a small
//! FIFO (10% of the capacity), a main FIFO (the rest) with a 2-bit reinsertion counter, and a
//! ghost FIFO of ids (90% of the capacity). The rules, tie-breaks included, are spelled out
//! in the reference engine's `S3FIFO` class; this file follows them step for step.
//! Sized mode counts the capacity, the three queue sizes and their contents in bytes.

use crate::cache::list::Placed;
use crate::cache::policy::{delegate, put, step_through_gate, Gate, Options, Policy};

pub struct S3Fifo {
    capacity: usize,
    small_size: usize,
    main_size: usize,
    ghost_size: usize,
    /// A small-queue object moves to main at eviction if hit at least this often.
    threshold: u32,
    has_evicted: bool,
    /// Small, main and ghost, each counting bytes in sized mode; cached objects and ghost ids
    /// each hold a slot.
    places: Placed<3, 2>,
    /// Hits since the object entered its queue (main: the reinsertion counter).
    count: Vec<u32>,
}

/// The queues: the small and main FIFOs hold the cached objects, the ghost FIFO ids only.
const SMALL: usize = 0;
const MAIN: usize = 1;
const GHOST: usize = 2;

impl S3Fifo {
    /// Put `slot` at the new end of `to` with its hit counter.
    fn put<const SIZED: bool>(&mut self, slot: u32, to: usize, count: u32) {
        self.places.push::<SIZED>(slot, to);
        self.count[slot as usize] = count;
    }

    fn evict<const SIZED: bool>(&mut self) {
        self.has_evicted = true;
        if self.places.held(MAIN) > self.main_size as u64 || self.places.held(SMALL) == 0 {
            // Main: reinsert objects hit since they entered (one hit less), evict the first other.
            while let Some(slot) = self.places.pop::<SIZED>(MAIN) {
                let c = self.count[slot as usize];
                if c == 0 {
                    self.places.release(slot);
                    return;
                }
                self.put::<SIZED>(slot, MAIN, c.min(3) - 1);
            }
        } else {
            // Small: promote objects hit often enough, evict the first other into the ghost,
            // which keeps the ids whose sizes fit in it.
            while let Some(slot) = self.places.pop::<SIZED>(SMALL) {
                if self.count[slot as usize] >= self.threshold {
                    self.put::<SIZED>(slot, MAIN, 0);
                    continue;
                }
                let size = self.places.size::<SIZED>(slot);
                if size > self.ghost_size as u64 {
                    self.places.release(slot);
                    return;
                }
                self.places.make_room::<SIZED>(GHOST, size, self.ghost_size as u64);
                self.put::<SIZED>(slot, GHOST, 0);
                return;
            }
        }
    }

    fn insert<const SIZED: bool>(&mut self, id: u32, to: usize, size: u64) {
        let slot = self.places.admit::<SIZED>(to, id, size);
        put(&mut self.count, slot, 0);
    }
}

impl Policy for S3Fifo {
    fn new(capacity: usize, n_ids: usize, _: Options) -> Self {
        // Same float arithmetic as libCacheSim: truncate capacity * ratio. The table's minimum
        // capacity (10) leaves the small queue room for one object.
        let small_size = (capacity as f64 * 0.1) as usize;
        let ghost_size = (capacity as f64 * 0.9) as usize;
        let expected = (capacity + ghost_size + 1).min(n_ids);
        S3Fifo {
            capacity,
            small_size,
            main_size: capacity - small_size,
            ghost_size,
            threshold: 2,
            has_evicted: false,
            places: Placed::new(n_ids, expected),
            count: Vec::with_capacity(expected),
        }
    }

    step_through_gate!();

    /// libCacheSim's order (its `find`, then its `can_insert`): a ghost hit forgets the ghost
    /// whether or not the filter then admits the object.
    #[inline(always)]
    fn step_gated<const SIZED: bool, G: Gate>(&mut self, id: u32, size: u64, _next_use: u64, gate: &mut G) -> bool {
        gate.seen(id, size);
        let mut ghost_hit = false;
        match self.places.find(id) {
            Some((slot, SMALL | MAIN)) => {
                let s = slot as usize;
                self.count[s] = self.count[s].saturating_add(1);
                return true;
            }
            Some((slot, _)) => {
                // In the ghost FIFO.
                self.places.forget::<SIZED>(slot);
                ghost_hit = true;
            }
            None => {}
        }
        // libCacheSim admits only what fits in the small queue (the ghost id is gone anyway);
        // never the case for unit sizes, the small queue holding at least one object.
        if size > self.small_size as u64 {
            return false;
        }
        // libCacheSim's S3FIFO_can_insert asks the filter only of what fits the small queue.
        if !gate.admit(id, size) || size > self.capacity as u64 {
            return false;
        }
        while self.places.held(SMALL) + self.places.held(MAIN) + size > self.capacity as u64 {
            self.evict::<SIZED>();
        }
        if ghost_hit {
            self.insert::<SIZED>(id, MAIN, size);
        } else if size >= self.small_size as u64 {
            // libCacheSim never inserts an object as large as the small queue.
        } else if !self.has_evicted && self.places.held(SMALL) >= self.small_size as u64 {
            self.insert::<SIZED>(id, MAIN, size);
        } else {
            self.insert::<SIZED>(id, SMALL, size);
        }
        false
    }

    delegate!(places: prefetch, contains, len, used);
}
