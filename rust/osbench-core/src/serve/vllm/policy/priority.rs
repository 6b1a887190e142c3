//! `priority`: vLLM's priority scheduling (`request_queue.py: PriorityRequestQueue`,
//! `scheduler.py: Scheduler.schedule`'s `max(self.running, key=lambda r: (r.priority,
//! r.arrival_time))`), with optional aging (lecture section 2.7), which vLLM does not have.
//!
//! Waiting buys priority at `aging` per second: a request that reached the engine at `arrival`
//! stands at `priority - aging * (now - arrival)`. Every request ages at the same rate, so at
//! any `now` they order as `priority + aging * arrival`: the rank is that float, then vLLM's
//! key (priority, arrival). It replaces one vLLM rule, the key of the heap and of the victim;
//! `aging = 0` is vLLM's order exactly.

use crate::serve::vllm::queue::Rank;
use crate::serve::vllm::request::Request;

#[inline]
pub fn rank(r: &Request, aging: f64) -> Rank {
    Rank { aged: r.priority as f64 + aging * r.arrival, major: r.priority, arrival: r.arrival }
}
