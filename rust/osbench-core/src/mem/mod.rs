//! Virtual memory and paging (lecture section 3): address translation and block tables,
//! and an event-driven simulator of memory allocation with one file per strategy.
//!
//! Strategies (behind the [`Strategy`] trait):
//! - `first`, `best`, `worst`: contiguous blocks from a free list with coalescing
//!   (`freelist.rs`; the choice rule in `first.rs`, `best.rs`, `worst.rs`);
//! - `paged`: fixed-size pages allocated on demand (`paged.rs`);
//! - `reserve`: contiguous, reserving an upper bound (`reserve.rs`).

mod best;
mod first;
pub mod freelist;
mod paged;
mod queue;
mod reserve;
pub mod sim;
pub mod translate;
mod worst;

pub use freelist::{Contiguous, Fit, FreeList};
pub use paged::Paged;

use crate::error::{invalid, Result};

/// The strategy names, in the order users see them.
pub const STRATEGIES: [&str; 5] = ["first", "best", "worst", "paged", "reserve"];

/// An allocator as the simulator sees it. Sizes are in units (bytes, tokens...).
pub trait Strategy: Send {
    /// Place request `id`, which holds `initial` units now and will hold `final_size` when it
    /// leaves (only the contiguous fits use it). Returns the units allocated, None to refuse.
    fn admit(&mut self, id: usize, initial: u64, final_size: u64) -> Option<u64>;
    /// Request `id` now holds `new_size` units: returns the extra units allocated (often 0),
    /// None if it cannot grow.
    fn grow(&mut self, id: usize, new_size: u64) -> Option<u64>;
    /// Free everything request `id` holds; returns the units freed.
    fn release(&mut self, id: usize) -> u64;
    /// The largest request that could be placed now.
    fn largest_free(&self) -> u64;
    /// Units allocated now.
    fn allocated(&self) -> u64;
    /// Check the strategy's invariants (used by tests); a description of the first violation.
    fn check(&self) -> std::result::Result<(), String> {
        Ok(())
    }
}

/// Any strategy, by value, so the simulation loop is monomorphised per strategy.
pub enum AnyStrategy {
    Contiguous(Contiguous),
    Paged(Paged),
}

impl AnyStrategy {
    /// Build a strategy by name. `page_size` is used by `paged`, `bound` by `reserve`.
    pub fn new(name: &str, capacity: u64, n_requests: usize, page_size: u64, bound: u64) -> Result<AnyStrategy> {
        if capacity == 0 {
            return Err(invalid("capacity", capacity, "a positive number of units"));
        }
        Ok(match name {
            "first" => AnyStrategy::Contiguous(Contiguous::new(Fit::First, capacity, n_requests, None)),
            "best" => AnyStrategy::Contiguous(Contiguous::new(Fit::Best, capacity, n_requests, None)),
            "worst" => AnyStrategy::Contiguous(Contiguous::new(Fit::Worst, capacity, n_requests, None)),
            "paged" => {
                if page_size == 0 || page_size > capacity {
                    return Err(invalid(
                        "page_size",
                        page_size,
                        format!("a positive number of units up to capacity={capacity}"),
                    ));
                }
                AnyStrategy::Paged(Paged::new(capacity, n_requests, page_size))
            }
            "reserve" => {
                if bound == 0 {
                    return Err(invalid("bound", bound, "a positive number of units"));
                }
                AnyStrategy::Contiguous(reserve::new(capacity, n_requests, bound))
            }
            other => {
                return Err(invalid("strategy", format!("{other:?}"), format!("one of {}", STRATEGIES.join(", "))))
            }
        })
    }
}

#[cfg(test)]
mod tests;
