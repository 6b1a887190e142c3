//! Multi-level feedback queue (lecture 2.5, OSTEP chapter 8).
//!
//! Level 0 is the highest; the server runs the head of the highest non-empty level. New jobs
//! enter the tail of level 0 and preempt a job running at a lower level. At level i a job may
//! attain `quantum * 2^i` of service, then moves to the tail of level i + 1 with a fresh
//! allotment (with `levels` bounded, the last level sends it to its own tail). A job
//! preempted by a higher level keeps its place and the rest of its allotment. With `boost`,
//! at every multiple of the period all jobs move to level 0 (levels concatenated from the
//! highest, order kept) with fresh allotments.

use super::{Jobs, Params, Policy};
use std::collections::VecDeque;

pub struct Mlfq {
    queues: Vec<VecDeque<u32>>,
    level: Vec<u32>,
    left: Vec<f64>,
    count: usize,
    quantum: f64,
    /// 0 = unbounded.
    max_levels: u32,
    boost: f64,
    boosts: f64,
    next_boost: f64,
}

impl Mlfq {
    fn allotment(&self, level: u32) -> f64 {
        self.quantum * 2f64.powi(level as i32)
    }

    fn do_boost(&mut self, t: f64) {
        // Catch up with every boost time passed (an idle period may pass several).
        self.boosts = (self.boosts + 1.0).max((t / self.boost).floor() + 1.0);
        self.next_boost = self.boosts * self.boost;
        if self.next_boost <= t {
            // The period is below the resolution of time at t: no further boosts.
            self.next_boost = f64::INFINITY;
        }
        let mut everyone = VecDeque::with_capacity(self.count);
        for q in self.queues.iter_mut() {
            everyone.append(q);
        }
        for &j in everyone.iter() {
            self.level[j as usize] = 0;
            self.left[j as usize] = self.quantum;
        }
        self.queues.truncate(1);
        self.queues[0] = everyone;
    }
}

impl Policy for Mlfq {
    const PREEMPTIVE: bool = true;
    fn new(jobs: &Jobs, params: &Params) -> Self {
        let n = jobs.arrival.len();
        Mlfq {
            queues: vec![VecDeque::new()],
            level: vec![0; n],
            left: vec![0.0; n],
            count: 0,
            quantum: params.quantum,
            max_levels: params.levels,
            boost: params.boost,
            boosts: 1.0,
            next_boost: params.boost,
        }
    }
    fn arrive(&mut self, _: &Jobs, j: u32, _: f64) {
        self.level[j as usize] = 0;
        self.left[j as usize] = self.quantum;
        self.queues[0].push_back(j);
        self.count += 1;
    }
    fn is_empty(&self) -> bool {
        self.count == 0
    }
    fn pick(&mut self, _: &Jobs, t: f64) -> (u32, f64) {
        if t >= self.next_boost {
            self.do_boost(t);
        }
        for q in self.queues.iter_mut() {
            if let Some(j) = q.pop_front() {
                self.count -= 1;
                return (j, self.left[j as usize].min(self.next_boost - t));
            }
        }
        (u32::MAX, f64::INFINITY)
    }
    fn put_back(&mut self, _: &Jobs, j: u32, ran: f64, _: f64) {
        let ju = j as usize;
        self.left[ju] -= ran;
        self.count += 1;
        if self.left[ju] > 0.0 {
            let level = self.level[ju] as usize;
            self.queues[level].push_front(j);
            return;
        }
        let mut level = self.level[ju] + 1;
        if self.max_levels > 0 && level >= self.max_levels {
            level = self.max_levels - 1;
        }
        if level as usize == self.queues.len() {
            self.queues.push(VecDeque::new());
        }
        self.level[ju] = level;
        self.left[ju] = self.allotment(level);
        self.queues[level as usize].push_back(j);
    }
}
