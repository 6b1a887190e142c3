//! The one-hit-wonder filter: an object enters on its second miss, never on its first
//! (libCacheSim `cache/admission/bloomfilter.c`, `bloomfilter_admit`: despite the name an
//! exact table of the objects seen, counted on each admission check, that is on each miss).
//! On dense ids the exact table is one bit per id: no false positives, as libCacheSim's.

use super::Filter;
use crate::cache::params::Options;
use crate::cache::policy::{ensure, Gate};

pub struct Bloom {
    /// One bit per id: it has missed before.
    seen: Vec<u64>,
}

impl Filter for Bloom {
    fn new(_capacity: u64, n_ids: usize, _options: &Options) -> Self {
        Bloom { seen: vec![0; n_ids.div_ceil(64)] }
    }
}

impl Gate for Bloom {
    #[inline(always)]
    fn admit(&mut self, id: u32, _size: u64) -> bool {
        let word = id / 64;
        ensure(&mut self.seen, word, 0);
        let bit = 1u64 << (id % 64);
        let before = self.seen[word as usize] & bit != 0;
        self.seen[word as usize] |= bit;
        before
    }
}
