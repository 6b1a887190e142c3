//! Size admission: an object enters only if its size is strictly below a threshold
//! (libCacheSim `cache/admission/size.c`, `size_admit`: `obj_size < size_threshold`). In unit
//! mode every size is 1, so a threshold of 1 admits nothing and any larger one everything.

use super::Filter;
use crate::cache::params::Options;
use crate::cache::policy::Gate;

pub struct Size {
    threshold: u64,
}

impl Filter for Size {
    fn new(_capacity: u64, _n_ids: usize, options: &Options) -> Self {
        Size { threshold: options.int("size") }
    }
}

impl Gate for Size {
    #[inline(always)]
    fn admit(&mut self, _id: u32, size: u64) -> bool {
        size < self.threshold
    }
}
