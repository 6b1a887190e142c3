//! Clock2Q+ (`clock2qplus`) as libCacheSim defines it: a small FIFO of newcomers in front of a
//! main FIFO run as a CLOCK, a ghost FIFO of the ids the small FIFO let go, and a correlation
//! window in which a hit in the small FIFO does not count. The rules are spelled out in the
//! reference engine's `Clock2QPlus` class; this file follows them. Sized mode counts bytes in
//! the capacity, the three queues and the checks.

use crate::cache::list::Placed;
use crate::cache::policy::{delegate, put, Options, Policy};

pub struct Clock2QPlus {
    capacity: u64,
    fifo_size: u64,
    main_size: u64,
    ghost_size: u64,
    threshold: u32,
    /// The correlation window, in admissions to the small FIFO (libCacheSim keeps a double).
    window: f64,
    /// Admissions to the small FIFO so far.
    admitted: u64,
    has_evicted: bool,
    places: Placed<3, 2>,
    /// Per slot: its counted hits, its admission stamp (small FIFO).
    freq: Vec<u32>,
    stamp: Vec<u64>,
}

/// The queues: the small FIFO and main hold the cached objects, the ghost FIFO ids only.
const FIFO: usize = 0;
const MAIN: usize = 1;
const GHOST: usize = 2;

/// The small FIFO's size: `(int64_t)cache_size * fifo_size_ratio`, truncated.
pub(crate) fn fifo_size(capacity: u64, ratio: f64) -> u64 {
    (capacity as f64 * ratio) as u64
}

/// The smallest capacity whose small FIFO admits an object of size 1 (it takes only objects
/// smaller than itself: 2 or more).
pub(crate) fn min_capacity(ratio: f64) -> u64 {
    let mut c = ((2.0 / ratio).ceil() as u64).max(2);
    while fifo_size(c, ratio) < 2 {
        c += 1;
    }
    while c > 2 && fifo_size(c - 1, ratio) >= 2 {
        c -= 1;
    }
    c
}

impl Clock2QPlus {
    fn admit<const SIZED: bool>(&mut self, to: usize, id: u32, size: u64) -> u32 {
        let slot = self.places.admit::<SIZED>(to, id, size);
        put(&mut self.freq, slot, 0);
        slot
    }

    /// One eviction (libCacheSim's `Clock2QPlus_evict`); false when nothing is cached.
    fn evict<const SIZED: bool>(&mut self) -> bool {
        self.has_evicted = true;
        if self.places.held(MAIN) > self.main_size || self.places.held(FIFO) == 0 {
            while let Some(slot) = self.places.pop::<SIZED>(MAIN) {
                if self.freq[slot as usize] >= 1 {
                    // Back to main's new end, its count cleared.
                    self.freq[slot as usize] = 0;
                    self.places.push::<SIZED>(slot, MAIN);
                } else {
                    self.places.release(slot);
                    return true;
                }
            }
            return false;
        }
        while let Some(slot) = self.places.pop::<SIZED>(FIFO) {
            if self.freq[slot as usize] >= self.threshold {
                self.freq[slot as usize] = 0;
                self.places.push::<SIZED>(slot, MAIN);
                continue;
            }
            let size = self.places.size::<SIZED>(slot);
            if size > self.ghost_size {
                self.places.release(slot);
            } else {
                self.places.make_room::<SIZED>(GHOST, size, self.ghost_size);
                self.places.push::<SIZED>(slot, GHOST);
            }
            return true;
        }
        false
    }
}

impl Policy for Clock2QPlus {
    fn new(capacity: usize, n_ids: usize, options: Options) -> Self {
        // Same float arithmetic as libCacheSim's Clock2QPlus_init.
        let capacity = capacity as u64;
        let fifo_size = fifo_size(capacity, options.real("fifo_size_ratio"));
        let ghost_size = (capacity as f64 * options.real("ghost_size_ratio")) as u64;
        let expected = ((capacity + ghost_size + 1) as usize).min(n_ids);
        Clock2QPlus {
            capacity,
            fifo_size,
            main_size: capacity - fifo_size,
            ghost_size,
            threshold: options.int("move_to_main_threshold") as u32,
            window: fifo_size as f64 * options.real("corr_window_ratio"),
            admitted: 0,
            has_evicted: false,
            places: Placed::new(n_ids, expected),
            freq: Vec::with_capacity(expected),
            stamp: Vec::with_capacity(expected),
        }
    }

    #[inline(always)]
    fn step<const SIZED: bool>(&mut self, id: u32, size: u64, _next_use: u64) -> bool {
        let mut ghost_hit = false;
        match self.places.find(id) {
            Some((slot, FIFO)) => {
                let s = slot as usize;
                if (self.admitted - self.stamp[s]) as f64 >= self.window {
                    self.freq[s] = self.freq[s].saturating_add(1);
                }
                return true;
            }
            Some((slot, MAIN)) => {
                let s = slot as usize;
                self.freq[s] = self.freq[s].saturating_add(1);
                return true;
            }
            Some((slot, _)) => {
                // In the ghost FIFO.
                self.places.forget::<SIZED>(slot);
                ghost_hit = true;
            }
            None => {}
        }
        if size > self.fifo_size {
            return false;
        }
        while self.places.held(FIFO) + self.places.held(MAIN) + size > self.capacity {
            if !self.evict::<SIZED>() {
                break;
            }
        }
        if ghost_hit {
            self.admit::<SIZED>(MAIN, id, size);
        } else if size >= self.fifo_size {
            // Refused after the room was made, as libCacheSim does.
        } else if !self.has_evicted && self.places.held(FIFO) >= self.fifo_size {
            self.admit::<SIZED>(MAIN, id, size);
        } else {
            self.admitted += 1;
            let slot = self.admit::<SIZED>(FIFO, id, size);
            put(&mut self.stamp, slot, self.admitted);
        }
        false
    }

    delegate!(places: prefetch, contains, len, used);
}
