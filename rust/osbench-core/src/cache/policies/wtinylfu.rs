//! W-TinyLFU (Einziger, Friedman and Manes, 2017) as libCacheSim defines it with its defaults:
//! a window LRU (1% of the capacity) in front of an SLRU main cache (probation 1/5, protected
//! 4/5 of the rest), a window candidate entering main only if libCacheSim's counting Bloom
//! filter counts it more often than main's victim. The rules are spelled out in the reference
//! engine's `WTinyLFU` class; this file follows them. The sketch hashes each object's own key
//! (XXH64, libCacheSim's seeds), given by [`Policy::learn_keys`]; an id without one is its
//! own key. Sized mode counts bytes in the capacity, the window and the segments.

use crate::cache::list::{Queues, Slots};
use crate::cache::policy::{put, Options, Policy};
use crate::cache::NIL;
use crate::hash::xxh64_u64;

/// libCacheSim's `HASH_SEED0` and `HASH_SEED1` (`dataStructure/hash/hash.h`).
const SEEDS: [u64; 2] = [0x1234_5678, 0x1234_4321];
/// The sketch's target error rate (`WTinyLFU_init`).
const ERROR: f64 = 0.001;
/// Main-cache hits between two halvings of the counters, per unit of main capacity.
const SAMPLE: u64 = 32;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Where {
    Window,
    Probation,
    Protected,
}
const W: usize = Where::Window as usize;
const P: usize = Where::Probation as usize;
const Q: usize = Where::Protected as usize;

/// libCacheSim's counting Bloom filter (`minimalIncrementCBF.c`): `hashes` counters per key.
struct Sketch {
    counters: Vec<u32>,
    hashes: u32,
}

impl Sketch {
    /// The filter `minimalIncrementCBF_init` makes for `entries` (a C `int`: wrapped to 32 bits).
    // Its literals for ln(2)**2 and ln(2), not the exact constants: the same roundings.
    #[allow(clippy::approx_constant)]
    fn new(entries: u64) -> Sketch {
        let entries = entries as u32 as i32 as f64;
        let per_entry = -ERROR.ln() / 0.480453013918201;
        let hashes = (0.693147180559945 * per_entry).ceil() as u32;
        let mut n = (per_entry * entries).ceil().min(i32::MAX as f64) as i32;
        if n < hashes as i32 {
            n = 2 * hashes as i32;
        }
        Sketch { counters: vec![0; n as usize], hashes }
    }

    /// The counters of `key`: `(a + i * b) % n` in 32-bit arithmetic, a and b the low halves of
    /// its two hashes.
    #[inline(always)]
    fn slots(&self, key: u64) -> impl Iterator<Item = usize> {
        let a = xxh64_u64(key, SEEDS[0]) as u32;
        let b = xxh64_u64(key, SEEDS[1]) as u32;
        let n = self.counters.len() as u32;
        (0..self.hashes).map(move |i| (a.wrapping_add(i.wrapping_mul(b)) % n) as usize)
    }

    #[inline]
    fn estimate(&self, key: u64) -> u32 {
        self.slots(key).map(|x| self.counters[x]).min().unwrap_or(0)
    }

    /// One more for `key`: libCacheSim adds one to every counter of the key.
    #[inline]
    fn count(&mut self, key: u64) {
        let a = xxh64_u64(key, SEEDS[0]) as u32;
        let b = xxh64_u64(key, SEEDS[1]) as u32;
        let n = self.counters.len() as u32;
        for i in 0..self.hashes {
            let x = (a.wrapping_add(i.wrapping_mul(b)) % n) as usize;
            self.counters[x] = self.counters[x].wrapping_add(1);
        }
    }

    fn halve(&mut self) {
        for c in &mut self.counters {
            *c >>= 1;
        }
    }
}

pub struct WTinyLfu {
    capacity: u64,
    window: u64,
    main: u64,
    segment: [u64; 2],
    slots: Slots,
    /// The window, probation and protected, indexed by `Where`, each counting bytes in sized mode.
    queues: Queues<3>,
    place: Vec<Where>,
    sketch: Sketch,
    /// Each id's own key, as far as given (an id beyond is its own key).
    keys: Vec<u64>,
    main_hits: u64,
}

/// The window and the probation segment (for `capacity`) at `window`, as libCacheSim sizes them.
fn sizes(capacity: u64, window: f64) -> (u64, u64, [u64; 2]) {
    let w = (capacity as f64 * window) as u64;
    let main = capacity - w;
    (w, main, [(1.0 / 5.0 * main as f64) as u64, (4.0 / 5.0 * main as f64) as u64])
}

/// The smallest capacity whose window and probation segment each hold one object.
pub fn min_capacity(window: f64) -> u64 {
    // Both grow with the capacity, so search up (or down) from where the window reaches one.
    let fits = |c: u64| {
        let (w, _, segment) = sizes(c, window);
        w >= 1 && segment[0] >= 1
    };
    let mut c = ((1.0 / window) as u64).max(1);
    while c > 1 && fits(c - 1) {
        c -= 1;
    }
    while !fits(c) {
        c += 1;
    }
    c
}

impl WTinyLfu {
    #[inline(always)]
    fn key(&self, id: u32) -> u64 {
        self.keys.get(id as usize).copied().unwrap_or(id as u64)
    }

    #[inline(always)]
    fn main_held(&self) -> u64 {
        self.queues.held(P) + self.queues.held(Q)
    }

    /// Main's victim: probation's least recent, or protected's when probation is empty.
    #[inline]
    fn main_victim(&self) -> u32 {
        let q = if self.queues.len(P) > 0 { P } else { Q };
        self.queues.oldest(q)
    }

    #[inline]
    fn main_evict<const SIZED: bool>(&mut self) {
        let q = if self.queues.len(P) > 0 { P } else { Q };
        self.queues.drop_oldest::<SIZED>(q, &mut self.slots);
    }

    /// Move `slot` (in the window) into main: the first segment with room for it, or
    /// probation after main evicts until it fits.
    fn main_insert<const SIZED: bool>(&mut self, slot: u32, size: u64) {
        let to = if self.queues.held(P) + size <= self.segment[0] {
            Where::Probation
        } else if self.queues.held(Q) + size <= self.segment[1] {
            Where::Protected
        } else {
            while self.main_held() + size > self.main {
                self.main_evict::<SIZED>();
            }
            Where::Probation
        };
        self.queues.move_to::<SIZED>(W, to as usize, slot);
        self.place[slot as usize] = to;
    }

    /// A hit in main, as SLRU's: probation moves up, protected's least recent cool down, and
    /// probation's least recent leave while it is over.
    #[inline]
    fn main_hit<const SIZED: bool>(&mut self, slot: u32, at: Where) {
        if at == Where::Protected {
            self.queues.touch(Q, slot);
            return;
        }
        self.queues.move_to::<SIZED>(P, Q, slot);
        self.place[slot as usize] = Where::Protected;
        while self.queues.held(Q) > self.segment[1] {
            let down = self.queues.oldest(Q);
            self.queues.move_to::<SIZED>(Q, P, down);
            self.place[down as usize] = Where::Probation;
            while self.queues.held(P) > self.segment[0] {
                self.main_evict::<SIZED>();
            }
        }
    }

    /// libCacheSim's `WTinyLFU_evict` as its Python binding runs it: candidates leave the
    /// window until one leaves the cache or takes the place of main's victim; with the window
    /// empty main's victim leaves.
    fn evict<const SIZED: bool>(&mut self) {
        loop {
            let v = self.queues.oldest(W);
            if v == NIL {
                self.main_evict::<SIZED>();
                return;
            }
            let size = self.queues.size::<SIZED>(v);
            let key = self.key(self.slots.id(v));
            let mut done = true;
            if self.main_held() + size <= self.main {
                self.main_insert::<SIZED>(v, size);
                done = false;
            } else {
                let victim = self.key(self.slots.id(self.main_victim()));
                if self.sketch.estimate(key) > self.sketch.estimate(victim) {
                    self.main_evict::<SIZED>();
                    self.main_insert::<SIZED>(v, size);
                } else {
                    self.queues.forget::<SIZED>(W, v, &mut self.slots);
                }
            }
            self.sketch.count(key);
            if done {
                return;
            }
        }
    }
}

impl Policy for WTinyLfu {
    fn new(capacity: usize, n_ids: usize, options: Options) -> Self {
        let capacity = capacity as u64;
        let (window, main, segment) = sizes(capacity, options.real("window"));
        let expected = (capacity as usize + 1).min(n_ids);
        WTinyLfu {
            capacity,
            window,
            main,
            segment,
            slots: Slots::new(n_ids, expected),
            queues: Queues::with_capacity(expected),
            place: Vec::with_capacity(expected),
            sketch: Sketch::new(main),
            keys: Vec::new(),
            main_hits: 0,
        }
    }

    fn learn_keys(&mut self, first: u32, keys: &[u64]) {
        let end = first as usize + keys.len();
        if self.keys.len() < end {
            let from = self.keys.len() as u64;
            self.keys.extend(from..end as u64);
        }
        self.keys[first as usize..end].copy_from_slice(keys);
    }

    #[inline(always)]
    fn step<const SIZED: bool>(&mut self, id: u32, size: u64, _next_use: u64) -> bool {
        let slot = self.slots.get(id);
        if slot != NIL {
            let at = self.place[slot as usize];
            if at == Where::Window {
                self.queues.touch(W, slot);
                return true;
            }
            self.main_hit::<SIZED>(slot, at);
            self.sketch.count(self.key(id));
            self.main_hits += 1;
            if self.main_hits >= SAMPLE * self.main {
                self.main_hits = 0;
                self.sketch.halve();
            }
            return true;
        }
        // libCacheSim admits only what fits the window and probation (the cache is larger).
        if size > self.window || size > self.segment[0] {
            return false;
        }
        while self.queues.held(W) + self.main_held() + size > self.capacity {
            self.evict::<SIZED>();
        }
        let slot = self.queues.admit::<SIZED>(W, id, size, &mut self.slots);
        put(&mut self.place, slot, Where::Window);
        self.sketch.count(self.key(id));
        false
    }

    #[inline(always)]
    fn prefetch(&self, id: u32) {
        self.slots.prefetch(id);
    }
    fn contains(&self, id: u32) -> bool {
        self.slots.peek(id) != NIL
    }
    fn len(&self) -> usize {
        self.queues.len(W) + self.queues.len(P) + self.queues.len(Q)
    }
    fn used(&self) -> u64 {
        self.queues.held(W) + self.main_held()
    }
}
