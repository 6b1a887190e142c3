//! LeCaR (Vietri et al., HotStorage 2018) as libCacheSim defines it: two experts, LRU and LFU,
//! weighted by regret; each eviction follows one expert, drawn by weight, and a later miss on
//! a key that expert evicted lowers its weight. The rules are spelled out in the reference
//! engine's `LeCaR` class; this file follows it step for step, with the same draws
//! (splitmix64, seeded) and the same float operations in the same order.
//!
//! Cached objects and the two histories' ghosts share one slot space. The recency links carry
//! the cache's LRU list and the two histories (a slot is in one of them); the count links carry
//! one list per access count, in order of arrival at that count, so that the LFU candidate is
//! the oldest of the lowest non-empty count.

use crate::cache::list::{Links, List, Slots};
use crate::cache::memory::prefetch;
use crate::cache::policy::{delegate, put, Options, Policy};
use crate::cache::NIL;
use crate::hash::SplitMix64;

const LEARNING_RATE: f64 = 0.45;
const DISCOUNT_AT_CAPACITY: f64 = 0.005;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Where {
    Cached,
    /// In the LRU expert's history.
    GhostLru,
    /// In the LFU expert's history.
    GhostLfu,
}

#[derive(Clone, Copy)]
struct Meta {
    place: Where,
    /// Accesses since it entered (cached objects).
    count: u64,
    /// The request of its eviction (ghosts).
    evicted_at: u64,
    size: u64,
}

pub struct LeCaR {
    capacity: u64,
    discount: f64,
    w_lru: f64,
    w_lfu: f64,
    now: u64,
    used: u64,
    len: usize,
    slots: Slots,
    meta: Vec<Meta>,
    recency: Links,
    lru: List,
    /// The experts' histories, newest at the front, and what each holds.
    ghosts: [List; 2],
    ghost_used: [u64; 2],
    counts: Links,
    /// `buckets[c]`: the cached slots of count c, newest arrival at the front.
    buckets: Vec<List>,
    /// No non-empty bucket lies below this one.
    min_count: u64,
    rng: SplitMix64,
}

impl LeCaR {
    fn join_bucket(&mut self, c: u64, slot: u32) {
        if c as usize >= self.buckets.len() {
            self.buckets.resize(c as usize + 1, List::default());
        }
        self.counts.push_front(&mut self.buckets[c as usize], slot);
    }

    /// The erring expert (0: LRU, 1: LFU) evicted a key requested `t` requests later.
    fn regret(&mut self, erring: usize, t: u64) {
        let (w_bad, w_other) = if erring == 0 { (self.w_lru, self.w_lfu) } else { (self.w_lfu, self.w_lru) };
        let r = self.discount.powf(t as f64);
        let bad = w_bad * (-LEARNING_RATE * r).exp() + 1e-10;
        let total = bad + w_other + 2e-10;
        let (bad, other) = (bad / total, (w_other + 1e-10) / total);
        if erring == 0 {
            (self.w_lru, self.w_lfu) = (bad, other);
        } else {
            (self.w_lfu, self.w_lru) = (bad, other);
        }
    }

    /// Evict one cached object (the cache is not empty), returning its size.
    fn evict(&mut self) -> u64 {
        while self.buckets[self.min_count as usize].len == 0 {
            self.min_count += 1;
        }
        let lru_choice = self.lru.tail;
        let lfu_choice = self.buckets[self.min_count as usize].tail;
        let (victim, expert) = if lru_choice == lfu_choice {
            (lru_choice, None)
        } else if self.rng.below(100) as f64 / 100.0 < self.w_lru {
            (lru_choice, Some(0))
        } else {
            (lfu_choice, Some(1))
        };
        let m = self.meta[victim as usize];
        self.recency.remove(&mut self.lru, victim);
        self.counts.remove(&mut self.buckets[m.count as usize], victim);
        self.len -= 1;
        match expert {
            None => self.slots.release(victim),
            Some(e) => {
                let place = if e == 0 { Where::GhostLru } else { Where::GhostLfu };
                self.meta[victim as usize] = Meta { place, count: 0, evicted_at: self.now, size: m.size };
                self.recency.push_front(&mut self.ghosts[e], victim);
                self.ghost_used[e] += m.size;
                while self.ghost_used[e] > self.capacity / 2 {
                    let Some(old) = self.recency.pop_back(&mut self.ghosts[e]) else { break };
                    self.ghost_used[e] -= self.meta[old as usize].size;
                    self.slots.release(old);
                }
            }
        }
        m.size
    }
}

impl Policy for LeCaR {
    fn new(capacity: usize, n_ids: usize, options: Options) -> Self {
        let expected = (capacity * 2).min(n_ids);
        LeCaR {
            capacity: capacity as u64,
            discount: DISCOUNT_AT_CAPACITY.powf(1.0 / capacity as f64),
            w_lru: 0.5,
            w_lfu: 0.5,
            now: 0,
            used: 0,
            len: 0,
            slots: Slots::new(n_ids, expected),
            meta: Vec::with_capacity(expected),
            recency: Links::with_capacity(expected),
            lru: List::default(),
            ghosts: [List::default(); 2],
            ghost_used: [0; 2],
            counts: Links::with_capacity(expected),
            buckets: vec![List::default(); 2],
            min_count: 1,
            rng: SplitMix64(options.int("seed")),
        }
    }

    #[inline(always)]
    fn step<const SIZED: bool>(&mut self, id: u32, size: u64, _next_use: u64) -> bool {
        self.now += 1;
        let slot = self.slots.get(id);
        if slot != NIL {
            let m = self.meta[slot as usize];
            if m.place == Where::Cached {
                if self.lru.head != slot {
                    self.recency.remove(&mut self.lru, slot);
                    self.recency.push_front(&mut self.lru, slot);
                }
                let c = m.count;
                self.counts.remove(&mut self.buckets[c as usize], slot);
                self.join_bucket(c + 1, slot);
                self.meta[slot as usize].count = c + 1;
                return true;
            }
            // A key in a history: its expert erred.
            let e = if m.place == Where::GhostLru { 0 } else { 1 };
            self.recency.remove(&mut self.ghosts[e], slot);
            self.ghost_used[e] -= m.size;
            self.slots.release(slot);
            self.regret(e, self.now - m.evicted_at);
        }
        if SIZED && size > self.capacity {
            return false;
        }
        while self.used + size > self.capacity && self.len > 0 {
            self.used -= self.evict();
        }
        let slot = self.slots.assign(id);
        put(&mut self.meta, slot, Meta { place: Where::Cached, count: 1, evicted_at: 0, size });
        self.recency.push_front(&mut self.lru, slot);
        self.join_bucket(1, slot);
        self.min_count = 1;
        self.len += 1;
        self.used += size;
        false
    }

    fn len(&self) -> usize {
        self.len
    }
    fn used(&self) -> u64 {
        self.used
    }
    delegate!(slots: prefetch);
    fn contains(&self, id: u32) -> bool {
        let slot = self.slots.peek(id);
        slot != NIL && self.meta[slot as usize].place == Where::Cached
    }
    /// A hit reads the slot's state and moves it in both link sets: ask for all three lines.
    #[inline(always)]
    fn prefetch_near(&self, id: u32) {
        let slot = self.slots.peek(id);
        if slot != NIL {
            prefetch(self.meta.as_ptr().wrapping_add(slot as usize));
            self.recency.prefetch(slot);
            self.counts.prefetch(slot);
        }
    }
}
