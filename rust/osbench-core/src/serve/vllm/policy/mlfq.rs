//! `mlfq`: a multi-level feedback queue on attained service in tokens (lecture section 2.4;
//! Autellix's PLAS for single requests); vLLM does not have it. Level `k` holds
//! `quantum * growth^k` tokens of attained service (output tokens since the last boost), after
//! which the request is demoted; the last level keeps it. Rank: level, then arrival (then
//! index). It replaces the same two vLLM rules as `sjf` (the heap's key and the victim's).
//! The boost: at the start of every step whose number (from 0) is a positive multiple of
//! `boost`, every request's service counts from zero again (0: never).

use crate::serve::vllm::queue::Rank;
use crate::serve::vllm::request::Request;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mlfq {
    pub levels: u64,
    pub quantum: u64,
    pub growth: u64,
    pub boost: u64,
}

impl Mlfq {
    /// The level of a request with `attained` tokens of service (`mlfq.py: Mlfq.level`; the
    /// bounds saturate where Python's grow, which changes no comparison with a token count).
    pub fn level(&self, attained: u64) -> u64 {
        let (mut bound, mut quantum) = (0u64, self.quantum);
        for k in 0..self.levels - 1 {
            bound = bound.saturating_add(quantum);
            if attained < bound {
                return k;
            }
            quantum = quantum.saturating_mul(self.growth);
        }
        self.levels - 1
    }

    #[inline]
    pub fn rank(&self, r: &Request) -> Rank {
        Rank { aged: 0.0, major: self.level(r.num_output_tokens - r.service_base) as i64, arrival: r.arrival }
    }
}
