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

/// The parameters a strategy may read, as users name them.
pub const PAGE_SIZE: &str = "page_size";
pub const BOUND: &str = "bound";

/// One row of the strategy table: a strategy as users see it, and how to build it.
#[derive(Clone, Copy)]
pub struct StrategyInfo {
    /// Lower case, as users name it.
    pub name: &'static str,
    /// The parameters it reads ([`PAGE_SIZE`], [`BOUND`]); it ignores the others.
    pub reads: &'static [&'static str],
    /// A fresh strategy: (capacity, number of requests, page size, bound).
    build: fn(u64, usize, u64, u64) -> Result<AnyStrategy>,
}

/// Every strategy, in the order users see them. The one list of strategies: the binding
/// exports it, and Python derives its names and the CLI's choices from it.
pub const STRATEGIES: [StrategyInfo; 5] = [
    StrategyInfo { name: "first", reads: &[], build: |c, n, _, _| Ok(contiguous(Fit::First, c, n)) },
    StrategyInfo { name: "best", reads: &[], build: |c, n, _, _| Ok(contiguous(Fit::Best, c, n)) },
    StrategyInfo { name: "worst", reads: &[], build: |c, n, _, _| Ok(contiguous(Fit::Worst, c, n)) },
    StrategyInfo { name: "paged", reads: &[PAGE_SIZE], build: |c, n, page, _| paged::build(c, n, page) },
    StrategyInfo { name: "reserve", reads: &[BOUND], build: |c, n, _, bound| reserve::build(c, n, bound) },
];

fn contiguous(fit: Fit, capacity: u64, n_requests: usize) -> AnyStrategy {
    AnyStrategy::Contiguous(Contiguous::new(fit, capacity, n_requests, None))
}

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
    /// Build a strategy by name. `page_size` is read by `paged`, `bound` by `reserve`.
    pub fn new(name: &str, capacity: u64, n_requests: usize, page_size: u64, bound: u64) -> Result<AnyStrategy> {
        if capacity == 0 {
            return Err(invalid("capacity", capacity, "a positive number of units"));
        }
        let Some(info) = STRATEGIES.iter().find(|s| s.name == name) else {
            let names: Vec<&str> = STRATEGIES.iter().map(|s| s.name).collect();
            return Err(invalid("strategy", format!("{name:?}"), format!("one of {}", names.join(", "))));
        };
        (info.build)(capacity, n_requests, page_size, bound)
    }
}

#[cfg(test)]
mod tests;
