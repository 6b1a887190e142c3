//! AdaptSize (Berger, Sitaraman and Harchol-Balter, NSDI 2017), as libCacheSim has it
//! (`cache/admission/adaptsize/adaptsize.cpp`, class `Adaptsize`): a missed object of `size`
//! enters with probability `exp(-size / c)`, and `c` is tuned to the trace.
//!
//! Every access updates the statistics (`updateStats`): per object, the requests seen in the
//! current interval and the last size; `stat_size` sums the sizes of the objects known.
//! Every `reconf_interval` accesses (`reconfigure`; when the known objects hold no more than
//! 3x the cache, it looks again 1000 accesses later) the interval's counts are folded into the
//! long-term ones (an exponentially weighted average, decay 0.3), objects whose weight fell
//! below 0.1 are forgotten, and `c` is chosen to maximise a model of the hit ratio
//! (`modelHitRate`: a fixed point for the characteristic time, 20 rounds, and the AdaptSize
//! paper's closed form per object): a coarse scan of log2(c) over 2, 6, 10... below
//! log2(capacity), then golden-section search, at most `max_iteration` steps. The arithmetic
//! is libCacheSim's, operation for operation.
//!
//! Two choices of order that libCacheSim leaves to its hash tables: the objects are visited in
//! the order they were first counted (a forgotten object counted again goes last), and the
//! draws are splitmix64's from `seed` (libCacheSim's generator is shared by a thread's caches).
//! So AdaptSize equals libCacheSim in distribution, not miss for miss.
//!
//! A reconfiguration over a million objects takes most of a second: a replay does it first,
//! before the access that would ([`Gate::prepare`]), looking at the cancel between two rounds
//! of the model, with the same result.

use super::{Filter, MAX_MODULE};
use crate::cache::params::Options;
use crate::cache::policy::{ensure, Gate};
use crate::cache::NIL;
use crate::cancel::Cancel;
use crate::error::Result;
use crate::hash::SplitMix64;

/// The cancel of a reconfiguration no replay prepared (an online access): never raised.
static NEVER: Cancel = Cancel::new();

const EWMA_DECAY: f64 = 0.3;
const GSS_R: f64 = 0.61803399;
const TOL: f64 = 3.0e-8;

#[derive(Clone, Copy)]
struct Seen {
    id: u32,
    times: f64,
    size: u64,
}

/// Objects by id, in the order they were added: a vector and each id's index in it.
#[derive(Default)]
struct Table {
    rows: Vec<Seen>,
    at: Vec<u32>,
}

impl Table {
    fn index(&self, id: u32) -> Option<usize> {
        self.at.get(id as usize).copied().filter(|&i| i != NIL).map(|i| i as usize)
    }

    fn add(&mut self, row: Seen) -> usize {
        ensure(&mut self.at, row.id, NIL);
        self.at[row.id as usize] = self.rows.len() as u32;
        self.rows.push(row);
        self.rows.len() - 1
    }

    fn clear(&mut self) {
        for r in &self.rows {
            self.at[r.id as usize] = NIL;
        }
        self.rows.clear();
    }
}

pub struct AdaptSize {
    cache_size: u64,
    max_iteration: u64,
    reconf_interval: u64,
    next_reconf: u64,
    stat_size: u64,
    c: f64,
    interval: Table,
    longterm: Table,
    sizes: Vec<f64>,
    times: Vec<f64>,
    rng: SplitMix64,
    /// The next access's reconfiguration was done by [`Gate::prepare`].
    prepared: bool,
    /// The statistics were folded but the search for `c` was interrupted: it is done next.
    searching: bool,
}

impl Filter for AdaptSize {
    fn new(capacity: u64, _n_ids: usize, options: &Options) -> Self {
        let reconf_interval = options.int("reconf_interval");
        AdaptSize {
            cache_size: capacity,
            max_iteration: options.int("max_iteration"),
            reconf_interval,
            next_reconf: reconf_interval,
            stat_size: 0,
            c: (1u64 << 15) as f64,
            interval: Table::default(),
            longterm: Table::default(),
            sizes: Vec::new(),
            times: Vec::new(),
            rng: SplitMix64(options.int("seed")),
            prepared: false,
            searching: false,
        }
    }
}

impl Gate for AdaptSize {
    /// `updateStats`.
    fn seen(&mut self, id: u32, size: u64) {
        if !std::mem::take(&mut self.prepared) {
            // Never raised: the reconfiguration runs to its end.
            let _ = self.prepare_with(&NEVER);
            self.prepared = false;
        }
        let (i, l) = (self.interval.index(id), self.longterm.index(id));
        if i.is_none() && l.is_none() {
            self.stat_size = self.stat_size.wrapping_add(size);
        } else {
            for (table, at) in [(&self.interval, i), (&self.longterm, l)] {
                if let Some(at) = at {
                    let old = table.rows[at].size;
                    if old != size {
                        self.stat_size = self.stat_size.wrapping_sub(old).wrapping_add(size);
                    }
                }
            }
        }
        let at = match i {
            Some(at) => at,
            None => self.interval.add(Seen { id, times: 0.0, size: 0 }),
        };
        let row = &mut self.interval.rows[at];
        row.times += 1.0;
        row.size = size;
    }

    fn admit(&mut self, _id: u32, size: u64) -> bool {
        let prob = (-(size as f64) / self.c).exp();
        let roll = (self.rng.next_u64() % MAX_MODULE) as f64 / MAX_MODULE as f64;
        roll < prob
    }

    fn light_accesses(&self) -> u64 {
        match (self.searching, self.prepared) {
            (true, _) => 0,
            (false, true) => self.next_reconf,
            (false, false) => self.next_reconf - 1,
        }
    }

    fn prepare(&mut self, cancel: &Cancel) -> Result<()> {
        self.prepare_with(cancel)
    }
}

impl AdaptSize {
    /// The value of `c` now (its logarithm is what the search moves).
    pub fn c(&self) -> f64 {
        self.c
    }

    /// The start of `updateStats` for the next access: count it down to the reconfiguration,
    /// and reconfigure when due (an interrupted search is taken up again first).
    fn prepare_with(&mut self, cancel: &Cancel) -> Result<()> {
        if !self.searching {
            self.reconfigure();
        }
        if self.searching {
            self.search(cancel)?;
            self.searching = false;
        }
        self.prepared = true;
        Ok(())
    }

    /// The count down, and the statistics folded when due (the search for `c` follows).
    fn reconfigure(&mut self) {
        self.next_reconf = self.next_reconf.wrapping_sub(1);
        if self.next_reconf > 0 {
            return;
        }
        if self.stat_size <= self.cache_size.wrapping_mul(3) {
            self.next_reconf += 1000;
            return;
        }
        self.next_reconf = self.reconf_interval;
        for r in &mut self.longterm.rows {
            r.times *= EWMA_DECAY;
        }
        for k in 0..self.interval.rows.len() {
            let r = self.interval.rows[k];
            match self.longterm.index(r.id) {
                None => {
                    self.longterm.add(r);
                }
                Some(at) => {
                    let l = &mut self.longterm.rows[at];
                    l.times += (1.0 - EWMA_DECAY) * r.times;
                    l.size = r.size;
                }
            }
        }
        self.interval.clear();
        self.times.clear();
        self.sizes.clear();
        let mut kept = 0;
        for k in 0..self.longterm.rows.len() {
            let r = self.longterm.rows[k];
            if r.times < 0.1 {
                self.stat_size = self.stat_size.wrapping_sub(r.size);
                self.longterm.at[r.id as usize] = NIL;
                continue;
            }
            self.times.push(r.times);
            self.sizes.push(r.size as f64);
            self.longterm.rows[kept] = r;
            self.longterm.at[r.id as usize] = kept as u32;
            kept += 1;
        }
        self.longterm.rows.truncate(kept);
        self.searching = true;
    }

    /// The coarse scan, then golden-section search for the log2(c) of the best modelled hit ratio.
    fn search(&mut self, cancel: &Cancel) -> Result<()> {
        let gss_v = 1.0 - GSS_R;
        let mut x0 = 0.0;
        let mut x1 = (self.cache_size as f64).log2();
        let mut x2;
        let mut x3 = x1;
        let mut best = 0.0;
        let mut i = 2i64;
        while (i as f64) < x3 {
            let rate = self.model_hit_rate(i as f64, cancel)?;
            if rate > best {
                best = rate;
                x1 = i as f64;
            }
            i += 4;
        }
        let mut h1 = best;
        let mut h2;
        if x3 - x1 > x1 - x0 {
            x2 = x1 + gss_v * (x3 - x1);
            h2 = self.model_hit_rate(x2, cancel)?;
        } else {
            x2 = x1;
            h2 = h1;
            x1 = x0 + gss_v * (x1 - x0);
            h1 = self.model_hit_rate(x1, cancel)?;
        }
        let mut iteration = 0;
        while iteration < self.max_iteration && f64::abs(x3 - x0) > TOL * (f64::abs(x1) + f64::abs(x2)) {
            iteration += 1;
            if h1.is_nan() || h2.is_nan() {
                break;
            }
            if h2 > h1 {
                x0 = x1;
                x1 = x2;
                x2 = GSS_R * x1 + gss_v * x3;
                h1 = h2;
                h2 = self.model_hit_rate(x2, cancel)?;
            } else {
                x3 = x2;
                x2 = x1;
                x1 = GSS_R * x2 + gss_v * x0;
                h2 = h1;
                h1 = self.model_hit_rate(x1, cancel)?;
            }
        }
        if h1.is_nan() || h2.is_nan() {
            // libCacheSim warns and keeps the old c.
        } else if h1 > h2 {
            self.c = 2f64.powf(x1);
        } else {
            self.c = 2f64.powf(x2);
        }
        Ok(())
    }

    /// `modelHitRate`: the modelled hit ratio (weighted by request rate) at c = 2^log2c.
    /// `cancel` is looked at before each pass over the objects.
    fn model_hit_rate(&self, log2c: f64, cancel: &Cancel) -> Result<f64> {
        cancel.check()?;
        let cache_size = self.cache_size as f64;
        let mut sum = 0.0;
        for (&t, &s) in self.times.iter().zip(&self.sizes) {
            sum += t * (-s / 2f64.powf(log2c)).exp() * s;
        }
        if sum <= 0.0 {
            return Ok(0.0);
        }
        let mut the_t = cache_size / sum;
        let probs: Vec<f64> = self.sizes.iter().map(|&s| (-s / 2f64.powf(log2c)).exp()).collect();
        for _ in 0..20 {
            cancel.check()?;
            let mut the_c = 0.0;
            if the_t > 1e70 {
                break;
            }
            for ((&t, &s), &p) in self.times.iter().zip(&self.sizes).zip(&probs) {
                let req_t = t * the_t;
                if req_t > 150.0 {
                    the_c += s;
                } else {
                    let exp_term = req_t.exp() - 1.0;
                    let adm = p * exp_term;
                    the_c += s * (adm / (1.0 + adm));
                }
            }
            the_t = cache_size * the_t / the_c;
        }
        let mut weighted = 0.0;
        for (&l, &p) in self.times.iter().zip(&probs) {
            let a = op1(the_t, l, p);
            let b = op2(the_t, l, p);
            // Clamped to [0, 1]; a NaN stays NaN, as in libCacheSim's if-else.
            let r = if a != 0.0 && b == 0.0 { 0.0 } else { a / b }.clamp(0.0, 1.0);
            weighted += l * r;
        }
        Ok(weighted)
    }
}

fn op1(t: f64, l: f64, p: f64) -> f64 {
    l * p * t * (840.0 + 60.0 * l * t + 20.0 * l * l * t * t + l * l * l * t * t * t)
}

fn op2(t: f64, l: f64, p: f64) -> f64 {
    840.0
        + 120.0 * l * (-3.0 + 7.0 * p) * t
        + 60.0 * l * l * (1.0 + p) * t * t
        + 4.0 * l * l * l * (-1.0 + 5.0 * p) * t * t * t
        + l * l * l * l * p * t * t * t * t
}
