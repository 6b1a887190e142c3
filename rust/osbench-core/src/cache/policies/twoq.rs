//! 2Q (Johnson and Shasha, VLDB 1994) as libCacheSim defines it with its defaults: Ain, a
//! FIFO of first-time objects (target 25% of the capacity); Aout, a FIFO of ids evicted from
//! Ain (50%); Am, an LRU of objects seen again after leaving Ain (the remaining 75%). The
//! rules are spelled out in the reference engine's `TwoQ` class; this file follows them.
//! Sized mode counts bytes in the capacity and the three targets.

use crate::cache::list::{Place, Placed};
use crate::cache::policy::{AdmitAll, Gate, Options, Policy};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Where {
    Ain,
    Aout,
    Am,
}
use Where::{Ain, Am, Aout};

impl Place for Where {
    #[inline(always)]
    fn queue(self) -> usize {
        self as usize
    }
    /// Aout holds ids only.
    #[inline(always)]
    fn cached(self) -> bool {
        self != Aout
    }
}

pub struct TwoQ {
    capacity: usize,
    ain_size: usize,
    aout_size: usize,
    am_size: usize,
    /// Ain, Aout and Am, each counting bytes in sized mode.
    places: Placed<Where, 3>,
}

impl Policy for TwoQ {
    fn new(capacity: usize, n_ids: usize, _: Options) -> Self {
        // Same float arithmetic as libCacheSim. The table's minimum capacity (4) leaves Ain
        // room for one object.
        let ain_size = (capacity as f64 * 0.25) as usize;
        let aout_size = (capacity as f64 * 0.5) as usize;
        let expected = (capacity + aout_size + 1).min(n_ids);
        TwoQ { capacity, ain_size, aout_size, am_size: capacity - ain_size, places: Placed::new(n_ids, expected) }
    }

    /// One access of an object of `size` (1 unless `SIZED`): the queues then count objects, so
    /// one loop serves both modes and the unit path reads no sizes.
    #[inline(always)]
    fn step<const SIZED: bool>(&mut self, id: u32, size: u64, next_use: u64) -> bool {
        self.step_gated::<SIZED, _>(id, size, next_use, &mut AdmitAll)
    }

    /// libCacheSim's order (its `find`, then its `can_insert`): a ghost hit forgets the ghost
    /// whether or not the filter then admits the object.
    #[inline(always)]
    fn step_gated<const SIZED: bool, G: Gate>(&mut self, id: u32, size: u64, _next_use: u64, gate: &mut G) -> bool {
        gate.seen(id, size);
        let q = &mut self.places;
        let mut ghost_hit = false;
        match q.find(id) {
            Some((_, Ain)) => return true,
            Some((slot, Am)) => {
                q.touch(Am, slot);
                return true;
            }
            Some((slot, Aout)) => {
                q.forget::<SIZED>(slot);
                ghost_hit = true;
            }
            None => {}
        }
        // libCacheSim admits only what fits in Ain (never the case for unit sizes: Ain >= 1).
        if size > self.ain_size as u64 {
            return false;
        }
        // libCacheSim's TwoQ_can_insert asks the filter only of what fits Ain.
        if !gate.admit(id, size) {
            return false;
        }
        while q.held(Ain) + q.held(Am) + size > self.capacity as u64 {
            if q.held(Ain) > self.ain_size as u64 {
                let Some(old) = q.pop::<SIZED>(Ain) else { break };
                let old_size = q.size::<SIZED>(old);
                if old_size > self.aout_size as u64 {
                    q.release(old);
                    continue;
                }
                q.make_room::<SIZED>(Aout, old_size, self.aout_size as u64);
                q.push::<SIZED>(old, Aout);
            } else if !q.drop_oldest::<SIZED>(Am) {
                break;
            }
        }
        let to = if ghost_hit {
            // Am is an LRU of its own size: it may evict on its own.
            q.make_room::<SIZED>(Am, size, self.am_size as u64);
            Am
        } else {
            Ain
        };
        q.admit::<SIZED>(to, id, size);
        false
    }

    #[inline(always)]
    fn prefetch(&self, id: u32) {
        self.places.prefetch(id);
    }
    fn contains(&self, id: u32) -> bool {
        self.places.contains(id)
    }
    fn len(&self) -> usize {
        self.places.len(Ain) + self.places.len(Am)
    }
    fn used(&self) -> u64 {
        self.places.held(Ain) + self.places.held(Am)
    }
}
