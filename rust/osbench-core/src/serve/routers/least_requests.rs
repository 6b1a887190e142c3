//! `least-requests` (`least_requests.py`): the fewest outstanding requests, the lowest index
//! on ties.

use super::{least, Arrival, Router, View};

pub const NAME: &str = "least-requests";

#[derive(Debug)]
pub struct LeastRequests;

impl Router for LeastRequests {
    fn route(&mut self, _: &Arrival<'_>, replicas: &[View]) -> usize {
        least(replicas, |v| v.outstanding)
    }
}
