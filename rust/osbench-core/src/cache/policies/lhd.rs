//! LHD, least hit density (Beckmann, Chen and Cidon, NSDI 2018), as libCacheSim runs it: of a
//! few objects drawn at random (and the last admitted ones that looked evictable), evict the
//! one whose class has shown the fewest hits per byte and per unit of time at its age. The
//! rules are spelled out in the reference engine's `LHD` class; this file follows it step for
//! step, with the same draws (splitmix64, seeded) and the same double-precision operations in
//! the same order.
//!
//! The cached objects sit in one dense array of tags (swap-remove on eviction, as libCacheSim's
//! `tags`); the model is three tables of classes x ages (hits, evictions, densities), 16 x
//! 20,000 doubles each.

use crate::cache::list::{Dense, Member};
use crate::cache::policy::{delegate, Options, Policy};
use crate::cache::NIL;
use crate::hash::SplitMix64;

const MAX_AGE: usize = 20_000;
const CLASSES: usize = 16;
/// libCacheSim's class index is `app * 16 + class` with app 1: the initial densities are taken
/// at that index.
const APP_OFFSET: usize = 16;
const SAMPLES_EARLY: usize = 8;
const SAMPLES_LATE: usize = 32;
const ADMISSIONS: usize = 8;
const EXPLORE_ONE_IN: u64 = 32;
const ACCESSES_PER_RECONFIGURATION: u64 = 1 << 20;
const EWMA_DECAY: f64 = 0.9;
const AGE_COARSENING_ERROR: f64 = 0.01;

#[derive(Clone, Copy)]
struct Tag {
    id: u32,
    explorer: bool,
    /// The time of its last update.
    updated: u64,
    last_hit_age: u64,
    hit_age_before: u64,
    size: u64,
}

impl Member for Tag {
    #[inline(always)]
    fn id(&self) -> u32 {
        self.id
    }
}

pub struct Lhd {
    capacity: u64,
    used: u64,
    tags: Dense<Tag>,
    /// Updates so far (hits and insertions).
    time: u64,
    until_reconfiguration: u64,
    reconfigurations: u64,
    shift: u32,
    ewma_objects: f64,
    ewma_mass: f64,
    /// By class, then age: `class * MAX_AGE + age`.
    hits: Vec<f64>,
    evictions: Vec<f64>,
    densities: Vec<f64>,
    admitted: [u32; ADMISSIONS],
    admitted_head: usize,
    ewma_victim: f64,
    explorer_budget: i64,
    rng: SplitMix64,
}

/// The class of a tag: by powers of two of the sum of its last two hit ages (`hitAgeClass`).
#[inline]
fn class_of(tag: &Tag) -> usize {
    let mut age = tag.last_hit_age + tag.hit_age_before;
    if age == 0 {
        return CLASSES - 1;
    }
    let mut log = 0;
    while age < MAX_AGE as u64 && log < CLASSES - 1 {
        age <<= 1;
        log += 1;
    }
    log
}

impl Lhd {
    #[inline]
    fn age(&self, tag: &Tag) -> usize {
        (((self.time - tag.updated) >> self.shift) as usize).min(MAX_AGE - 1)
    }

    #[inline]
    fn density(&self, tag: &Tag) -> f64 {
        let age = self.age(tag);
        if age == MAX_AGE - 1 {
            return f64::MIN;
        }
        let mut d = self.densities[class_of(tag) * MAX_AGE + age] / tag.size as f64;
        if tag.explorer {
            d += 1.0;
        }
        d
    }

    /// A hit or an insertion of the tag at `at` (`update`).
    fn update(&mut self, at: usize, insert: bool) {
        let mut tag = self.tags[at];
        if !insert {
            let age = self.age(&tag);
            let cell = class_of(&tag) * MAX_AGE + age;
            self.hits[cell] += 1.0;
            if tag.explorer {
                self.explorer_budget += tag.size as i64;
            }
            tag.hit_age_before = tag.last_hit_age;
            tag.last_hit_age = age as u64;
        }
        tag.updated = self.time;
        let explore = self.rng.below(EXPLORE_ONE_IN) == 0;
        tag.explorer = explore && self.explorer_budget > 0 && self.reconfigurations < 50;
        if tag.explorer {
            self.explorer_budget -= tag.size as i64;
        }
        self.tags[at] = tag;
        if insert && !explore && self.density(&tag) < self.ewma_victim {
            self.admitted[self.admitted_head % ADMISSIONS] = tag.id;
            self.admitted_head += 1;
        }
        self.time += 1;
        self.until_reconfiguration -= 1;
        if self.until_reconfiguration == 0 {
            self.reconfigure();
            self.until_reconfiguration = ACCESSES_PER_RECONFIGURATION;
            self.reconfigurations += 1;
        }
    }

    /// Evict one object (the cache is not empty), returning its size (`rank`, `replaced`).
    fn evict(&mut self) -> u64 {
        let samples = if self.reconfigurations > 50 { SAMPLES_LATE } else { SAMPLES_EARLY };
        let n = self.tags.len() as u64;
        let mut victim = NIL as usize;
        let mut best = 0.0;
        for _ in 0..samples {
            let at = self.rng.below(n) as usize;
            let d = self.density(&self.tags[at]);
            if victim == NIL as usize || d < best {
                (victim, best) = (at, d);
            }
        }
        for &id in &self.admitted {
            let at = self.tags.peek(id);
            if id != NIL && at != NIL {
                let d = self.density(&self.tags[at as usize]);
                if d < best {
                    (victim, best) = (at as usize, d);
                }
            }
        }
        self.ewma_victim = EWMA_DECAY * self.ewma_victim + (1.0 - EWMA_DECAY) * best;
        let tag = self.tags[victim];
        let cell = class_of(&tag) * MAX_AGE + self.age(&tag);
        self.evictions[cell] += 1.0;
        if tag.explorer {
            self.explorer_budget += tag.size as i64;
        }
        self.tags.swap_remove(victim);
        tag.size
    }

    /// Every 2**20 updates: decay the counts, adapt the age shift, recompute the densities.
    fn reconfigure(&mut self) {
        for h in self.hits.iter_mut().chain(self.evictions.iter_mut()) {
            *h *= EWMA_DECAY;
        }
        self.adapt_age_coarsening();
        for c in 0..CLASSES {
            let row = c * MAX_AGE;
            let (hits, evictions) = (&self.hits[row..row + MAX_AGE], &self.evictions[row..row + MAX_AGE]);
            let dens = &mut self.densities[row..row + MAX_AGE];
            let mut events = hits[MAX_AGE - 1] + evictions[MAX_AGE - 1];
            let mut total_hits = hits[MAX_AGE - 1];
            let mut lifetime = events;
            for a in (0..MAX_AGE - 1).rev() {
                total_hits += hits[a];
                events += hits[a] + evictions[a];
                lifetime += events;
                dens[a] = if events > 1e-5 { total_hits / lifetime } else { 0.0 };
            }
        }
    }

    fn adapt_age_coarsening(&mut self) {
        self.ewma_objects = self.ewma_objects * EWMA_DECAY + self.tags.len() as f64;
        self.ewma_mass = self.ewma_mass * EWMA_DECAY + 1.0;
        if self.reconfigurations != 5 && self.reconfigurations != 25 {
            return;
        }
        let optimal = self.ewma_objects / self.ewma_mass / (AGE_COARSENING_ERROR * MAX_AGE as f64);
        let mut log2 = 1u32;
        while ((1u64 << log2) as f64) < optimal {
            log2 += 1;
        }
        let delta = log2 as i64 - self.shift as i64;
        self.shift = log2;
        self.ewma_objects *= 8.0;
        self.ewma_mass *= 8.0;
        for counts in self.hits.chunks_mut(MAX_AGE).chain(self.evictions.chunks_mut(MAX_AGE)) {
            if delta < 0 {
                let d = (-delta) as u32;
                for a in (MAX_AGE >> d)..MAX_AGE - 1 {
                    counts[MAX_AGE - 1] += counts[a];
                }
                for a in (0..MAX_AGE - 1).rev() {
                    counts[a] = counts[a >> d] / (1u64 << d) as f64;
                }
            } else if delta > 0 {
                let d = delta as u32;
                for a in 0..MAX_AGE >> d {
                    let mut total = counts[a << d];
                    for i in 1..1usize << d {
                        total += counts[(a << d) + i];
                    }
                    counts[a] = total;
                }
                for c in &mut counts[MAX_AGE >> d..MAX_AGE - 1] {
                    *c = 0.0;
                }
            }
        }
    }
}

impl Policy for Lhd {
    fn new(capacity: usize, n_ids: usize, options: Options) -> Self {
        let mut densities = vec![0.0; CLASSES * MAX_AGE];
        for c in 0..CLASSES {
            for a in 0..MAX_AGE {
                densities[c * MAX_AGE + a] = (APP_OFFSET + c + 1) as f64 / (a + 1) as f64;
            }
        }
        Lhd {
            capacity: capacity as u64,
            used: 0,
            tags: Dense::new(capacity.min(n_ids), n_ids),
            time: 0,
            until_reconfiguration: ACCESSES_PER_RECONFIGURATION,
            reconfigurations: 0,
            shift: 10,
            ewma_objects: 0.0,
            ewma_mass: 0.0,
            hits: vec![0.0; CLASSES * MAX_AGE],
            evictions: vec![0.0; CLASSES * MAX_AGE],
            densities,
            admitted: [NIL; ADMISSIONS],
            admitted_head: 0,
            ewma_victim: 0.0,
            explorer_budget: (capacity / 100) as i64,
            rng: SplitMix64(options.int("seed")),
        }
    }

    #[inline(always)]
    fn step<const SIZED: bool>(&mut self, id: u32, size: u64, _next_use: u64) -> bool {
        let at = self.tags.get(id);
        if at != NIL {
            self.update(at as usize, false);
            return true;
        }
        if SIZED && size > self.capacity {
            return false;
        }
        while self.used + size > self.capacity && !self.tags.is_empty() {
            self.used -= self.evict();
        }
        let at = self.tags.len();
        let tag = Tag { id, explorer: false, updated: 0, last_hit_age: 0, hit_age_before: MAX_AGE as u64, size };
        self.tags.push(tag);
        self.used += size;
        self.update(at, true);
        false
    }

    delegate!(tags: contains, len, prefetch, prefetch_near);
    fn used(&self) -> u64 {
        self.used
    }
}
