//! Strict preemptive priority with aging. A job's class is an integer, smaller = more
//! important; a waiting job's effective class is `class - aging * (t - arrival)`, so the
//! order between two jobs never changes and the heap key is `class + aging * arrival`
//! (computed once, in `Jobs::key`). Ties: arrival order, then job id.

use super::heap::{Heap, Key};
use super::{Jobs, Params};

pub type Priority = Heap<Class>;

pub struct Class;

impl Key for Class {
    const PREEMPTIVE: bool = true;
    fn new(_: &Params) -> Self {
        Class
    }
    fn key(&self, jobs: &Jobs, j: usize) -> f64 {
        jobs.key[j]
    }
}
