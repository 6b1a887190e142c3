//! The scheduling policy (`vllm/config/scheduler.py: SchedulerConfig.policy`,
//! `vllm/v1/core/sched/request_queue.py: SchedulingPolicy`): the order of the waiting queue,
//! where a preempted request goes back in it, and which running request a full pool preempts.
//! One file per policy, as `python/osbench/serve/vllm/policy/` has them: vLLM's [`fcfs`] and
//! [`priority`] (with aging), and [`sjf`], [`srpt`], [`mlfq`], which vLLM does not have. Each
//! runs through vLLM's loop otherwise unchanged; its documentation says which rules it replaces.

pub mod fcfs;
pub mod mlfq;
pub mod priority;
pub mod sjf;
pub mod srpt;

pub use mlfq::Mlfq;

use super::queue::{Rank, WaitingQueue};
use super::request::Request;
use crate::error::{invalid, Result};

/// The scheduling policies, by name, in the order of [`Policy::NAMES`].
pub const POLICIES: [&str; 5] = Policy::NAMES;

/// One scheduling policy, with its parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Policy {
    Fcfs,
    /// Priority a request gains per second of waiting (0: vLLM's `priority`).
    Priority {
        aging: f64,
    },
    Sjf,
    Srpt,
    Mlfq(Mlfq),
}

impl Policy {
    /// Every policy's name (`SchedulingPolicy`'s spelling for vLLM's two).
    pub const NAMES: [&'static str; 5] = ["fcfs", "priority", "sjf", "srpt", "mlfq"];

    /// The policy's name.
    pub const fn name(self) -> &'static str {
        match self {
            Policy::Fcfs => Self::NAMES[0],
            Policy::Priority { .. } => Self::NAMES[1],
            Policy::Sjf => Self::NAMES[2],
            Policy::Srpt => Self::NAMES[3],
            Policy::Mlfq(_) => Self::NAMES[4],
        }
    }

    /// The policy named `name`, with its parameters (the configuration's `aging` and
    /// `mlfq_*`), checked (naming the argument).
    pub fn new(name: &str, aging: f64, mlfq: Mlfq) -> Result<Policy> {
        if !(aging.is_finite() && aging >= 0.0) {
            return Err(invalid("aging", aging, "a finite number >= 0 (priority per second of waiting)"));
        }
        if !(1..=64).contains(&mlfq.levels) {
            return Err(invalid("mlfq_levels", mlfq.levels, "an integer from 1 to 64"));
        }
        for (name, value) in [("mlfq_quantum", mlfq.quantum), ("mlfq_growth", mlfq.growth)] {
            if !(1..=1 << 31).contains(&value) {
                return Err(invalid(name, value, "a positive integer up to 2**31"));
            }
        }
        if mlfq.boost > 1 << 62 {
            return Err(invalid("mlfq_boost", mlfq.boost, "an integer from 0 (no boost) to 2**62 steps"));
        }
        Ok(match name {
            "fcfs" => Policy::Fcfs,
            "priority" => Policy::Priority { aging },
            "sjf" => Policy::Sjf,
            "srpt" => Policy::Srpt,
            "mlfq" => Policy::Mlfq(mlfq),
            _ => return Err(invalid("policy", format!("{name:?}"), format!("one of {}", Self::NAMES.join(", ")))),
        })
    }

    /// The waiting queue of this policy (`request_queue.py: create_request_queue`): its
    /// `prepend_request` is how a preempted request is requeued.
    pub fn queue(self) -> WaitingQueue {
        WaitingQueue::new(self != Policy::Fcfs)
    }

    /// The request's rank: the waiting queue orders by (rank, index), the victim is the first
    /// running request of the largest rank (unused under `fcfs`).
    #[inline]
    pub fn rank(self, r: &Request) -> Rank {
        match self {
            Policy::Fcfs => Rank::default(),
            Policy::Priority { aging } => priority::rank(r, aging),
            Policy::Sjf => sjf::rank(r),
            Policy::Srpt => srpt::rank(r),
            Policy::Mlfq(m) => m.rank(r),
        }
    }

    /// The position in `running` (not empty) of the request to preempt when the pool is
    /// short: under `priority` the first running request of the largest rank (vLLM's
    /// `max(self.running, ...)`); under `sjf`, `srpt` and `mlfq` the one of the largest
    /// (rank, index), which no two requests tie on (`sjf.py: Sjf`).
    pub fn victim(self, running: &[u32], requests: &[Request]) -> usize {
        use std::cmp::Ordering::Greater;
        if self == Policy::Fcfs {
            return fcfs::victim(running);
        }
        let by_index = !matches!(self, Policy::Priority { .. });
        let rank = |pos: usize| self.rank(&requests[running[pos] as usize]);
        let mut best = 0;
        let mut best_rank = rank(0);
        for pos in 1..running.len() {
            let r = rank(pos);
            let order = r.cmp_rank(&best_rank);
            if order == Greater || (by_index && order.is_eq() && running[pos] > running[best]) {
                best = pos;
                best_rank = r;
            }
        }
        best
    }

    /// Whether step `step` (from 0) starts with `mlfq`'s boost.
    pub fn boost_due(self, step: u64) -> bool {
        matches!(self, Policy::Mlfq(m) if m.boost > 0 && step > 0 && step % m.boost == 0)
    }

    /// Steps from step `step` (from 0) until the next one that starts with a boost (u64::MAX
    /// when none will).
    pub fn steps_to_boost(self, step: u64) -> u64 {
        match self {
            Policy::Mlfq(m) if m.boost > 0 => {
                if step > 0 && step % m.boost == 0 {
                    0
                } else {
                    m.boost - step % m.boost
                }
            }
            _ => u64::MAX,
        }
    }
}
