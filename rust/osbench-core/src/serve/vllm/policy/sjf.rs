//! `sjf`: shortest (predicted) job first, on the predicted output length (lecture section
//! 2.3); vLLM does not have it. Rank: predicted output length, then arrival (then index).
//! It replaces two of vLLM's rules: the waiting queue is a heap by that key (a preempted
//! request goes back in by it, not to the front), and a full pool preempts the running request
//! of the largest key, index included (not the last running one):
//! with the index no two requests tie for the victim, so tied requests cannot preempt one
//! another forever as they can under vLLM's `priority`. Running requests
//! keep admission order; everything else is vLLM's loop.

use crate::serve::vllm::queue::Rank;
use crate::serve::vllm::request::Request;

#[inline]
pub fn rank(r: &Request) -> Rank {
    Rank { aged: 0.0, major: r.predicted as i64, arrival: r.arrival }
}
