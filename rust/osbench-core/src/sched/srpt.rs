//! Shortest remaining processing time, preemptive at every arrival. With predictions the
//! rank is predicted - attained (it may go negative). Ties: arrival order, then job id, so an
//! arrival with the same remaining time as the running job does not preempt it.

use super::heap::{Heap, Key};
use super::{Jobs, Params};

pub type Srpt = Heap<ShortestRemaining>;

pub struct ShortestRemaining {
    use_predictions: bool,
}

impl Key for ShortestRemaining {
    const PREEMPTIVE: bool = true;
    fn new(params: &Params) -> Self {
        ShortestRemaining { use_predictions: params.use_predictions }
    }
    fn key(&self, jobs: &Jobs, j: usize) -> f64 {
        if self.use_predictions {
            jobs.predicted[j] - jobs.attained[j]
        } else {
            jobs.remaining[j]
        }
    }
}
