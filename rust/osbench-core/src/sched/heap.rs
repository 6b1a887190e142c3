//! A min-heap of jobs on (key, rank): smallest key first, ties by arrival order then job id.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

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

#[derive(Debug, Default)]
pub struct MinHeap {
    heap: BinaryHeap<Entry>,
}

impl MinHeap {
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
