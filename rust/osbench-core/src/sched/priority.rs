//! Strict preemptive priority with aging. A job's class is an integer, smaller = more
//! important; a waiting job's effective class is `class - aging * (t - arrival)`, so the
//! order between two jobs never changes and the heap key is `class + aging * arrival`.
//! Ties: arrival order, then job id.

use super::heap::MinHeap;
use super::{Jobs, Policy};

#[derive(Default)]
pub struct Priority {
    heap: MinHeap,
}

impl Priority {
    pub fn new() -> Self {
        Priority::default()
    }
}

impl Policy for Priority {
    const PREEMPTIVE: bool = true;
    fn arrive(&mut self, jobs: &Jobs, j: u32, _: f64) {
        let ju = j as usize;
        self.heap.push(jobs.key[ju], jobs.rank[ju], j);
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
