//! `random` (`random.py`): request `i` to replica `mix64(mix64(seed) ^ i) mod N`.

use super::{Arrival, Router, View};
use crate::hash::splitmix64;

pub const NAME: &str = "random";

#[derive(Debug)]
pub struct Random {
    key: u64,
}

impl Random {
    pub fn new(seed: u64) -> Self {
        Random { key: splitmix64(seed) }
    }
}

impl Router for Random {
    fn route(&mut self, request: &Arrival<'_>, replicas: &[View]) -> usize {
        (splitmix64(self.key ^ request.index as u64) % replicas.len() as u64) as usize
    }
}
