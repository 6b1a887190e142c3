//! 2Q (Johnson and Shasha, VLDB 1994) as libCacheSim defines it with its defaults: Ain, a
//! FIFO of first-time objects (target 25% of the capacity); Aout, a FIFO of ids evicted from
//! Ain (50%); Am, an LRU of objects seen again after leaving Ain (the remaining 75%). The
//! rules are spelled out in the reference engine's `TwoQ` class; this file follows them.
//! Sized mode counts bytes in the capacity and the three targets.

use crate::cache::list::{Queues, Slots};
use crate::cache::policy::{put, slot_lookups, AdmitAll, Gate, Options, Policy};
use crate::cache::NIL;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Where {
    Ain,
    Aout,
    Am,
}

pub struct TwoQ {
    capacity: usize,
    ain_size: usize,
    aout_size: usize,
    am_size: usize,
    slots: Slots,
    /// Ain, Aout and Am, indexed by `Where`, each counting bytes in sized mode.
    queues: Queues<3>,
    place: Vec<Where>,
}

impl TwoQ {
    /// Put `slot` at the new end of `to`.
    fn move_to<const SIZED: bool>(&mut self, slot: u32, to: Where) {
        self.queues.push::<SIZED>(to as usize, slot);
        self.place[slot as usize] = to;
    }
}

impl Policy for TwoQ {
    fn new(capacity: usize, n_ids: usize, _: Options) -> Self {
        // Same float arithmetic as libCacheSim. The table's minimum capacity (4) leaves Ain
        // room for one object.
        let ain_size = (capacity as f64 * 0.25) as usize;
        let aout_size = (capacity as f64 * 0.5) as usize;
        let expected = (capacity + aout_size + 1).min(n_ids);
        TwoQ {
            capacity,
            ain_size,
            aout_size,
            am_size: capacity - ain_size,
            slots: Slots::new(n_ids, expected),
            queues: Queues::with_capacity(expected),
            place: Vec::with_capacity(expected),
        }
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
        let slot = self.slots.get(id);
        let mut ghost_hit = false;
        if slot != NIL {
            match self.place[slot as usize] {
                Where::Ain => return true,
                Where::Am => {
                    self.queues.touch(Where::Am as usize, slot);
                    return true;
                }
                Where::Aout => {
                    self.queues.forget::<SIZED>(Where::Aout as usize, slot, &mut self.slots);
                    ghost_hit = true;
                }
            }
        }
        // libCacheSim admits only what fits in Ain (never the case for unit sizes: Ain >= 1).
        if size > self.ain_size as u64 {
            return false;
        }
        // libCacheSim's TwoQ_can_insert asks the filter only of what fits Ain.
        if !gate.admit(id, size) {
            return false;
        }
        let (ain, aout, am) = (Where::Ain as usize, Where::Aout as usize, Where::Am as usize);
        while self.queues.held(ain) + self.queues.held(am) + size > self.capacity as u64 {
            if self.queues.held(ain) > self.ain_size as u64 {
                let Some(old) = self.queues.pop::<SIZED>(ain) else { break };
                let old_size = self.queues.size::<SIZED>(old);
                if old_size > self.aout_size as u64 {
                    self.slots.release(old);
                    continue;
                }
                self.queues.make_room::<SIZED>(aout, old_size, self.aout_size as u64, &mut self.slots);
                self.move_to::<SIZED>(old, Where::Aout);
            } else if !self.queues.drop_oldest::<SIZED>(am, &mut self.slots) {
                break;
            }
        }
        let to = if ghost_hit {
            // Am is an LRU of its own size: it may evict on its own.
            self.queues.make_room::<SIZED>(am, size, self.am_size as u64, &mut self.slots);
            Where::Am
        } else {
            Where::Ain
        };
        put(&mut self.place, self.queues.admit::<SIZED>(to as usize, id, size, &mut self.slots), to);
        false
    }

    slot_lookups!(|twoq, slot| twoq.place[slot as usize] != Where::Aout);
    fn len(&self) -> usize {
        self.queues.len(Where::Ain as usize) + self.queues.len(Where::Am as usize)
    }
    fn used(&self) -> u64 {
        self.queues.held(Where::Ain as usize) + self.queues.held(Where::Am as usize)
    }
}
