//! The waiting queue (`vllm/v1/core/sched/request_queue.py`): first come first served, or a
//! heap by the policy's rank (`PriorityRequestQueue` under `priority`).

use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};

/// A policy's order (`python/osbench/serve/vllm/queue.py: Rank`): `(aged, major, arrival)`,
/// compared in that order, smaller first. `priority` ranks by (priority + aging * arrival,
/// priority, arrival); `sjf`, `srpt` and `mlfq` leave `aged` at 0 and rank by (their key,
/// arrival). Every number is finite; equal floats (0.0 and -0.0 too) fall to the next field,
/// as Python's tuple comparison does.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Rank {
    pub aged: f64,
    pub major: i64,
    pub arrival: f64,
}

impl Rank {
    #[inline]
    pub fn cmp_rank(&self, other: &Rank) -> Ordering {
        self.aged
            .partial_cmp(&other.aged)
            .unwrap_or(Ordering::Equal)
            .then(self.major.cmp(&other.major))
            .then(self.arrival.partial_cmp(&other.arrival).unwrap_or(Ordering::Equal))
    }
}

/// One entry of the heap: a rank, then the index.
#[derive(Debug, Clone, Copy)]
pub struct Entry {
    rank: Rank,
    index: u32,
}

impl Ord for Entry {
    fn cmp(&self, other: &Self) -> Ordering {
        // Reversed: BinaryHeap pops its largest entry; the most urgent must compare largest.
        other.rank.cmp_rank(&self.rank).then(other.index.cmp(&self.index))
    }
}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Entry {}

#[derive(Debug, Clone)]
pub enum WaitingQueue {
    /// `FCFSRequestQueue`: arrival order; a preempted request goes back to the front.
    Fcfs(VecDeque<u32>),
    /// A heap by (rank, index); a preempted request goes back in by its key.
    Keyed(BinaryHeap<Entry>),
}

impl WaitingQueue {
    pub fn new(keyed: bool) -> Self {
        if keyed {
            WaitingQueue::Keyed(BinaryHeap::new())
        } else {
            WaitingQueue::Fcfs(VecDeque::new())
        }
    }

    pub fn len(&self) -> usize {
        match self {
            WaitingQueue::Fcfs(q) => q.len(),
            WaitingQueue::Keyed(h) => h.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A new arrival.
    pub fn add_request(&mut self, index: u32, rank: Rank) {
        match self {
            WaitingQueue::Fcfs(q) => q.push_back(index),
            WaitingQueue::Keyed(h) => h.push(Entry { rank, index }),
        }
    }

    /// A preempted request, back to wait.
    pub fn prepend_request(&mut self, index: u32, rank: Rank) {
        match self {
            WaitingQueue::Fcfs(q) => q.push_front(index),
            WaitingQueue::Keyed(h) => h.push(Entry { rank, index }),
        }
    }

    pub fn peek_request(&self) -> Option<u32> {
        match self {
            WaitingQueue::Fcfs(q) => q.front().copied(),
            WaitingQueue::Keyed(h) => h.peek().map(|u| u.index),
        }
    }

    pub fn pop_request(&mut self) -> Option<u32> {
        match self {
            WaitingQueue::Fcfs(q) => q.pop_front(),
            WaitingQueue::Keyed(h) => h.pop().map(|u| u.index),
        }
    }

    /// Rank every waiting request anew (after `mlfq`'s boost).
    pub fn rekey(&mut self, rank: impl Fn(u32) -> Rank) {
        if let WaitingQueue::Keyed(h) = self {
            let entries: Vec<Entry> =
                std::mem::take(h).into_iter().map(|e| Entry { rank: rank(e.index), index: e.index }).collect();
            *h = BinaryHeap::from(entries);
        }
    }

    /// The waiting requests in the order they will leave (`livelock.rs`).
    pub fn write_state(&self, out: &mut Vec<u64>) {
        match self {
            WaitingQueue::Fcfs(q) => out.extend(q.iter().map(|&i| u64::from(i))),
            WaitingQueue::Keyed(h) => {
                out.extend(h.clone().into_sorted_vec().iter().rev().map(|u| u64::from(u.index)));
            }
        }
    }

    /// The waiting requests, in no particular order.
    pub fn indices(&self) -> Vec<u32> {
        match self {
            WaitingQueue::Fcfs(q) => q.iter().copied().collect(),
            WaitingQueue::Keyed(h) => h.iter().map(|u| u.index).collect(),
        }
    }
}
