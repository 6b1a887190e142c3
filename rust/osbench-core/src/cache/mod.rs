//! Cache replacement: one file per policy behind the [`Policy`] trait, the replay loop,
//! the key-to-dense-id mapping, and hit-ratio curves.
//!
//! Every policy works on dense ids (`0..n_ids`) so its per-key state lives in plain arrays
//! indexed by id: no hashing in the per-access loop. Objects have unit size and capacity
//! counts objects, unless each access gives its object's size ([`Policy::access_sized`]:
//! capacity then counts bytes); GDSF also takes one cost per access. Every miss inserts the
//! object (demand paging), if it fits.

mod arc;
mod clock;
pub mod curve;
mod fifo;
mod gdsf;
pub mod keys;
mod lfu;
mod list;
mod lru;
mod marks;
mod opt;
mod s3fifo;
pub mod shards;
mod sieve;
pub mod stream;
mod twoq;

pub use arc::Arc;
pub use clock::Clock;
pub use fifo::Fifo;
pub use gdsf::{Gdsf, GDSF_SCALE};
pub use lfu::Lfu;
pub use lru::Lru;
pub use opt::Opt;
pub use s3fifo::S3Fifo;
pub use sieve::Sieve;
pub use twoq::TwoQ;

use crate::error::{invalid, Result};

/// The policies that take per-access object sizes (capacity then counts bytes).
pub const SIZED_POLICIES: [&str; 10] = ["fifo", "lru", "lfu", "clock", "arc", "opt", "sieve", "s3fifo", "twoq", "gdsf"];

/// The policies that take per-access costs (the value of keeping an object).
pub const COSTED_POLICIES: [&str; 1] = ["gdsf"];

/// Sentinel for "no id" in the intrusive lists, and "never used again" in next-use arrays.
pub const NIL: u32 = u32::MAX;
pub const NEVER: u64 = u64::MAX;

/// The policy names, lower case, in the order users see them.
pub const POLICIES: [&str; 10] = ["fifo", "lru", "lfu", "clock", "arc", "opt", "sieve", "s3fifo", "twoq", "gdsf"];

/// The smallest capacity a policy accepts: S3-FIFO's small queue (10%) and 2Q's Ain
/// (25%) must hold at least one object.
pub fn min_capacity(name: &str) -> u64 {
    match name {
        "s3fifo" => 10,
        "twoq" => 4,
        _ => 1,
    }
}

/// A replacement policy over dense ids.
pub trait Policy: Send {
    /// Access `id`; returns true on a hit. A miss inserts `id`, evicting if full.
    /// `next_use` is the time of the next access to `id` ([`NEVER`] if none); only offline
    /// policies ([`Policy::needs_future`]) read it.
    fn access(&mut self, id: u32, next_use: u64) -> bool;
    /// Whether `id` is cached now.
    fn contains(&self, id: u32) -> bool;
    /// Number of cached objects.
    fn len(&self) -> usize;
    /// Bytes held by the cached objects, in sized mode ([`Policy::access_sized`]); unit-size
    /// accesses do not count bytes (there every object counts 1: see [`Policy::len`]).
    fn used_bytes(&self) -> u64 {
        self.len() as u64
    }
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// True for offline policies that need each access's next-use time.
    fn needs_future(&self) -> bool {
        false
    }

    /// Access `id`, an object of `size` bytes, in a cache whose capacity counts bytes, as
    /// libCacheSim does: an object larger than the capacity is never admitted; a miss evicts
    /// until the newcomer fits; a hit keeps the size the object entered with. Only policies
    /// in [`SIZED_POLICIES`] implement it ([`Policy::supports_sizes`]); one cache instance
    /// uses either this or [`Policy::access`], never both.
    fn access_sized(&mut self, id: u32, _size: u64, next_use: u64) -> bool {
        self.access(id, next_use)
    }
    fn supports_sizes(&self) -> bool {
        false
    }

    /// [`Policy::replay_chunk`] with one size per access.
    fn replay_chunk_sized(&mut self, ids: &[u32], sizes: &[u64], next_use: &[u64], mask: &mut [bool]) -> u64
    where
        Self: Sized,
    {
        let mut hits = 0u64;
        let future = self.needs_future();
        for (i, (&id, &size)) in ids.iter().zip(sizes).enumerate() {
            let next = if future { next_use[i] } else { NEVER };
            let hit = self.access_sized(id, size, next);
            hits += hit as u64;
            if !mask.is_empty() {
                mask[i] = hit;
            }
        }
        hits
    }

    /// Replay a run of accesses; returns the number of hits. `next_use[i]` belongs to
    /// `ids[i]` (pass an empty slice for online policies); `mask`, if not empty, receives
    /// one hit flag per access. Written once here so each policy gets a monomorphised loop.
    fn replay_chunk(&mut self, ids: &[u32], next_use: &[u64], mask: &mut [bool]) -> u64
    where
        Self: Sized,
    {
        let mut hits = 0u64;
        // One loop per case, so the per-access path has no branches on options.
        match (self.needs_future(), mask.is_empty()) {
            (false, true) => ids.iter().for_each(|&id| hits += self.access(id, NEVER) as u64),
            (true, true) => ids.iter().zip(next_use).for_each(|(&id, &next)| hits += self.access(id, next) as u64),
            (future, false) => {
                for (i, (&id, flag)) in ids.iter().zip(mask.iter_mut()).enumerate() {
                    let hit = self.access(id, if future { next_use[i] } else { NEVER });
                    *flag = hit;
                    hits += hit as u64;
                }
            }
        }
        hits
    }
}

/// Options that some policies take.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    /// CLOCK: start a newly inserted page with its reference bit set (the textbook variant).
    pub bit_on_insert: bool,
}

/// Any policy, by value, so the replay loop is monomorphised per policy (one match per chunk).
pub enum AnyPolicy {
    Fifo(Fifo),
    Lru(Lru),
    Lfu(Lfu),
    Clock(Clock),
    Arc(Arc),
    Opt(Opt),
    Sieve(Sieve),
    S3Fifo(S3Fifo),
    TwoQ(TwoQ),
    Gdsf(Gdsf),
}

macro_rules! each_policy {
    ($self:expr, $p:ident => $body:expr) => {
        match $self {
            AnyPolicy::Fifo($p) => $body,
            AnyPolicy::Lru($p) => $body,
            AnyPolicy::Lfu($p) => $body,
            AnyPolicy::Clock($p) => $body,
            AnyPolicy::Arc($p) => $body,
            AnyPolicy::Opt($p) => $body,
            AnyPolicy::Sieve($p) => $body,
            AnyPolicy::S3Fifo($p) => $body,
            AnyPolicy::TwoQ($p) => $body,
            AnyPolicy::Gdsf($p) => $body,
        }
    };
}

impl AnyPolicy {
    /// Build a policy by name. `n_ids` sizes the per-id arrays (they grow if larger ids come).
    pub fn new(name: &str, capacity: u64, n_ids: usize, options: Options) -> Result<AnyPolicy> {
        if capacity == 0 {
            return Err(invalid("capacity", capacity, "a positive number of objects"));
        }
        // A cache never holds more objects than there are ids, nor more than memory allows.
        let cap = usize::try_from(capacity).unwrap_or(usize::MAX);
        Ok(match name {
            "fifo" => AnyPolicy::Fifo(Fifo::new(cap, n_ids)),
            "lru" => AnyPolicy::Lru(Lru::new(cap, n_ids)),
            "lfu" => AnyPolicy::Lfu(Lfu::new(cap, n_ids)),
            "clock" => AnyPolicy::Clock(Clock::new(cap, n_ids, options.bit_on_insert)),
            "arc" => AnyPolicy::Arc(Arc::new(cap, n_ids)),
            "opt" => AnyPolicy::Opt(Opt::new(cap, n_ids)),
            "sieve" => AnyPolicy::Sieve(Sieve::new(cap, n_ids)),
            "s3fifo" => AnyPolicy::S3Fifo(S3Fifo::new(cap, n_ids)?),
            "twoq" => AnyPolicy::TwoQ(TwoQ::new(cap, n_ids)?),
            "gdsf" => AnyPolicy::Gdsf(Gdsf::new(cap, n_ids)),
            other => return Err(invalid("policy", format!("{other:?}"), format!("one of {}", POLICIES.join(", ")))),
        })
    }

    pub fn access(&mut self, id: u32, next_use: u64) -> bool {
        each_policy!(self, p => p.access(id, next_use))
    }
    /// See [`Policy::access_sized`]; for the policies in [`SIZED_POLICIES`].
    pub fn access_sized(&mut self, id: u32, size: u64, next_use: u64) -> bool {
        each_policy!(self, p => p.access_sized(id, size, next_use))
    }
    /// Access with a cost (the policies in [`COSTED_POLICIES`]), `size` bytes (capacity in
    /// bytes) or unit size for `None`. Checks the policy and the cost.
    pub fn access_costed(&mut self, id: u32, size: Option<u64>, cost: f64) -> Result<bool> {
        check_cost(cost)?;
        match self {
            AnyPolicy::Gdsf(g) => Ok(g.access_costed(id, size, cost)),
            _ => Err(costs_refused()),
        }
    }
    pub fn takes_costs(&self) -> bool {
        matches!(self, AnyPolicy::Gdsf(_))
    }
    /// Bytes held in sized mode; see [`Policy::used_bytes`].
    pub fn used_bytes(&self) -> u64 {
        each_policy!(self, p => p.used_bytes())
    }
    pub fn contains(&self, id: u32) -> bool {
        each_policy!(self, p => p.contains(id))
    }
    pub fn len(&self) -> usize {
        each_policy!(self, p => p.len())
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    pub fn needs_future(&self) -> bool {
        each_policy!(self, p => p.needs_future())
    }
    pub fn supports_sizes(&self) -> bool {
        each_policy!(self, p => p.supports_sizes())
    }
    /// See [`Policy::replay_chunk_sized`]. Checks the policy and the slice lengths.
    pub fn replay_chunk_sized(
        &mut self,
        ids: &[u32],
        sizes: &[u64],
        next_use: &[u64],
        mask: &mut [bool],
    ) -> Result<u64> {
        if !self.supports_sizes() {
            return Err(invalid(
                "sizes",
                "given",
                format!("no sizes for this policy; sizes work with {}", SIZED_POLICIES.join(", ")),
            ));
        }
        if sizes.len() != ids.len() {
            return Err(invalid(
                "sizes",
                format!("{} entries", sizes.len()),
                format!("{} entries, one per access", ids.len()),
            ));
        }
        if self.needs_future() && next_use.len() != ids.len() {
            return Err(invalid(
                "next_use",
                format!("{} entries", next_use.len()),
                format!("{} entries, one per access", ids.len()),
            ));
        }
        if !mask.is_empty() && mask.len() != ids.len() {
            return Err(invalid(
                "mask",
                format!("{} entries", mask.len()),
                format!("{} entries, one per access", ids.len()),
            ));
        }
        Ok(each_policy!(self, p => p.replay_chunk_sized(ids, sizes, next_use, mask)))
    }

    /// Replay a run of accesses with one cost each (the policies in [`COSTED_POLICIES`]);
    /// `sizes` holds one size per access, or is empty for unit sizes. Checks the policy, the
    /// slice lengths and the costs (finite and positive).
    pub fn replay_chunk_costed(&mut self, ids: &[u32], sizes: &[u64], costs: &[f64], mask: &mut [bool]) -> Result<u64> {
        let AnyPolicy::Gdsf(g) = self else { return Err(costs_refused()) };
        if costs.len() != ids.len() {
            return Err(invalid(
                "costs",
                format!("{} entries", costs.len()),
                format!("{} entries, one per access", ids.len()),
            ));
        }
        if !sizes.is_empty() && sizes.len() != ids.len() {
            return Err(invalid(
                "sizes",
                format!("{} entries", sizes.len()),
                format!("{} entries, one per access", ids.len()),
            ));
        }
        if !mask.is_empty() && mask.len() != ids.len() {
            return Err(invalid(
                "mask",
                format!("{} entries", mask.len()),
                format!("{} entries, one per access", ids.len()),
            ));
        }
        costs.iter().try_for_each(|&c| check_cost(c))?;
        Ok(g.replay_chunk_costed(ids, sizes, costs, mask))
    }

    /// See [`Policy::replay_chunk`]. Checks the slice lengths instead of panicking.
    pub fn replay_chunk(&mut self, ids: &[u32], next_use: &[u64], mask: &mut [bool]) -> Result<u64> {
        if self.needs_future() && next_use.len() != ids.len() {
            return Err(invalid(
                "next_use",
                format!("{} entries", next_use.len()),
                format!("{} entries, one per access", ids.len()),
            ));
        }
        if !mask.is_empty() && mask.len() != ids.len() {
            return Err(invalid(
                "mask",
                format!("{} entries", mask.len()),
                format!("{} entries, one per access", ids.len()),
            ));
        }
        Ok(each_policy!(self, p => p.replay_chunk(ids, next_use, mask)))
    }
}

fn costs_refused() -> crate::error::Error {
    invalid("costs", "given", format!("costs are taken by {} only", COSTED_POLICIES.join(", ")))
}

/// A cost must be finite and positive: priorities are then non-negative, ordered by their bits.
fn check_cost(cost: f64) -> Result<()> {
    if cost.is_finite() && cost > 0.0 {
        Ok(())
    } else {
        Err(invalid("costs", cost, "finite positive numbers"))
    }
}

/// Grow a per-id array so that `id` is a valid index (online use meets new ids over time).
#[inline]
pub(crate) fn ensure<T: Clone>(v: &mut Vec<T>, id: u32, fill: T) {
    let need = id as usize + 1;
    if need > v.len() {
        let new_len = need.max(v.len() * 2).max(16);
        v.resize(new_len, fill);
    }
}

/// Replay a whole trace through a fresh policy. Convenience for tests and the curve module.
pub fn replay(name: &str, capacity: u64, ids: &[u32], n_ids: usize, next_use: &[u64], options: Options) -> Result<u64> {
    let mut policy = AnyPolicy::new(name, capacity, n_ids, options)?;
    policy.replay_chunk(ids, next_use, &mut [])
}

#[cfg(test)]
mod tests;
