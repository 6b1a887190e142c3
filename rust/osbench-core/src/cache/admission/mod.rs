//! Admission filters: a second axis beside the policy. A filter decides, on each miss, whether
//! the object may enter the cache at all; a rejected object is a miss left out of the cache.
//! Every policy takes every filter, in libCacheSim's order (`cache_get_base`): the policy looks
//! the object up, the filter sees the access (AdaptSize's statistics), and on a miss the filter
//! is asked, before the size check, whether the object may enter (see [`Policy::step_gated`]).
//!
//! One file per filter beside this one, named as the filter; one row per filter in the table
//! below, from which come [`FILTERS`], the [`AnyFilter`] enum and its dispatch, and every list
//! and check in Python (`osbench.cache.ADMISSIONS`). A row gives the filter's parameters
//! ([`Param`], as a policy's row does), the libCacheSim admissioner it reproduces, and whether
//! it draws random numbers (then it reads a `seed`, and equals libCacheSim in distribution
//! rather than miss for miss: libCacheSim's generator is one per thread, shared by every cache).
//!
//! [`Policy::step_gated`]: super::policy::Policy::step_gated

use super::params::{Options, Param};
use super::policy::Gate;
use crate::error::{internal, invalid, Result};

pub mod adaptsize;
pub mod bloom;
pub mod prob;
pub mod size;
pub mod sizeprob;

/// A filter's constructor: the cache's capacity (bytes, or objects in unit mode, as
/// libCacheSim's `cache_size`), the number of ids to size per-id state for (it grows), and the
/// filter's parameters resolved by its row.
pub trait Filter: Gate {
    fn new(capacity: u64, n_ids: usize, options: &Options) -> Self;
}

/// What the table says about a filter.
#[derive(Debug, Clone, Copy)]
pub struct FilterInfo {
    /// The name users give, lower case: the filter's file name.
    pub name: &'static str,
    /// The parameters it reads, with their defaults and what they accept.
    pub params: &'static [Param],
    /// The class of libCacheSim's Python package (`libcachesim`) it reproduces.
    pub libcachesim: &'static str,
    /// It draws random numbers (seeded by its `seed` parameter): equal to libCacheSim in
    /// distribution, not miss for miss.
    pub seeded: bool,
    /// What it admits, in a line.
    pub doc: &'static str,
}

/// The seed of a filter that draws random numbers.
const SEED: Param = Param::int("seed", 0, 0, u64::MAX, "the seed of its random numbers (splitmix64)");

macro_rules! filter_table {
    ($(
        $file:ident => $ty:ty {
            params: [$($param:expr),* $(,)?],
            libcachesim: $peer:literal,
            seeded: $seeded:literal,
            doc: $doc:literal $(,)?
        }
    ),* $(,)?) => {
        /// Every filter's row, in the order users see them.
        pub const FILTERS: &[FilterInfo] = &[$(
            FilterInfo { name: stringify!($file), params: &[$($param),*], libcachesim: $peer, seeded: $seeded, doc: $doc },
        )*];

        /// Any filter, by value. Variants are named after the filters' files.
        #[allow(non_camel_case_types)]
        pub enum AnyFilter {
            $( $file($ty), )*
        }

        impl AnyFilter {
            fn build(name: &str, capacity: u64, n_ids: usize, options: &Options) -> Option<AnyFilter> {
                match name {
                    $( stringify!($file) => Some(AnyFilter::$file(<$ty as Filter>::new(capacity, n_ids, options))), )*
                    _ => None,
                }
            }
        }

        impl Gate for AnyFilter {
            #[inline(always)]
            fn seen(&mut self, id: u32, size: u64) {
                match self { $( AnyFilter::$file(f) => f.seen(id, size), )* }
            }
            #[inline(always)]
            fn admit(&mut self, id: u32, size: u64) -> bool {
                match self { $( AnyFilter::$file(f) => f.admit(id, size), )* }
            }
            #[inline(always)]
            fn light_accesses(&self) -> u64 {
                match self { $( AnyFilter::$file(f) => f.light_accesses(), )* }
            }
            fn prepare(&mut self, cancel: &crate::cancel::Cancel) -> Result<()> {
                match self { $( AnyFilter::$file(f) => f.prepare(cancel), )* }
            }
        }
    };
}

filter_table! {
    size => size::Size {
        params: [Param::int("size", i64::MAX as u64, 1, i64::MAX as u64,
            "admit objects smaller than this (bytes; libCacheSim's size=, its default admits all)")],
        libcachesim: "SizeAdmissioner", seeded: false,
        doc: "objects smaller than a size threshold",
    },
    prob => prob::Prob {
        params: [Param::positive("prob", 0.5, 1.0, "the probability of admitting a missed object"), SEED],
        libcachesim: "ProbAdmissioner", seeded: true,
        doc: "each missed object with a fixed probability",
    },
    sizeprob => sizeprob::SizeProb {
        params: [Param::positive("exponent", 1e-6, 1.0, "admit with probability exp(-exponent * size)"), SEED],
        libcachesim: "SizeProbabilisticAdmissioner", seeded: true,
        doc: "each missed object with probability exp(-exponent * size)",
    },
    bloom => bloom::Bloom {
        params: [],
        libcachesim: "BloomFilterAdmissioner", seeded: false,
        doc: "an object on its second miss, not its first (one-hit wonders stay out)",
    },
    adaptsize => adaptsize::AdaptSize {
        params: [
            Param::int("max_iteration", 15, 1, 1000, "golden-section steps per reconfiguration (libCacheSim's max-iteration)"),
            Param::int("reconf_interval", 30000, 1, u32::MAX as u64,
                "accesses between two reconfigurations of c (libCacheSim's reconf-interval)"),
            SEED,
        ],
        libcachesim: "AdaptSizeAdmissioner", seeded: true,
        doc: "each missed object with probability exp(-size / c), c tuned to the trace by a model of the hit ratio",
    },
}

/// The table's row for `name`, or an error listing the names.
pub fn filter(name: &str) -> Result<&'static FilterInfo> {
    FILTERS.iter().find(|f| f.name == name).ok_or_else(|| {
        let names: Vec<&str> = FILTERS.iter().map(|f| f.name).collect();
        invalid("admission", format!("{name:?}"), format!("one of {}", names.join(", ")))
    })
}

/// The declaration of the filter parameter `name` (the first row that declares it), or an
/// error listing every filter parameter.
pub fn parameter(name: &str) -> Result<&'static Param> {
    FILTERS.iter().flat_map(|f| f.params).find(|p| p.name == name).ok_or_else(|| {
        let mut all: Vec<&str> = FILTERS.iter().flat_map(|f| f.params.iter().map(|p| p.name)).collect();
        all.sort_unstable();
        all.dedup();
        invalid(
            "admission parameter",
            format!("{name:?}"),
            format!("one of the filters' parameters: {}", all.join(", ")),
        )
    })
}

impl FilterInfo {
    /// The filter's parameters: those `given` (each one it reads and accepts), the others at
    /// their defaults.
    pub fn resolve(&self, given: &Options) -> Result<Options> {
        let mut resolved = Options::new();
        for p in self.params {
            resolved.set(p.name, p.default)?;
        }
        for (name, value) in given.iter() {
            let Some(param) = self.params.iter().find(|p| p.name == name) else {
                let reads: Vec<&str> = self.params.iter().map(|p| p.name).collect();
                let reads = if reads.is_empty() { "none".to_string() } else { reads.join(", ") };
                return Err(invalid(name, value, format!("a parameter of admission {} (it reads {reads})", self.name)));
            };
            let Some(value) = param.accepts.check(value) else {
                return Err(invalid(name, value, format!("{} for admission {}", param.accepts.describe(), self.name)));
            };
            resolved.set(param.name, value)?;
        }
        Ok(resolved)
    }
}

/// A filter chosen and its parameters checked: what every entry point that takes a policy
/// also takes. Each cache builds its own fresh filter from it ([`Admission::build`]), as
/// libCacheSim clones the admissioner for each cache.
#[derive(Debug, Clone, Copy)]
pub struct Admission {
    pub info: &'static FilterInfo,
    /// Every parameter the filter reads (given, or at its default).
    pub options: Options,
}

impl Admission {
    /// The filter `name` with the parameters `given` (checked against its row).
    pub fn new(name: &str, given: &Options) -> Result<Admission> {
        let info = filter(name)?;
        Ok(Admission { info, options: info.resolve(given)? })
    }

    /// A fresh filter for a cache of `capacity` over `n_ids` ids.
    pub fn build(&self, capacity: u64, n_ids: usize) -> Result<AnyFilter> {
        AnyFilter::build(self.info.name, capacity, n_ids, &self.options)
            .ok_or_else(|| internal(format!("filter {:?} is in the table but has no variant", self.info.name)))
    }
}

/// libCacheSim's draws: `next_rand() % MAX_MODULE`, here from splitmix64.
pub(crate) const MAX_MODULE: u64 = 10_000_000;

#[cfg(test)]
mod tests;
