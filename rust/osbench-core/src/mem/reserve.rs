//! Reserve: contiguous allocation of an upper bound, because the final size is unknown.
//!
//! A KV cache grows one token at a time and nobody knows how long the answer will be, so a
//! contiguous allocator must reserve the most a request may ever need (`bound` units, placed
//! first fit). A request whose final size exceeds the bound is refused at arrival (a server
//! caps the output length at the bound). Lecture section 3.3, the last row of demo 2.

use super::freelist::{Contiguous, Fit};
use super::AnyStrategy;
use crate::error::{invalid, Result};

/// The strategy's row in the table: `bound` units a request, placed first fit.
pub fn build(capacity: u64, n_requests: usize, bound: u64) -> Result<AnyStrategy> {
    if bound == 0 {
        return Err(invalid("bound", bound, "a positive number of units"));
    }
    Ok(AnyStrategy::Contiguous(Contiguous::new(Fit::First, capacity, n_requests, Some(bound))))
}
