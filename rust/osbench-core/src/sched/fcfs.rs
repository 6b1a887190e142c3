//! First come, first served: arrival order, never preempted.

use super::{Jobs, Policy};
use std::collections::VecDeque;

#[derive(Default)]
pub struct Fcfs {
    queue: VecDeque<u32>,
}

impl Fcfs {
    pub fn new() -> Self {
        Fcfs::default()
    }
}

impl Policy for Fcfs {
    const PREEMPTIVE: bool = false;
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
