//! `srpt`: shortest (predicted) remaining processing time (lecture sections 2.3 and 2.6);
//! vLLM does not have it. Rank: `max(predicted - generated, 0)` output tokens, then arrival
//! (then index). It replaces the same two vLLM rules as `sjf`: the waiting queue is a heap by
//! that key (a preempted request, which keeps its generated tokens, goes back in by it), and a
//! full pool preempts the running request of the largest key, index included.
//! A waiting request generates nothing, so its key holds while it waits.

use crate::serve::vllm::queue::Rank;
use crate::serve::vllm::request::Request;

#[inline]
pub fn rank(r: &Request) -> Rank {
    Rank { aged: 0.0, major: r.predicted.saturating_sub(r.num_output_tokens) as i64, arrival: r.arrival }
}
