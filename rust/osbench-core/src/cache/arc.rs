//! ARC, Adaptive Replacement Cache (Megiddo and Modha, FAST 2003), as in the paper's Figure 4.
//!
//! T1 holds objects seen once recently, T2 objects seen at least twice; B1 and B2 are ghost
//! lists remembering the ids recently evicted from T1 and T2 (no data). The target size `p`
//! of T1 is a real number: a hit in B1 grows it, a hit in B2 shrinks it. Rounding `p` to an
//! integer changes results, so it stays an f64 here and in the reference, with the same
//! operations in the same order.

use super::list::{Links, List};
use super::{ensure, Policy};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Where {
    Nowhere,
    T1,
    T2,
    B1,
    B2,
}

pub struct Arc {
    c: usize,
    p: f64,
    links: Links,
    place: Vec<Where>,
    t1: List,
    t2: List,
    b1: List,
    b2: List,
}

impl Arc {
    pub fn new(capacity: usize, n_ids: usize) -> Self {
        Arc {
            c: capacity,
            p: 0.0,
            links: Links::with_ids(n_ids),
            place: vec![Where::Nowhere; n_ids],
            t1: List::default(),
            t2: List::default(),
            b1: List::default(),
            b2: List::default(),
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
            Where::Nowhere => unreachable!("an id that is in no list has no list"),
        }
    }

    /// Move `id` from wherever it is to the front (MRU end) of list `to`.
    fn move_to_front(&mut self, id: u32, to: Where) {
        let from = self.place[id as usize];
        if from != Where::Nowhere {
            let mut l = *self.list(from);
            self.links.remove(&mut l, id);
            *self.list(from) = l;
        }
        if to != Where::Nowhere {
            let mut l = *self.list(to);
            self.links.push_front(&mut l, id);
            *self.list(to) = l;
        }
        self.place[id as usize] = to;
    }

    /// Move the LRU end of `from` to the front of `to` (`Nowhere` drops it).
    fn demote_lru(&mut self, from: Where, to: Where) {
        let tail = self.list(from).tail;
        if tail != super::NIL {
            self.move_to_front(tail, to);
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
        ensure(&mut self.place, id, Where::Nowhere);
        self.links.ensure(id);
        let c = self.c as f64;
        match self.place[id as usize] {
            // Case I: a hit in T1 or T2.
            Where::T1 | Where::T2 => {
                self.move_to_front(id, Where::T2);
                true
            }
            // Case II: a ghost hit in B1: recency deserved more room.
            Where::B1 => {
                let (b1, b2) = (self.b1.len as f64, self.b2.len as f64);
                let delta = if b1 >= b2 { 1.0 } else { b2 / b1 };
                self.p = (self.p + delta).min(c);
                self.replace(false);
                self.move_to_front(id, Where::T2);
                false
            }
            // Case III: a ghost hit in B2: frequency deserved more room.
            Where::B2 => {
                let (b1, b2) = (self.b1.len as f64, self.b2.len as f64);
                let delta = if b2 >= b1 { 1.0 } else { b1 / b2 };
                self.p = (self.p - delta).max(0.0);
                self.replace(true);
                self.move_to_front(id, Where::T2);
                false
            }
            // Case IV: not in any list.
            Where::Nowhere => {
                let l1 = self.t1.len + self.b1.len;
                let total = l1 + self.t2.len + self.b2.len;
                if l1 == self.c {
                    if self.t1.len < self.c {
                        self.demote_lru(Where::B1, Where::Nowhere);
                        self.replace(false);
                    } else {
                        self.demote_lru(Where::T1, Where::Nowhere);
                    }
                } else if total >= self.c {
                    if total == 2 * self.c {
                        self.demote_lru(Where::B2, Where::Nowhere);
                    }
                    self.replace(false);
                }
                self.move_to_front(id, Where::T1);
                false
            }
        }
    }
    fn contains(&self, id: u32) -> bool {
        matches!(self.place.get(id as usize), Some(Where::T1 | Where::T2))
    }
    fn len(&self) -> usize {
        self.t1.len + self.t2.len
    }
}
