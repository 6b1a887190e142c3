//! Cacheus (Rodriguez et al., FAST 2021) as libCacheSim defines it: two experts, SR-LRU
//! (scan-resistant: lists SR and R with a history H) and CR-LFU (churn-resistant: lowest
//! count, the last to reach it first), weighted by regret with a learning rate that adapts
//! every `capacity` requests; each eviction follows one expert, drawn by weight. The rules are
//! spelled out in the reference engine's `Cacheus` class; this file follows it step for step,
//! with the same draws (splitmix64, seeded) and the same float operations in the same order.
//!
//! SR, R and H share one slot space (an id is in at most one of them, and keeps its slot, and
//! so its count, from the cache to H and back); the count links carry one list per count,
//! newest arrival at the front. The experts' two ghost lists live in a second slot space, as
//! an id can be in H and in a ghost at once.

use crate::cache::list::{Links, List, Queues, Slots};
use crate::cache::memory::prefetch;
use crate::cache::policy::{delegate, put, step_through_gate, Gate, Options, Policy};
use crate::cache::NIL;
use crate::hash::SplitMix64;

/// Queues of the first slot space.
const SR: usize = 0;
const R: usize = 1;
const H: usize = 2;
/// The ghost lists: the SR-LRU expert's victims, the CR-LFU expert's.
const GHOST_LRU: usize = 0;
const GHOST_LFU: usize = 1;

/// Flags of a cached object (SR-LRU's `new_obj`, `demoted`); in H, `NEW` marks a key that
/// left SR as a newcomer.
const NEW: u8 = 1;
const DEMOTED: u8 = 2;

#[derive(Clone, Copy)]
struct Meta {
    place: u8,
    flag: u8,
    /// CR-LFU's count (cached), or the count it left with (in H).
    count: u64,
}

/// The experts' ghost lists, in their own slot space (always counting recorded sizes, 1 each
/// in unit mode).
struct Ghosts {
    slots: Slots,
    lists: Queues<2>,
    /// Which list each ghost slot is in.
    of: Vec<u8>,
}

pub struct Cacheus {
    capacity: u64,
    ghost_capacity: u64,
    slots: Slots,
    /// SR, R and H, each counting bytes in sized mode.
    queues: Queues<3>,
    meta: Vec<Meta>,
    sr_size: u64,
    r_size: u64,
    demoted: u64,
    new: u64,
    len: usize,
    counts: Links,
    /// `buckets[c]`: the cached slots of count c, newest arrival at the front.
    buckets: Vec<List>,
    /// No non-empty bucket lies below this one.
    min_count: u64,
    /// Boxed: off the per-access path of hits, and it keeps the policy enum small.
    ghosts: Box<Ghosts>,
    w_lru: f64,
    w_lfu: f64,
    lr: f64,
    lr_previous: f64,
    hit_rate_previous: f64,
    hits_in_interval: u64,
    unlearn: u64,
    /// Requests left before the next learning-rate update.
    until_update: u64,
    rng: SplitMix64,
}

impl Cacheus {
    fn draw_lr(rng: &mut SplitMix64) -> f64 {
        0.001 + rng.below(1000) as f64 / 1000.0
    }

    fn held(&self) -> u64 {
        self.queues.held(SR) + self.queues.held(R)
    }

    fn join_bucket(&mut self, c: u64, slot: u32) {
        if c as usize >= self.buckets.len() {
            self.buckets.resize(c as usize + 1, List::default());
        }
        self.counts.push_front(&mut self.buckets[c as usize], slot);
        self.min_count = self.min_count.min(c);
    }

    /// R's least recent objects go back to SR (demoted) until R has `room` to spare.
    fn trim_r<const SIZED: bool>(&mut self, room: u64) {
        while self.queues.held(R) + room > self.r_size {
            let Some(old) = self.queues.pop::<SIZED>(R) else { break };
            self.queues.push::<SIZED>(SR, old);
            let m = &mut self.meta[old as usize];
            m.place = SR as u8;
            m.flag = DEMOTED;
            self.demoted += 1;
        }
    }

    fn hit<const SIZED: bool>(&mut self, slot: u32) {
        let m = self.meta[slot as usize];
        if m.place == R as u8 {
            self.queues.touch(R, slot);
        } else {
            self.queues.move_to::<SIZED>(SR, R, slot);
            let mm = &mut self.meta[slot as usize];
            mm.place = R as u8;
            mm.flag = 0;
            self.trim_r::<SIZED>(0);
        }
        self.counts.remove(&mut self.buckets[m.count as usize], slot);
        self.join_bucket(m.count + 1, slot);
        self.meta[slot as usize].count = m.count + 1;
    }

    /// A miss: a key in an expert's ghost lowers that expert's weight; both are normalised.
    fn learn(&mut self, id: u32) {
        let g = self.ghosts.slots.get(id);
        if g != NIL {
            if self.ghosts.of[g as usize] == GHOST_LRU as u8 {
                self.w_lru *= (-self.lr).exp();
            } else {
                self.w_lfu *= (-self.lr).exp();
            }
        }
        self.w_lru /= self.w_lru + self.w_lfu;
        self.w_lfu = 1.0 - self.w_lru;
        if g != NIL {
            let gh = &mut *self.ghosts;
            let q = gh.of[g as usize] as usize;
            gh.lists.forget::<true>(q, g, &mut gh.slots);
        }
    }

    fn insert<const SIZED: bool>(&mut self, id: u32, size: u64, in_h: u32) {
        if in_h != NIL {
            let slot = in_h;
            let m = self.meta[slot as usize];
            self.queues.remove::<SIZED>(H, slot);
            if SIZED {
                self.queues.set_size(slot, size);
            }
            self.meta[slot as usize] = Meta { place: R as u8, flag: 0, count: m.count + 1 };
            self.join_bucket(m.count + 1, slot);
            self.trim_r::<SIZED>(size);
            self.queues.push::<SIZED>(R, slot);
            if m.flag == NEW {
                self.grow_sr();
            }
        } else {
            let slot = self.queues.admit::<SIZED>(SR, id, size, &mut self.slots);
            put(&mut self.meta, slot, Meta { place: SR as u8, flag: NEW, count: 1 });
            self.join_bucket(1, slot);
        }
        self.len += 1;
        while self.queues.held(SR) > self.sr_size {
            let old = self.queues.oldest(SR);
            self.drop_to_history::<SIZED>(old);
        }
        self.trim_h::<SIZED>();
    }

    /// A key that left SR as a newcomer came back: SR was too small.
    fn grow_sr(&mut self) {
        let quotient = self.demoted / self.new;
        let delta = if 1.0 > quotient as f64 + 0.5 { 1.0 } else { quotient as f64 + 0.5 };
        let held = self.held();
        if self.sr_size as f64 + delta > (held - 1) as f64 {
            self.sr_size = held - 1;
        } else {
            self.sr_size = (self.sr_size as f64 + delta) as u64;
        }
        self.r_size = self.capacity - self.sr_size;
    }

    /// The cached `slot` leaves both experts for H, with its count.
    fn drop_to_history<const SIZED: bool>(&mut self, slot: u32) {
        let m = self.meta[slot as usize];
        self.queues.remove::<SIZED>(m.place as usize, slot);
        match m.flag {
            NEW => self.new += 1,
            DEMOTED => self.demoted -= 1,
            _ => {}
        }
        self.counts.remove(&mut self.buckets[m.count as usize], slot);
        self.meta[slot as usize] = Meta { place: H as u8, flag: if m.flag == NEW { NEW } else { 0 }, count: m.count };
        self.queues.push::<SIZED>(H, slot);
        self.len -= 1;
    }

    fn trim_h<const SIZED: bool>(&mut self) {
        while self.queues.held(H) >= self.capacity {
            if !self.queues.drop_oldest::<SIZED>(H, &mut self.slots) {
                break;
            }
        }
    }

    /// Evict one cached object (the cache is not empty).
    fn evict<const SIZED: bool>(&mut self) {
        let lru_choice = if self.queues.len(SR) > 0 { self.queues.oldest(SR) } else { self.queues.oldest(R) };
        while self.buckets[self.min_count as usize].len == 0 {
            self.min_count += 1;
        }
        let lfu_choice = self.buckets[self.min_count as usize].head;
        let follow_lru = (self.rng.below(100) as f64 / 100.0) < self.w_lru;
        if lru_choice == lfu_choice {
            self.drop_to_history::<SIZED>(lru_choice);
            self.trim_h::<SIZED>();
            return;
        }
        let (ghost, victim) = if follow_lru { (GHOST_LRU, lru_choice) } else { (GHOST_LFU, lfu_choice) };
        let id = self.slots.id(victim);
        let size = self.queues.size::<SIZED>(victim);
        self.drop_to_history::<SIZED>(victim);
        self.trim_h::<SIZED>();
        if size <= self.ghost_capacity {
            let gh = &mut *self.ghosts;
            gh.lists.make_room::<true>(ghost, size, self.ghost_capacity, &mut gh.slots);
            let g = gh.lists.admit::<true>(ghost, id, size, &mut gh.slots);
            put(&mut gh.of, g, ghost as u8);
        }
    }

    fn update_lr(&mut self) {
        let hit_rate = (self.hits_in_interval / self.capacity) as f64;
        let d_hit_rate = hit_rate - self.hit_rate_previous;
        let d_lr = self.lr - self.lr_previous;
        self.lr_previous = self.lr;
        self.hit_rate_previous = hit_rate;
        if d_lr != 0.0 {
            let sign = if d_hit_rate / d_lr > 0.0 { 1.0 } else { -1.0 };
            let step = (self.lr * d_lr).abs();
            let moved = self.lr + sign * step;
            self.lr = if moved > 0.001 { moved } else { 0.0001 };
            self.unlearn = 0;
        } else if hit_rate == 0.0 || d_hit_rate <= 0.0 {
            self.unlearn += 1;
        } else if self.unlearn >= 10 {
            self.unlearn = 0;
            self.lr = Self::draw_lr(&mut self.rng);
        }
        self.hits_in_interval = 0;
    }
}

impl Policy for Cacheus {
    fn new(capacity: usize, n_ids: usize, options: Options) -> Self {
        let expected = (capacity * 2).min(n_ids);
        let mut rng = SplitMix64(options.int("seed"));
        let lr = Self::draw_lr(&mut rng);
        let half = (capacity / 2) as u64;
        Cacheus {
            capacity: capacity as u64,
            ghost_capacity: half,
            slots: Slots::new(n_ids, expected),
            queues: Queues::with_capacity(expected),
            meta: Vec::with_capacity(expected),
            sr_size: half,
            r_size: half,
            demoted: 0,
            new: 0,
            len: 0,
            counts: Links::with_capacity(expected),
            buckets: vec![List::default(); 2],
            min_count: 1,
            ghosts: Box::new(Ghosts {
                slots: Slots::new(n_ids, capacity.min(n_ids)),
                lists: Queues::with_capacity(capacity.min(n_ids)),
                of: Vec::new(),
            }),
            w_lru: 0.5,
            w_lfu: 0.5,
            lr,
            lr_previous: 0.0,
            hit_rate_previous: 0.0,
            hits_in_interval: 0,
            unlearn: 0,
            until_update: capacity as u64,
            rng,
        }
    }

    step_through_gate!();

    /// libCacheSim's order: a miss is learnt from (`Cacheus_find`'s
    /// `check_and_update_history`) and every access counts towards the learning rate's update
    /// (`Cacheus_get`), whether or not the filter then admits the object (`can_insert`).
    #[inline(always)]
    fn step_gated<const SIZED: bool, G: Gate>(&mut self, id: u32, size: u64, _next_use: u64, gate: &mut G) -> bool {
        gate.seen(id, size);
        let size = if SIZED { size } else { 1 };
        let slot = self.slots.get(id);
        let hit = slot != NIL && self.meta[slot as usize].place != H as u8;
        if hit {
            self.hit::<SIZED>(slot);
            self.hits_in_interval += 1;
        } else {
            self.learn(id);
            if gate.admit(id, size) && (!SIZED || size <= self.capacity) {
                while self.held() + size > self.capacity && self.len > 0 {
                    self.evict::<SIZED>();
                }
                // The evictions may have pushed the key out of H.
                let in_h = self.slots.get(id);
                let room = if in_h != NIL { self.r_size } else { self.sr_size };
                if size <= room {
                    self.insert::<SIZED>(id, size, in_h);
                }
            }
        }
        self.until_update -= 1;
        if self.until_update == 0 {
            self.update_lr();
            self.until_update = self.capacity;
        }
        hit
    }

    fn len(&self) -> usize {
        self.len
    }
    fn used(&self) -> u64 {
        self.held()
    }
    delegate!(slots: prefetch);
    fn contains(&self, id: u32) -> bool {
        let slot = self.slots.peek(id);
        slot != NIL && self.meta[slot as usize].place != H as u8
    }
    #[inline(always)]
    fn prefetch_near(&self, id: u32) {
        let slot = self.slots.peek(id);
        if slot != NIL {
            prefetch(self.meta.as_ptr().wrapping_add(slot as usize));
            self.counts.prefetch(slot);
        }
    }
}
