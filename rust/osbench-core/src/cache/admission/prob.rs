//! Probabilistic admission: each missed object enters with probability `prob`
//! (libCacheSim `cache/admission/prob.c`, `prob_admit`: a draw modulo 10^7 below
//! `(int)(prob * 10^7)`). The draws are splitmix64's from `seed`, one per miss; libCacheSim
//! draws from one generator per thread that every cache shares, so the two agree in
//! distribution, not miss for miss.

use super::{Filter, MAX_MODULE};
use crate::cache::params::Options;
use crate::cache::policy::Gate;
use crate::hash::SplitMix64;

pub struct Prob {
    /// `prob * 10^7`, truncated as C's conversion to int does.
    threshold: u64,
    rng: SplitMix64,
}

impl Filter for Prob {
    fn new(_capacity: u64, _n_ids: usize, options: &Options) -> Self {
        let threshold = (options.real("prob") * MAX_MODULE as f64) as u64;
        Prob { threshold, rng: SplitMix64(options.int("seed")) }
    }
}

impl Gate for Prob {
    #[inline(always)]
    fn admit(&mut self, _id: u32, _size: u64) -> bool {
        self.rng.next_u64() % MAX_MODULE < self.threshold
    }
}
