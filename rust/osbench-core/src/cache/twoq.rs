//! 2Q (Johnson and Shasha, VLDB 1994) as libCacheSim defines it with its defaults: Ain, a
//! FIFO of first-time objects (target 25% of the capacity); Aout, a FIFO of ids evicted from
//! Ain (50%); Am, an LRU of objects seen again after leaving Ain (the remaining 75%). The
//! rules are spelled out in the reference engine's `TwoQ` class; this file follows them.
//! Sized mode counts bytes in the capacity and the three targets.

use super::list::{Links, List, Slots};
use super::{Policy, NIL};
use crate::error::{invalid, Result};

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
    links: Links,
    place: Vec<Where>,
    ain: List,
    aout: List,
    am: List,
    /// Sizes held in Ain, Aout and Am (bytes in sized mode, else objects), and in sized
    /// mode the size of the object in each slot.
    used: [u64; 3],
    size_of: Vec<u64>,
}

impl TwoQ {
    pub fn new(capacity: usize, n_ids: usize) -> Result<Self> {
        let ain_size = (capacity as f64 * 0.25) as usize;
        let aout_size = (capacity as f64 * 0.5) as usize;
        if ain_size == 0 {
            return Err(invalid(
                "capacity",
                capacity,
                "at least 4 objects for twoq (its Ain queue is 25%)",
            ));
        }
        let expected = (capacity + aout_size + 1).min(n_ids);
        Ok(TwoQ {
            capacity,
            ain_size,
            aout_size,
            am_size: capacity - ain_size,
            slots: Slots::new(n_ids, expected),
            links: Links::with_capacity(expected),
            place: Vec::with_capacity(expected),
            ain: List::default(),
            aout: List::default(),
            am: List::default(),
            used: [0; 3],
            size_of: Vec::new(),
        })
    }

    /// The size of the object in `slot`: its bytes in sized mode, else 1 (capacity in objects).
    #[inline(always)]
    fn size<const SIZED: bool>(&self, slot: u32) -> u64 {
        if SIZED {
            self.size_of[slot as usize]
        } else {
            1
        }
    }

    fn list(&mut self, w: Where) -> &mut List {
        match w {
            Where::Ain => &mut self.ain,
            Where::Aout => &mut self.aout,
            Where::Am => &mut self.am,
        }
    }

    /// Take the oldest of `from` (the LRU end of Am), with its size.
    fn pop<const SIZED: bool>(&mut self, from: Where) -> Option<u32> {
        let mut list = *self.list(from);
        let slot = self.links.pop_back(&mut list)?;
        *self.list(from) = list;
        self.used[from as usize] -= self.size::<SIZED>(slot);
        Some(slot)
    }

    /// Put `slot` at the new end of `to`, with its size.
    fn push<const SIZED: bool>(&mut self, slot: u32, to: Where) {
        self.used[to as usize] += self.size::<SIZED>(slot);
        let mut list = *self.list(to);
        self.links.push_front(&mut list, slot);
        *self.list(to) = list;
        self.place[slot as usize] = to;
    }

    /// One access of an object of `size` (1 unless `SIZED`): `used` then counts objects, so
    /// one loop serves both modes and the unit path reads no sizes.
    #[inline(always)]
    fn step<const SIZED: bool>(&mut self, id: u32, size: u64) -> bool {
        let slot = self.slots.get(id);
        let mut ghost_hit = false;
        if slot != NIL {
            match self.place[slot as usize] {
                Where::Ain => return true,
                Where::Am => {
                    if self.am.head != slot {
                        self.links.remove(&mut self.am, slot);
                        self.links.push_front(&mut self.am, slot);
                    }
                    return true;
                }
                Where::Aout => {
                    self.links.remove(&mut self.aout, slot);
                    self.used[Where::Aout as usize] -= self.size::<SIZED>(slot);
                    self.slots.release(slot);
                    ghost_hit = true;
                }
            }
        }
        // libCacheSim admits only what fits in Ain (never the case for unit sizes: Ain >= 1).
        if size > self.ain_size as u64 {
            return false;
        }
        let (ain, aout, am) = (Where::Ain as usize, Where::Aout as usize, Where::Am as usize);
        while self.used[ain] + self.used[am] + size > self.capacity as u64 {
            if self.used[ain] > self.ain_size as u64 {
                let Some(old) = self.pop::<SIZED>(Where::Ain) else { break };
                let old_size = self.size::<SIZED>(old);
                if old_size > self.aout_size as u64 {
                    self.slots.release(old);
                    continue;
                }
                while self.used[aout] + old_size > self.aout_size as u64 {
                    match self.pop::<SIZED>(Where::Aout) {
                        Some(g) => self.slots.release(g),
                        None => break,
                    }
                }
                self.push::<SIZED>(old, Where::Aout);
            } else {
                match self.pop::<SIZED>(Where::Am) {
                    Some(v) => self.slots.release(v),
                    None => break,
                }
            }
        }
        let to = if ghost_hit {
            // Am is an LRU of its own size: it may evict on its own.
            while self.used[am] + size > self.am_size as u64 {
                match self.pop::<SIZED>(Where::Am) {
                    Some(v) => self.slots.release(v),
                    None => break,
                }
            }
            Where::Am
        } else {
            Where::Ain
        };
        let slot = self.slots.assign(id);
        let hw = self.slots.high_water();
        if self.place.len() < hw {
            self.place.resize(hw, Where::Ain);
        }
        if SIZED {
            if self.size_of.len() < hw {
                self.size_of.resize(hw, 0);
            }
            self.size_of[slot as usize] = size;
        }
        self.push::<SIZED>(slot, to);
        false
    }
}

impl Policy for TwoQ {
    #[inline]
    fn access(&mut self, id: u32, _next_use: u64) -> bool {
        self.step::<false>(id, 1)
    }
    fn supports_sizes(&self) -> bool {
        true
    }
    fn access_sized(&mut self, id: u32, size: u64, _next_use: u64) -> bool {
        self.step::<true>(id, size)
    }
    fn contains(&self, id: u32) -> bool {
        let slot = self.slots.peek(id);
        slot != NIL && self.place[slot as usize] != Where::Aout
    }
    fn len(&self) -> usize {
        self.ain.len + self.am.len
    }
    fn used_bytes(&self) -> u64 {
        self.used[Where::Ain as usize] + self.used[Where::Am as usize]
    }
}
