//! Cache replacement: one file per policy behind the [`Policy`] trait, listed in one table
//! (`policies/mod.rs`); one validated view of a trace's accesses ([`Accesses`]); one replay
//! ([`replay()`]) and one curve ([`curve()`]) entry point; the key-to-dense-id mapping; online
//! caches and streams; admission filters (`admission/`), a second axis every entry point takes.
//!
//! Every policy works on dense ids (`0..n_ids`) so its per-key state lives in plain arrays
//! indexed by id: no hashing in the per-access loop. Objects have unit size and capacity
//! counts objects, unless each access gives its object's size (capacity then counts bytes, as
//! in libCacheSim); the policies whose row says so also take one cost per access. Every miss
//! inserts the object (demand paging), if it fits.

mod accesses;
pub mod admission;
pub mod curve;
mod demand;
mod heap;
pub mod keys;
mod list;
mod lookup;
mod marks;
mod memory;
pub mod online;
mod params;
mod policies;
mod policy;
mod replay;
pub mod shards;
mod steps;
pub mod stream;

pub use accesses::Accesses;
pub use admission::{Admission, FilterInfo, FILTERS};
pub use curve::{curve, curve_admitted};
pub use lookup::{info, parameter};
pub use memory::{filled, filled_or_cancelled};
pub use params::{Accepts, Options, Param, Value, MAX_OPTIONS};
pub use policies::{gdsf::GDSF_SCALE, AnyPolicy, TABLE};
pub use policy::{Policy, PolicyInfo};
pub use replay::{replay, replay_admitted, replay_grid, replay_grid_admitted};

/// How many accesses run between two looks at the cancel flag (a millisecond or so of work).
pub const CHUNK: usize = 1 << 16;

/// Sentinel for "no id" in the intrusive lists.
pub const NIL: u32 = u32::MAX;
/// "Never used again" in next-use arrays.
pub const NEVER: u64 = u64::MAX;

#[cfg(test)]
mod golden;
#[cfg(test)]
mod tests;
