//! First come, first served: arrival order, never preempted.

use super::{Jobs, Params, Policy};
use std::collections::VecDeque;

pub struct Fcfs {
    queue: VecDeque<u32>,
}

impl Policy for Fcfs {
    const PREEMPTIVE: bool = false;
    fn new(_: &Jobs, _: &Params) -> Self {
        Fcfs { queue: VecDeque::new() }
    }
    fn arrive(&mut self, _: &Jobs, j: u32, _: f64) {
        self.queue.push_back(j);
    }
    fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }
    fn pick(&mut self, _: &Jobs, _: f64) -> (u32, f64) {
        (self.queue.pop_front().unwrap_or(u32::MAX), f64::INFINITY)
    }
    fn put_back(&mut self, _: &Jobs, j: u32, _: f64, _: f64) {
        self.queue.push_front(j);
    }
}
