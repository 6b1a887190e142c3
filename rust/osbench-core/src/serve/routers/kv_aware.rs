//! `kv-aware` (`kv_aware.py`): the most free KV blocks expected after admission (free at the
//! last report, less the blocks of the prompts routed since, less the requests the report shows
//! waiting at the mean prompt's blocks so far, less this prompt's), then the fewest outstanding
//! requests, then the lowest index.

use super::{Arrival, Router, View};

pub const NAME: &str = "kv-aware";

/// `kv_aware.py: expected_free`.
pub fn expected_free(v: &View, request: &Arrival<'_>, mean_blocks: u64) -> i64 {
    let need = request.prompt_len.div_ceil(v.block_size);
    v.free_blocks() as i64 - v.unreported_blocks as i64 - (v.num_waiting * mean_blocks) as i64 - need as i64
}

/// The prompts routed so far, for their mean.
#[derive(Debug, Default)]
pub struct KvAware {
    prompt_tokens: u64,
    routed: u64,
}

impl Router for KvAware {
    fn route(&mut self, request: &Arrival<'_>, replicas: &[View]) -> usize {
        self.prompt_tokens += request.prompt_len;
        self.routed += 1;
        let mean_blocks = self.prompt_tokens.div_ceil(self.routed * replicas[0].block_size);
        let key = |k: usize| (-expected_free(&replicas[k], request, mean_blocks), replicas[k].outstanding);
        let mut best = 0;
        for k in 1..replicas.len() {
            if key(k) < key(best) {
                best = k;
            }
        }
        best
    }
}
