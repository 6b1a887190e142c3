//! `round-robin` (`round_robin.py`): request `i` to replica `i mod N`.

use super::{Arrival, Router, View};

pub const NAME: &str = "round-robin";

#[derive(Debug, Default)]
pub struct RoundRobin {
    routed: usize,
}

impl Router for RoundRobin {
    fn route(&mut self, _: &Arrival<'_>, replicas: &[View]) -> usize {
        let k = self.routed % replicas.len();
        self.routed += 1;
        k
    }
}
