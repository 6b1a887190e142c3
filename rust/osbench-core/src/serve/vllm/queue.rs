//! The waiting queue (`vllm/v1/core/sched/request_queue.py`): first come first served, or a
//! heap by priority.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};

/// One entry of the priority heap: `Request.__lt__`'s key, priority (smaller first), then
/// arrival, then index. Arrivals are finite; equal ones (0.0 and -0.0 too) fall to the index,
/// as Python's tuple comparison does.
#[derive(Debug, Clone, Copy)]
pub struct Urgency {
    priority: i64,
    arrival: f64,
    index: u32,
}

impl Ord for Urgency {
    fn cmp(&self, other: &Self) -> Ordering {
        // Reversed: BinaryHeap pops its largest entry; the most urgent must compare largest.
        other
            .priority
            .cmp(&self.priority)
            .then(other.arrival.partial_cmp(&self.arrival).unwrap_or(Ordering::Equal))
            .then(other.index.cmp(&self.index))
    }
}

impl PartialOrd for Urgency {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Urgency {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Urgency {}

#[derive(Debug, Clone)]
pub enum WaitingQueue {
    /// `FCFSRequestQueue`: arrival order; a preempted request goes back to the front.
    Fcfs(VecDeque<u32>),
    /// `PriorityRequestQueue`: a preempted request goes back in by its key.
    Priority(BinaryHeap<Urgency>),
}

impl WaitingQueue {
    pub fn new(priority: bool) -> Self {
        if priority {
            WaitingQueue::Priority(BinaryHeap::new())
        } else {
            WaitingQueue::Fcfs(VecDeque::new())
        }
    }

    pub fn len(&self) -> usize {
        match self {
            WaitingQueue::Fcfs(q) => q.len(),
            WaitingQueue::Priority(h) => h.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A new arrival.
    pub fn add_request(&mut self, index: u32, priority: i64, arrival: f64) {
        match self {
            WaitingQueue::Fcfs(q) => q.push_back(index),
            WaitingQueue::Priority(h) => h.push(Urgency { priority, arrival, index }),
        }
    }

    /// A preempted request, back to wait.
    pub fn prepend_request(&mut self, index: u32, priority: i64, arrival: f64) {
        match self {
            WaitingQueue::Fcfs(q) => q.push_front(index),
            WaitingQueue::Priority(h) => h.push(Urgency { priority, arrival, index }),
        }
    }

    pub fn peek_request(&self) -> Option<u32> {
        match self {
            WaitingQueue::Fcfs(q) => q.front().copied(),
            WaitingQueue::Priority(h) => h.peek().map(|u| u.index),
        }
    }

    pub fn pop_request(&mut self) -> Option<u32> {
        match self {
            WaitingQueue::Fcfs(q) => q.pop_front(),
            WaitingQueue::Priority(h) => h.pop().map(|u| u.index),
        }
    }

    /// The waiting requests in the order they will leave (`livelock.rs`).
    pub fn write_state(&self, out: &mut Vec<u64>) {
        match self {
            WaitingQueue::Fcfs(q) => out.extend(q.iter().map(|&i| u64::from(i))),
            WaitingQueue::Priority(h) => {
                out.extend(h.clone().into_sorted_vec().iter().rev().map(|u| u64::from(u.index)));
            }
        }
    }

    /// The waiting requests, in no particular order.
    pub fn indices(&self) -> Vec<u32> {
        match self {
            WaitingQueue::Fcfs(q) => q.iter().copied().collect(),
            WaitingQueue::Priority(h) => h.iter().map(|u| u.index).collect(),
        }
    }
}
