//! `kv-aware` (`kv_aware.py`): the most free KV blocks expected after admission (free at the
//! last report, less the blocks of the prompts routed since, less this prompt's), then the
//! fewest outstanding requests, then the lowest index.

use super::{Arrival, Router, View};

pub const NAME: &str = "kv-aware";

/// `kv_aware.py: expected_free`.
pub fn expected_free(v: &View, request: &Arrival<'_>) -> i64 {
    let need = request.prompt_len.div_ceil(v.block_size);
    v.free_blocks() as i64 - v.unreported_blocks as i64 - need as i64
}

#[derive(Debug)]
pub struct KvAware;

impl Router for KvAware {
    fn route(&mut self, request: &Arrival<'_>, replicas: &[View]) -> usize {
        let key = |k: usize| (-expected_free(&replicas[k], request), replicas[k].outstanding);
        let mut best = 0;
        for k in 1..replicas.len() {
            if key(k) < key(best) {
                best = k;
            }
        }
        best
    }
}
