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
    /// Sized mode: bytes in Ain, Aout and Am, and the size of the object in each slot.
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

    fn insert(&mut self, id: u32, to: Where) {
        let slot = self.slots.assign(id);
        if self.place.len() < self.slots.high_water() {
            self.place.resize(self.slots.high_water(), Where::Ain);
        }
        self.push(slot, to);
    }

    fn push(&mut self, slot: u32, to: Where) {
        let list = match to {
            Where::Ain => &mut self.ain,
            Where::Aout => &mut self.aout,
            Where::Am => &mut self.am,
        };
        self.links.push_front(list, slot);
        self.place[slot as usize] = to;
    }

    fn pop_sized(&mut self, from: Where) -> Option<u32> {
        let list = match from {
            Where::Ain => &mut self.ain,
            Where::Aout => &mut self.aout,
            Where::Am => &mut self.am,
        };
        let slot = self.links.pop_back(list)?;
        self.used[from as usize] -= self.size_of[slot as usize];
        Some(slot)
    }

    fn push_sized(&mut self, slot: u32, to: Where) {
        self.used[to as usize] += self.size_of[slot as usize];
        self.push(slot, to);
    }

    fn evict_am(&mut self) {
        if let Some(slot) = self.links.pop_back(&mut self.am) {
            self.slots.release(slot);
        }
    }
}

impl Policy for TwoQ {
    #[inline]
    fn access(&mut self, id: u32, _next_use: u64) -> bool {
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
                    self.slots.release(slot);
                    ghost_hit = true;
                }
            }
        }
        while self.ain.len + self.am.len + 1 > self.capacity {
            if self.ain.len > self.ain_size {
                let Some(old) = self.links.pop_back(&mut self.ain) else {
                    break;
                };
                if self.aout_size == 0 {
                    self.slots.release(old);
                    continue;
                }
                while self.aout.len >= self.aout_size {
                    match self.links.pop_back(&mut self.aout) {
                        Some(g) => self.slots.release(g),
                        None => break,
                    }
                }
                self.push(old, Where::Aout);
            } else if self.am.len > 0 {
                self.evict_am();
            } else {
                break;
            }
        }
        if ghost_hit {
            // Am is an LRU of its own size: it may evict on its own.
            while self.am.len >= self.am_size && self.am.len > 0 {
                self.evict_am();
            }
            self.insert(id, Where::Am);
        } else {
            self.insert(id, Where::Ain);
        }
        false
    }
    fn supports_sizes(&self) -> bool {
        true
    }
    fn access_sized(&mut self, id: u32, size: u64, _next_use: u64) -> bool {
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
                    self.used[Where::Aout as usize] -= self.size_of[slot as usize];
                    self.slots.release(slot);
                    ghost_hit = true;
                }
            }
        }
        if size > self.ain_size as u64 {
            return false;
        }
        let (ain, aout, am) = (Where::Ain as usize, Where::Aout as usize, Where::Am as usize);
        while self.used[ain] + self.used[am] + size > self.capacity as u64 {
            if self.used[ain] > self.ain_size as u64 {
                let Some(old) = self.pop_sized(Where::Ain) else { break };
                let old_size = self.size_of[old as usize];
                if old_size > self.aout_size as u64 {
                    self.slots.release(old);
                    continue;
                }
                while self.used[aout] + old_size > self.aout_size as u64 {
                    match self.pop_sized(Where::Aout) {
                        Some(g) => self.slots.release(g),
                        None => break,
                    }
                }
                self.push_sized(old, Where::Aout);
            } else {
                match self.pop_sized(Where::Am) {
                    Some(v) => self.slots.release(v),
                    None => break,
                }
            }
        }
        let to = if ghost_hit {
            while self.used[am] + size > self.am_size as u64 {
                match self.pop_sized(Where::Am) {
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
        if self.size_of.len() < hw {
            self.size_of.resize(hw, 0);
        }
        self.size_of[slot as usize] = size;
        self.push_sized(slot, to);
        false
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
