//! ARC, Adaptive Replacement Cache (Megiddo and Modha, FAST 2003).
//!
//! T1 holds objects seen once recently, T2 objects seen at least twice; B1 and B2 are ghost
//! lists remembering the ids recently evicted from T1 and T2 (no data). The target size `p`
//! of T1 is a real number: a hit in B1 grows it, a hit in B2 shrinks it. Rounding `p` to an
//! integer changes results, so it stays an f64 here and in the reference, with the same
//! operations in the same order.
//!
//! One step serves both modes: the rules are libCacheSim's ARC, which counts the four lists
//! in bytes (spelled out in the reference engine's `ARC._access_sized`). With unit sizes they
//! are the paper's Figure 4 (the reference's `ARC.access`): ghosts exist only in a full cache,
//! so each miss makes room exactly once, and the tests hold the two to the same hits.

use crate::cache::list::Placed;
use crate::cache::policy::{delegate, step_through_gate, Gate, Options, Policy};

pub struct Arc {
    c: u64,
    p: f64,
    /// T1, T2, B1 and B2, each counting bytes in sized mode. Every id in one of them (cached
    /// or ghost) holds a slot: at most 2c of them.
    places: Placed<4, 2>,
    /// Whether the latest ghost hit was in B2 (it tips REPLACE when T1 is exactly at p).
    last_ghost_in_b2: bool,
}

/// The lists: T1 and T2 hold the cached objects, B1 and B2 ids only.
const T1: usize = 0;
const T2: usize = 1;
const B1: usize = 2;
const B2: usize = 3;

impl Arc {
    fn held(&self, list: usize) -> u64 {
        self.places.held(list)
    }

    /// Move the least recent object of `from` to the new end of `to`.
    fn demote<const SIZED: bool>(&mut self, from: usize, to: usize) {
        if let Some(slot) = self.places.pop::<SIZED>(from) {
            self.places.push::<SIZED>(slot, to);
        }
    }

    /// REPLACE: T1's least recent into B1 if T1 is over p (or at p after a B2 ghost hit) or
    /// T2 is empty; else T2's least recent into B2.
    fn replace<const SIZED: bool>(&mut self) {
        let t1 = self.held(T1);
        let t1f = t1 as f64;
        if (t1 > 0 && (t1f > self.p || (t1f == self.p && self.last_ghost_in_b2))) || self.held(T2) == 0 {
            self.demote::<SIZED>(T1, B1);
        } else {
            self.demote::<SIZED>(T2, B2);
        }
    }

    /// Forget the least recent id of `from` (a ghost, or T1's object when T1 fills the cache).
    fn drop_oldest<const SIZED: bool>(&mut self, from: usize) {
        self.places.drop_oldest::<SIZED>(from);
    }
}

impl Policy for Arc {
    fn new(capacity: usize, n_ids: usize, _: Options) -> Self {
        let expected = capacity.saturating_mul(2).min(n_ids);
        Arc { c: capacity as u64, p: 0.0, places: Placed::new(n_ids, expected), last_ghost_in_b2: false }
    }

    step_through_gate!();

    /// libCacheSim's order (`ARC_find`, then `can_insert`): a ghost hit moves `p` and forgets
    /// the ghost whether or not the filter then admits the object.
    #[inline(always)]
    fn step_gated<const SIZED: bool, G: Gate>(&mut self, id: u32, size: u64, _next_use: u64, gate: &mut G) -> bool {
        gate.seen(id, size);
        let c = self.c;
        let ghost = match self.places.find(id) {
            // A hit: to T2's recent end.
            Some((slot, T1 | T2)) => {
                self.last_ghost_in_b2 = false;
                self.places.move_to::<SIZED>(slot, T2);
                return true;
            }
            // A ghost hit in B1: recency deserved more room; in B2: frequency did.
            Some((slot, B1)) => {
                self.last_ghost_in_b2 = false;
                let delta = (self.held(B2) as f64 / self.held(B1) as f64).max(1.0);
                self.p = (self.p + delta).min(c as f64);
                Some(slot)
            }
            Some((slot, _)) => {
                // In B2.
                self.last_ghost_in_b2 = true;
                let delta = (self.held(B1) as f64 / self.held(B2) as f64).max(1.0);
                self.p = (self.p - delta).max(0.0);
                Some(slot)
            }
            None => None,
        };
        let ghost_hit = ghost.is_some();
        if let Some(slot) = ghost {
            // The ghost is forgotten even if the object is then too large to admit.
            self.places.forget::<SIZED>(slot);
        }
        if !gate.admit(id, size) || (SIZED && size > c) {
            return false;
        }
        while self.held(T1) + self.held(T2) + size > c {
            if ghost_hit {
                self.replace::<SIZED>();
            } else if self.held(T1) + self.held(B1) + size > c {
                if self.held(B1) > 0 {
                    self.drop_oldest::<SIZED>(B1);
                    self.replace::<SIZED>();
                } else {
                    // T1 alone fills the cache: its least recent leaves without a ghost.
                    self.drop_oldest::<SIZED>(T1);
                }
            } else {
                let total = self.held(T1) + self.held(T2) + self.held(B1) + self.held(B2);
                if total >= 2 * c && self.held(B2) > 0 {
                    self.drop_oldest::<SIZED>(B2);
                }
                self.replace::<SIZED>();
            }
        }
        let to = if ghost_hit {
            self.last_ghost_in_b2 = false;
            T2
        } else {
            T1
        };
        self.places.admit::<SIZED>(to, id, size);
        false
    }

    delegate!(places: prefetch, contains, len, used);
}
