//! Size-probabilistic admission: a missed object of `size` enters with probability
//! `exp(-exponent * size)`, so large objects rarely do (libCacheSim
//! `cache/admission/sizeProbabilistic.c`, `size_probabilistic_admit`: a draw modulo 10^7,
//! divided by 10^7, below that probability). The draws are splitmix64's from `seed`, one per
//! miss: equal to libCacheSim in distribution (see `prob.rs`).

use super::{Filter, MAX_MODULE};
use crate::cache::params::Options;
use crate::cache::policy::Gate;
use crate::hash::SplitMix64;

pub struct SizeProb {
    exponent: f64,
    rng: SplitMix64,
}

impl Filter for SizeProb {
    fn new(_capacity: u64, _n_ids: usize, options: &Options) -> Self {
        SizeProb { exponent: options.real("exponent"), rng: SplitMix64(options.int("seed")) }
    }
}

impl Gate for SizeProb {
    #[inline(always)]
    fn admit(&mut self, _id: u32, size: u64) -> bool {
        let prob = (-self.exponent * size as f64).exp();
        let roll = (self.rng.next_u64() % MAX_MODULE) as f64 / MAX_MODULE as f64;
        roll < prob
    }
}
