//! ARC, Adaptive Replacement Cache (Megiddo and Modha, FAST 2003), as in the paper's Figure 4.
//!
//! T1 holds objects seen once recently, T2 objects seen at least twice; B1 and B2 are ghost
//! lists remembering the ids recently evicted from T1 and T2 (no data). The target size `p`
//! of T1 is a real number: a hit in B1 grows it, a hit in B2 shrinks it. Rounding `p` to an
//! integer changes results, so it stays an f64 here and in the reference, with the same
//! operations in the same order.
//!
//! Sized mode follows libCacheSim's ARC, which counts all four lists in bytes; the rules are
//! spelled out in the reference engine's `ARC._access_sized`.

use super::list::{Links, List, Slots};
use super::{Policy, NIL};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Where {
    T1,
    T2,
    B1,
    B2,
}

pub struct Arc {
    c: usize,
    p: f64,
    /// Every id in one of the four lists (cached or ghost) holds a slot: at most 2c of them.
    slots: Slots,
    links: Links,
    /// The list of the id in each slot.
    place: Vec<Where>,
    t1: List,
    t2: List,
    b1: List,
    b2: List,
    /// Sized mode: bytes in T1, T2, B1, B2; the size of the id in each slot; whether the
    /// latest ghost hit was in B2.
    bytes: [u64; 4],
    size_of: Vec<u64>,
    last_ghost_in_b2: bool,
}

impl Arc {
    pub fn new(capacity: usize, n_ids: usize) -> Self {
        Arc {
            c: capacity,
            p: 0.0,
            slots: Slots::new(n_ids, (2 * capacity).min(n_ids)),
            links: Links::with_capacity((2 * capacity).min(n_ids)),
            place: Vec::with_capacity((2 * capacity).min(n_ids)),
            t1: List::default(),
            t2: List::default(),
            b1: List::default(),
            b2: List::default(),
            bytes: [0; 4],
            size_of: Vec::new(),
            last_ghost_in_b2: false,
        }
    }

    /// The target size of T1, for tests and teaching.
    pub fn p(&self) -> f64 {
        self.p
    }

    fn list(&mut self, w: Where) -> &mut List {
        match w {
            Where::T1 => &mut self.t1,
            Where::T2 => &mut self.t2,
            Where::B1 => &mut self.b1,
            Where::B2 => &mut self.b2,
        }
    }

    /// Move the object in `slot` from its list to the front of list `to`.
    fn move_to_front(&mut self, slot: u32, to: Where) {
        let from = self.place[slot as usize];
        let mut l = *self.list(from);
        self.links.remove(&mut l, slot);
        *self.list(from) = l;
        self.push_front(slot, to);
    }

    fn push_front(&mut self, slot: u32, to: Where) {
        let mut l = *self.list(to);
        self.links.push_front(&mut l, slot);
        *self.list(to) = l;
        self.place[slot as usize] = to;
    }

    /// Move the LRU end of `from` to the front of `to`.
    fn demote_lru(&mut self, from: Where, to: Where) {
        let tail = self.list(from).tail;
        if tail != NIL {
            self.move_to_front(tail, to);
        }
    }

    /// Forget the LRU end of a ghost list entirely.
    fn drop_lru(&mut self, from: Where) {
        let mut l = *self.list(from);
        if let Some(slot) = self.links.pop_back(&mut l) {
            self.slots.release(slot);
        }
        *self.list(from) = l;
    }

    /// Sized mode: move `slot` to the front of `to`, moving its bytes along.
    fn move_sized(&mut self, slot: u32, to: Where) {
        let size = self.size_of[slot as usize];
        self.bytes[self.place[slot as usize] as usize] -= size;
        self.bytes[to as usize] += size;
        self.move_to_front(slot, to);
    }

    /// Sized mode: forget the LRU end of `from`.
    fn drop_lru_sized(&mut self, from: Where) {
        let tail = self.list(from).tail;
        if tail != NIL {
            self.bytes[from as usize] -= self.size_of[tail as usize];
            self.drop_lru(from);
        }
    }

    /// Sized mode: libCacheSim's REPLACE in bytes.
    fn replace_sized(&mut self) {
        let t1 = self.bytes[Where::T1 as usize];
        let t1f = t1 as f64;
        if (t1 > 0 && (t1f > self.p || (t1f == self.p && self.last_ghost_in_b2))) || self.bytes[Where::T2 as usize] == 0
        {
            let tail = self.t1.tail;
            if tail != NIL {
                self.move_sized(tail, Where::B1);
            }
        } else {
            let tail = self.t2.tail;
            if tail != NIL {
                self.move_sized(tail, Where::B2);
            }
        }
    }

    /// REPLACE(x, p) from the paper: evict from T1 into B1, or from T2 into B2.
    fn replace(&mut self, x_in_b2: bool) {
        let t1 = self.t1.len as f64;
        if self.t1.len >= 1 && ((x_in_b2 && t1 == self.p) || t1 > self.p) {
            self.demote_lru(Where::T1, Where::B1);
        } else {
            self.demote_lru(Where::T2, Where::B2);
        }
    }
}

impl Policy for Arc {
    fn access(&mut self, id: u32, _next_use: u64) -> bool {
        let c = self.c as f64;
        let slot = self.slots.get(id);
        let place = if slot == NIL { None } else { Some(self.place[slot as usize]) };
        match place {
            // Case I: a hit in T1 or T2.
            Some(Where::T1 | Where::T2) => {
                self.move_to_front(slot, Where::T2);
                true
            }
            // Case II: a ghost hit in B1: recency deserved more room.
            Some(Where::B1) => {
                let (b1, b2) = (self.b1.len as f64, self.b2.len as f64);
                let delta = if b1 >= b2 { 1.0 } else { b2 / b1 };
                self.p = (self.p + delta).min(c);
                self.replace(false);
                self.move_to_front(slot, Where::T2);
                false
            }
            // Case III: a ghost hit in B2: frequency deserved more room.
            Some(Where::B2) => {
                let (b1, b2) = (self.b1.len as f64, self.b2.len as f64);
                let delta = if b2 >= b1 { 1.0 } else { b1 / b2 };
                self.p = (self.p - delta).max(0.0);
                self.replace(true);
                self.move_to_front(slot, Where::T2);
                false
            }
            // Case IV: not in any list.
            None => {
                let l1 = self.t1.len + self.b1.len;
                let total = l1 + self.t2.len + self.b2.len;
                if l1 == self.c {
                    if self.t1.len < self.c {
                        self.drop_lru(Where::B1);
                        self.replace(false);
                    } else {
                        // T1 alone fills the cache: its LRU leaves without a ghost.
                        self.drop_lru(Where::T1);
                    }
                } else if total >= self.c {
                    if total == 2 * self.c {
                        self.drop_lru(Where::B2);
                    }
                    self.replace(false);
                }
                let slot = self.slots.assign(id);
                if self.place.len() < self.slots.high_water() {
                    self.place.resize(self.slots.high_water(), Where::T1);
                }
                self.push_front(slot, Where::T1);
                false
            }
        }
    }
    fn supports_sizes(&self) -> bool {
        true
    }
    fn access_sized(&mut self, id: u32, size: u64, _next_use: u64) -> bool {
        let (t1, t2, b1, b2) = (Where::T1 as usize, Where::T2 as usize, Where::B1 as usize, Where::B2 as usize);
        let slot = self.slots.get(id);
        let place = if slot == NIL { None } else { Some(self.place[slot as usize]) };
        let mut ghost_hit = false;
        match place {
            Some(Where::T1) => {
                self.last_ghost_in_b2 = false;
                self.move_sized(slot, Where::T2);
                return true;
            }
            Some(Where::T2) => {
                self.last_ghost_in_b2 = false;
                self.move_to_front(slot, Where::T2);
                return true;
            }
            Some(Where::B1) => {
                self.last_ghost_in_b2 = false;
                ghost_hit = true;
                let delta = (self.bytes[b2] as f64 / self.bytes[b1] as f64).max(1.0);
                self.p = (self.p + delta).min(self.c as f64);
            }
            Some(Where::B2) => {
                self.last_ghost_in_b2 = true;
                ghost_hit = true;
                let delta = (self.bytes[b1] as f64 / self.bytes[b2] as f64).max(1.0);
                self.p = (self.p - delta).max(0.0);
            }
            None => {}
        }
        if ghost_hit {
            let from = self.place[slot as usize];
            let mut l = *self.list(from);
            self.links.remove(&mut l, slot);
            *self.list(from) = l;
            self.bytes[from as usize] -= self.size_of[slot as usize];
            self.slots.release(slot);
        }
        let c = self.c as u64;
        if size > c {
            return false;
        }
        while self.bytes[t1] + self.bytes[t2] + size > c {
            if ghost_hit {
                self.replace_sized();
            } else if self.bytes[t1] + self.bytes[b1] + size > c {
                if self.bytes[b1] > 0 {
                    self.drop_lru_sized(Where::B1);
                    self.replace_sized();
                } else {
                    self.drop_lru_sized(Where::T1);
                }
            } else {
                if self.bytes.iter().sum::<u64>() >= 2 * c && self.bytes[b2] > 0 {
                    self.drop_lru_sized(Where::B2);
                }
                self.replace_sized();
            }
        }
        let to = if ghost_hit {
            self.last_ghost_in_b2 = false;
            Where::T2
        } else {
            Where::T1
        };
        let slot = self.slots.assign(id);
        let hw = self.slots.high_water();
        if self.place.len() < hw {
            self.place.resize(hw, Where::T1);
        }
        if self.size_of.len() < hw {
            self.size_of.resize(hw, 0);
        }
        self.size_of[slot as usize] = size;
        self.bytes[to as usize] += size;
        self.push_front(slot, to);
        false
    }
    fn contains(&self, id: u32) -> bool {
        let slot = self.slots.peek(id);
        slot != NIL && matches!(self.place[slot as usize], Where::T1 | Where::T2)
    }
    fn len(&self) -> usize {
        self.t1.len + self.t2.len
    }
    fn used_bytes(&self) -> u64 {
        self.bytes[Where::T1 as usize] + self.bytes[Where::T2 as usize]
    }
}
