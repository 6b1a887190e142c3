//! Shortest job first, non-preemptive: the smallest size (or predicted size) runs to
//! completion. Ties: arrival order, then job id.

use super::heap::MinHeap;
use super::{Jobs, Policy};

pub struct Sjf {
    heap: MinHeap,
    use_predictions: bool,
}

impl Sjf {
    pub fn new(use_predictions: bool) -> Self {
        Sjf { heap: MinHeap::default(), use_predictions }
    }
}

impl Policy for Sjf {
    const PREEMPTIVE: bool = false;
    fn arrive(&mut self, jobs: &Jobs, j: u32, _: f64) {
        let ju = j as usize;
        let key = if self.use_predictions { jobs.predicted[ju] } else { jobs.size[ju] };
        self.heap.push(key, jobs.rank[ju], j);
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
