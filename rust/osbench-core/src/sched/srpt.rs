//! Shortest remaining processing time, preemptive at every arrival. With predictions the
//! rank is predicted - attained (it may go negative). Ties: arrival order, then job id, so an
//! arrival with the same remaining time as the running job does not preempt it.

use super::heap::MinHeap;
use super::{Jobs, Policy};

pub struct Srpt {
    heap: MinHeap,
    use_predictions: bool,
}

impl Srpt {
    pub fn new(use_predictions: bool) -> Self {
        Srpt { heap: MinHeap::default(), use_predictions }
    }
}

impl Policy for Srpt {
    const PREEMPTIVE: bool = true;
    fn arrive(&mut self, jobs: &Jobs, j: u32, _: f64) {
        let ju = j as usize;
        let key = if self.use_predictions { jobs.predicted[ju] - jobs.attained[ju] } else { jobs.remaining[ju] };
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
