//! Round robin: a FIFO queue, each turn runs at most `quantum`; an unfinished job goes to
//! the tail, behind every job that arrived up to and including that instant.

use super::{Jobs, Params, Policy};
use std::collections::VecDeque;

pub struct Rr {
    queue: VecDeque<u32>,
    quantum: f64,
}

impl Policy for Rr {
    const PREEMPTIVE: bool = false;
    fn new(_: &Jobs, params: &Params) -> Self {
        Rr { queue: VecDeque::new(), quantum: params.quantum }
    }
    fn arrive(&mut self, _: &Jobs, j: u32, _: f64) {
        self.queue.push_back(j);
    }
    fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }
    fn pick(&mut self, _: &Jobs, _: f64) -> (u32, f64) {
        (self.queue.pop_front().unwrap_or(u32::MAX), self.quantum)
    }
    fn put_back(&mut self, _: &Jobs, j: u32, _: f64, _: f64) {
        self.queue.push_back(j);
    }
}
