//! `least-tokens` (`least_tokens.py`): the fewest outstanding tokens (prompt plus output),
//! the lowest index on ties.

use super::{least, Arrival, Router, View};

pub const NAME: &str = "least-tokens";

#[derive(Debug)]
pub struct LeastTokens;

impl Router for LeastTokens {
    fn route(&mut self, _: &Arrival<'_>, replicas: &[View]) -> usize {
        least(replicas, |v| v.tokens)
    }
}
