//! The heap policies in one generic: the waiting jobs in a min-heap on (key, rank), smallest
//! key first, ties by arrival order then job id. A policy is its [`Key`] (`sjf.rs`, `srpt.rs`,
//! `priority.rs`); an interrupted job goes back in with its key computed afresh.

use super::{Jobs, Params, Policy};
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// What a heap policy orders the waiting jobs by (smaller runs first).
pub trait Key {
    /// True when an arrival is a decision point (the running job may be preempted).
    const PREEMPTIVE: bool;
    fn new(params: &Params) -> Self;
    /// The key of job `j` now (its size, remaining time, class...).
    fn key(&self, jobs: &Jobs, j: usize) -> f64;
}

/// A heap policy: the job with the smallest key runs (see [`Key`]).
pub struct Heap<K> {
    heap: JobHeap,
    key: K,
}

impl<K: Key> Policy for Heap<K> {
    const PREEMPTIVE: bool = K::PREEMPTIVE;
    fn new(_: &Jobs, params: &Params) -> Self {
        Heap { heap: JobHeap::default(), key: K::new(params) }
    }
    fn arrive(&mut self, jobs: &Jobs, j: u32, _: f64) {
        let ju = j as usize;
        self.heap.push(self.key.key(jobs, ju), jobs.rank[ju], j);
    }
    fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
    fn pick(&mut self, _: &Jobs, _: f64) -> (u32, f64) {
        (self.heap.pop().map_or(u32::MAX, |(_, j)| j), f64::INFINITY)
    }
    fn put_back(&mut self, jobs: &Jobs, j: u32, _: f64, t: f64) {
        self.arrive(jobs, j, t);
    }
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    key: f64,
    rank: u32,
    job: u32,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    /// Reversed, so that std's max-heap pops the smallest (key, rank). Keys are never NaN;
    /// -0.0 and 0.0 compare equal, as in Python.
    fn cmp(&self, other: &Self) -> Ordering {
        other.key.partial_cmp(&self.key).unwrap_or(Ordering::Equal).then(other.rank.cmp(&self.rank))
    }
}

/// A min-heap of jobs on (key, rank): smallest key first, ties by arrival order then job id.
#[derive(Debug, Default)]
pub struct JobHeap {
    heap: BinaryHeap<Entry>,
}

impl JobHeap {
    pub fn push(&mut self, key: f64, rank: u32, job: u32) {
        self.heap.push(Entry { key, rank, job });
    }
    pub fn pop(&mut self) -> Option<(f64, u32)> {
        self.heap.pop().map(|e| (e.key, e.job))
    }
    pub fn peek(&self) -> Option<(f64, u32)> {
        self.heap.peek().map(|e| (e.key, e.job))
    }
    pub fn len(&self) -> usize {
        self.heap.len()
    }
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}
