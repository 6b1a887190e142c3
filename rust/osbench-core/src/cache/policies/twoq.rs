//! 2Q (Johnson and Shasha, VLDB 1994) as libCacheSim defines it with its defaults: Ain, a
//! FIFO of first-time objects (target 25% of the capacity); Aout, a FIFO of ids evicted from
//! Ain (50%); Am, an LRU of objects seen again after leaving Ain (the remaining 75%). The
//! rules are spelled out in the reference engine's `TwoQ` class; this file follows them.
//! Sized mode counts bytes in the capacity and the three targets.

use crate::cache::list::Placed;
use crate::cache::policy::{delegate, step_through_gate, Gate, Options, Policy};

pub struct TwoQ {
    capacity: usize,
    ain_size: usize,
    aout_size: usize,
    am_size: usize,
    /// Ain, Am and Aout, each counting bytes in sized mode.
    places: Placed<3, 2>,
}

/// The queues: Ain and Am hold the cached objects, Aout ids only.
const AIN: usize = 0;
const AM: usize = 1;
const AOUT: usize = 2;

impl Policy for TwoQ {
    fn new(capacity: usize, n_ids: usize, _: Options) -> Self {
        // Same float arithmetic as libCacheSim. The table's minimum capacity (4) leaves Ain
        // room for one object.
        let ain_size = (capacity as f64 * 0.25) as usize;
        let aout_size = (capacity as f64 * 0.5) as usize;
        let expected = (capacity + aout_size + 1).min(n_ids);
        TwoQ { capacity, ain_size, aout_size, am_size: capacity - ain_size, places: Placed::new(n_ids, expected) }
    }

    step_through_gate!();

    /// libCacheSim's order (its `find`, then its `can_insert`): a ghost hit forgets the ghost
    /// whether or not the filter then admits the object.
    #[inline(always)]
    fn step_gated<const SIZED: bool, G: Gate>(&mut self, id: u32, size: u64, _next_use: u64, gate: &mut G) -> bool {
        gate.seen(id, size);
        let q = &mut self.places;
        let mut ghost_hit = false;
        match q.find(id) {
            Some((_, AIN)) => return true,
            Some((slot, AM)) => {
                q.touch(AM, slot);
                return true;
            }
            Some((slot, _)) => {
                // In Aout.
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
        while q.held(AIN) + q.held(AM) + size > self.capacity as u64 {
            if q.held(AIN) > self.ain_size as u64 {
                let Some(old) = q.pop::<SIZED>(AIN) else { break };
                let old_size = q.size::<SIZED>(old);
                if old_size > self.aout_size as u64 {
                    q.release(old);
                    continue;
                }
                q.make_room::<SIZED>(AOUT, old_size, self.aout_size as u64);
                q.push::<SIZED>(old, AOUT);
            } else if !q.drop_oldest::<SIZED>(AM) {
                break;
            }
        }
        let to = if ghost_hit {
            // Am is an LRU of its own size: it may evict on its own.
            q.make_room::<SIZED>(AM, size, self.am_size as u64);
            AM
        } else {
            AIN
        };
        q.admit::<SIZED>(to, id, size);
        false
    }

    delegate!(places: prefetch, contains, len, used);
}
