//! The scheduling policy (`vllm/config/scheduler.py: SchedulerConfig.policy`,
//! `vllm/v1/core/sched/request_queue.py: SchedulingPolicy`): which running request a full
//! pool preempts, and how the waiting queue takes it back.

use super::queue::WaitingQueue;
use super::request::Request;
use crate::error::{invalid, Result};

/// One scheduling policy of vLLM's scheduler.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// First come first served: preempt the last running request; a preempted request goes
    /// back to the front of the waiting queue.
    Fcfs,
    /// By priority (smaller first), then arrival: preempt the running request of the largest
    /// `(priority, arrival)`, the first such in running order (`Scheduler.schedule`'s
    /// `max(self.running, key=...)`); a preempted request goes back in by its key.
    Priority,
}

impl Policy {
    /// Every policy, in the order of [`crate::serve::POLICIES`].
    pub const ALL: [Policy; 2] = [Policy::Fcfs, Policy::Priority];

    /// The policy's name, as `SchedulingPolicy` spells it.
    pub const fn name(self) -> &'static str {
        match self {
            Policy::Fcfs => "fcfs",
            Policy::Priority => "priority",
        }
    }

    /// The policy named `name`.
    pub fn from_name(name: &str) -> Result<Policy> {
        Policy::ALL.into_iter().find(|p| p.name() == name).ok_or_else(|| {
            let names: Vec<&str> = Policy::ALL.iter().map(|p| p.name()).collect();
            invalid("policy", format!("{name:?}"), format!("one of {}", names.join(", ")))
        })
    }

    /// The waiting queue of this policy (`request_queue.py: create_request_queue`): its
    /// `prepend_request` is how a preempted request is requeued.
    pub fn queue(self) -> WaitingQueue {
        WaitingQueue::new(self == Policy::Priority)
    }

    /// The position in `running` (not empty) of the request to preempt when the pool is
    /// short.
    pub fn victim(self, running: &[u32], requests: &[Request]) -> usize {
        match self {
            Policy::Fcfs => running.len().saturating_sub(1),
            Policy::Priority => {
                let key = |i: u32| {
                    let r = &requests[i as usize];
                    (r.priority, r.arrival)
                };
                let mut best = 0;
                for pos in 1..running.len() {
                    let (p, a) = key(running[pos]);
                    let (bp, ba) = key(running[best]);
                    if p > bp || (p == bp && a > ba) {
                        best = pos;
                    }
                }
                best
            }
        }
    }
}
