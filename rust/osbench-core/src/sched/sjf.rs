//! Shortest job first, non-preemptive: the smallest size (or predicted size) runs to
//! completion. Ties: arrival order, then job id.

use super::heap::{Heap, Key};
use super::{Jobs, Params};

pub type Sjf = Heap<ShortestJob>;

pub struct ShortestJob {
    use_predictions: bool,
}

impl Key for ShortestJob {
    const PREEMPTIVE: bool = false;
    fn new(params: &Params) -> Self {
        ShortestJob { use_predictions: params.use_predictions }
    }
    fn key(&self, jobs: &Jobs, j: usize) -> f64 {
        if self.use_predictions {
            jobs.predicted[j]
        } else {
            jobs.size[j]
        }
    }
}
