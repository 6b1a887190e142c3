//! What every policy is: the [`Policy`] trait, the facts the table keeps about it
//! ([`PolicyInfo`]), the options some policies read, the helpers their files share, and the
//! macro that turns the table (`policies/mod.rs`) into the `AnyPolicy` enum and its dispatch.
//! Nothing here reads the table: looking it up is `lookup.rs`, one layer up.

use super::params::Param;
// Where every policy file takes it from, beside the trait.
pub use super::params::Options;
use crate::cancel::Cancel;
use crate::error::{invalid, Result};

/// A replacement policy over dense ids.
///
/// One cache instance runs in one mode: unit sizes (`SIZED = false`: every object counts 1 and
/// `size` is 1) or sized (`SIZED = true`: capacity counts bytes, as libCacheSim's does; an
/// object larger than the capacity is never admitted, a hit keeps the size the object entered
/// with). The mode is a compile-time switch, so the unit path reads no sizes.
pub trait Policy {
    /// A cache of `capacity` (objects, or bytes in sized mode), at least the table's minimum
    /// for the policy (checked before); `n_ids` sizes the per-id arrays (they grow if larger
    /// ids come); `options` holds the parameters the policy's row says it reads.
    fn new(capacity: usize, n_ids: usize, options: Options) -> Self
    where
        Self: Sized;

    /// Access `id`, an object of `size`; true on a hit. A miss inserts it, making room first.
    /// `next_use` is the time of the next access to `id` ([`NEVER`](super::NEVER) if none);
    /// only offline policies (their row says so) are given it.
    fn step<const SIZED: bool>(&mut self, id: u32, size: u64, next_use: u64) -> bool;

    /// [`Policy::step`] with the object's cost (finite and positive, checked before), for the
    /// policies whose row says they take costs; the others refuse (the entry points refuse
    /// costs for them before any access, naming the policies that take them).
    fn step_costed<const SIZED: bool>(&mut self, _id: u32, _size: u64, _cost: f64) -> Result<bool> {
        Err(invalid("costs", "given", "a policy that takes costs"))
    }

    /// [`Policy::step`] behind an admission filter (`gate`), in libCacheSim's order
    /// (`cache_get_base`): the gate sees every access; on a miss it is asked whether the object
    /// may enter (before the size check), and a rejected object is a miss left out of the cache.
    ///
    /// This default asks before the policy looks at the object, so a rejected miss changes
    /// nothing in the policy: exact for policies whose lookup of a missing object changes no
    /// state. A policy whose lookup does (a ghost hit that moves a target, as ARC's) overrides
    /// it to ask between its lookup and its insertion, as libCacheSim does.
    #[inline(always)]
    fn step_gated<const SIZED: bool, G: Gate>(&mut self, id: u32, size: u64, next_use: u64, gate: &mut G) -> bool {
        gate.seen(id, size);
        if self.contains(id) {
            return self.step::<SIZED>(id, size, next_use);
        }
        if gate.admit(id, size) {
            self.step::<SIZED>(id, size, next_use);
        }
        false
    }

    /// [`Policy::step_costed`] behind an admission filter, as [`Policy::step_gated`] does it.
    fn step_costed_gated<const SIZED: bool, G: Gate>(
        &mut self,
        id: u32,
        size: u64,
        cost: f64,
        gate: &mut G,
    ) -> Result<bool> {
        gate.seen(id, size);
        if self.contains(id) {
            return self.step_costed::<SIZED>(id, size, cost);
        }
        if gate.admit(id, size) {
            self.step_costed::<SIZED>(id, size, cost)?;
        }
        Ok(false)
    }

    /// The trace's own keys of ids `first..first + keys.len()`, for a policy that hashes them
    /// as libCacheSim hashes its object ids (W-TinyLFU's sketch); the others ignore them. Told
    /// before those ids are accessed; an id never told of is its own key.
    #[inline(always)]
    fn learn_keys(&mut self, _first: u32, _keys: &[u64]) {}

    /// Whether `id` is cached now.
    fn contains(&self, id: u32) -> bool;
    /// Number of cached objects.
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// What the cached objects hold against the capacity: bytes in sized mode, else objects.
    fn used(&self) -> u64;

    /// A hint that `id` will be accessed a few steps from now: ask for the cache line of its
    /// per-id state (an array far larger than the CPU's caches), so that the step does not wait
    /// for it. Changes nothing else.
    #[inline(always)]
    fn prefetch(&self, _id: u32) {}

    /// The second stage of [`Policy::prefetch`], [`STEPS_NEAR`](super::memory::STEPS_NEAR)
    /// steps ahead: `id`'s per-id line has arrived, so ask for the lines it leads to (the
    /// per-slot state). Changes nothing else.
    #[inline(always)]
    fn prefetch_near(&self, _id: u32) {}
}

/// An admission filter as a policy sees it (the filters are `cache/admission/`): libCacheSim's
/// `admissioner_t`, whose `update` sees every request and whose `admit` is asked on a miss.
pub trait Gate {
    /// Every access, hit or miss (AdaptSize keeps its statistics here); `size` is 1 in unit mode.
    #[inline(always)]
    fn seen(&mut self, _id: u32, _size: u64) {}
    /// A miss of `id`, an object of `size`: whether it may enter the cache.
    fn admit(&mut self, id: u32, size: u64) -> bool;
    /// How many accesses the gate takes next without long work of its own (AdaptSize's
    /// reconfiguration, which [`Gate::seen`] would do): a replay ends its chunk there and calls
    /// [`Gate::prepare`] before the next access, so that the work looks at the cancel.
    #[inline(always)]
    fn light_accesses(&self) -> u64 {
        u64::MAX
    }
    /// Do now, stopped by `cancel`, the long work the next access would do; the results are
    /// the same. Interrupted, the work is done again by the next call (or access).
    fn prepare(&mut self, _cancel: &Cancel) -> Result<()> {
        Ok(())
    }
}

/// The gate that admits every object: [`Policy::step`] for a policy that writes its step once,
/// as [`Policy::step_gated`] (compiled away).
pub struct AdmitAll;

impl Gate for AdmitAll {
    #[inline(always)]
    fn admit(&mut self, _id: u32, _size: u64) -> bool {
        true
    }
}

/// What the table says about a policy.
#[derive(Debug, Clone, Copy)]
pub struct PolicyInfo {
    /// The name users give, lower case: the policy's file name, each `_` written `-`
    /// (`belady_size.rs` is `belady-size`).
    pub name: &'static str,
    /// The smallest capacity that leaves every queue of the policy room for one object, given
    /// the policy's (resolved) parameters.
    pub min_capacity_for: fn(&Options) -> u64,
    /// Offline: it needs each access's next use, so it has no online form.
    pub offline: bool,
    /// It takes one cost per access (the price of bringing the object in).
    pub takes_costs: bool,
    /// The parameters it reads, with their defaults and what they accept.
    pub params: &'static [Param],
    /// The class of libCacheSim that agrees with it: miss for miss, or in distribution for a
    /// randomised policy (`PolicyInfo::randomised`); if there is one.
    pub libcachesim: Option<&'static str>,
    /// It hashes the trace's own keys, as libCacheSim hashes its object ids, so the entry points
    /// hand it the keys of the ids ([`Policy::learn_keys`]); a row says so with `hashes_keys: true`.
    pub hashes_keys: bool,
}

impl PolicyInfo {
    /// The names of the parameters it reads.
    pub fn reads(&self) -> impl Iterator<Item = &'static str> {
        self.params.iter().map(|p| p.name)
    }

    /// Its parameters at their defaults.
    pub fn defaults(&self) -> Options {
        let mut o = Options::new();
        for p in self.params {
            // A row declares fewer parameters than Options holds (the table's tests check it).
            let _ = o.set(p.name, p.default);
        }
        o
    }

    /// The smallest capacity at the default parameters.
    pub fn min_capacity(&self) -> u64 {
        (self.min_capacity_for)(&self.defaults())
    }

    /// A capacity (argument `name`) must be positive and at least the policy's minimum under
    /// `resolved`, its parameters.
    pub fn check_capacity(&self, name: &'static str, capacity: u64, resolved: &Options) -> Result<()> {
        if capacity == 0 {
            return Err(invalid(name, capacity, "a positive capacity"));
        }
        let least = (self.min_capacity_for)(resolved);
        if capacity < least {
            let with: Vec<String> = self
                .params
                .iter()
                .filter_map(|p| resolved.get(p.name).filter(|&v| v != p.default).map(|v| format!("{}={v}", p.name)))
                .collect();
            let with = if with.is_empty() { String::new() } else { format!(" with {}", with.join(", ")) };
            return Err(invalid(
                name,
                capacity,
                format!(
                    "at least {least} for {}{with} (a queue of the policy would hold no object below it)",
                    self.name
                ),
            ));
        }
        Ok(())
    }
}

/// A cost must be finite and positive: priorities are then non-negative, ordered by their bits.
#[inline]
pub(crate) fn is_cost(cost: f64) -> bool {
    // Finite and positive, without branches (NaN compares false both ways).
    (cost > 0.0) & (cost < f64::INFINITY)
}

/// [`is_cost`], or the error that says so.
pub(crate) fn check_cost(name: &'static str, cost: f64) -> Result<()> {
    if is_cost(cost) {
        Ok(())
    } else {
        Err(invalid(name, cost, "finite positive numbers"))
    }
}

/// Grow a per-id (or per-slot) array so that `i` is a valid index, doubling so that online use,
/// which meets new ids over time, stays amortised O(1).
#[inline]
pub(crate) fn ensure<T: Clone>(v: &mut Vec<T>, i: u32, fill: T) {
    let need = i as usize + 1;
    if need > v.len() {
        let new_len = need.max(v.len() * 2).max(16);
        v.resize(new_len, fill);
    }
}

/// `v[i] = value`, growing `v` as [`ensure`] does (new entries filled with `value`).
#[inline]
pub(crate) fn put<T: Clone>(v: &mut Vec<T>, i: u32, value: T) {
    ensure(v, i, value.clone());
    v[i as usize] = value;
}

/// The bytes of a policy's name from its file's name (`N` its length): each `_` becomes `-`,
/// so that a name of two words reads as users write it (`belady_size` is `belady-size`).
pub(crate) const fn dashed<const N: usize>(file: &str) -> [u8; N] {
    let bytes = file.as_bytes();
    let mut out = [0u8; N];
    let mut i = 0;
    while i < N {
        out[i] = if bytes[i] == b'_' { b'-' } else { bytes[i] };
        i += 1;
    }
    out
}

/// The name users give the policy of file `$file` ([`dashed`]), as a constant.
macro_rules! policy_name {
    ($file:ident) => {
        const {
            const BYTES: [u8; stringify!($file).len()] = $crate::cache::policy::dashed(stringify!($file));
            match ::core::str::from_utf8(&BYTES) {
                Ok(name) => name,
                Err(_) => panic!("a policy's file name is ASCII"),
            }
        }
    };
}
pub(super) use policy_name;

/// [`Policy::step`] of a policy that writes its step once, as [`Policy::step_gated`] (its lookup
/// changes state before the gate is asked, as a ghost hit does): the step behind [`AdmitAll`],
/// compiled away. One loop then serves both modes, and the unit path reads no sizes.
macro_rules! step_through_gate {
    () => {
        #[inline(always)]
        fn step<const SIZED: bool>(&mut self, id: u32, size: u64, next_use: u64) -> bool {
            self.step_gated::<SIZED, _>(id, size, next_use, &mut $crate::cache::policy::AdmitAll)
        }
    };
}
pub(super) use step_through_gate;

/// Methods of a [`Policy`] (or of an `Evict` order) that only ask the field which keeps the
/// policy's objects, by the same names: `delegate!(slots: prefetch, contains)` for a policy
/// that finds them by slot ([`Slots`](super::list::Slots)), and likewise for one that keeps them
/// in [`Placed`](super::list::Placed) queues or a [`Dense`](super::list::Dense) array; `len` and
/// `used` where the field counts them too.
macro_rules! delegate {
    ($field:ident: $($method:ident),+ $(,)?) => {
        $( $crate::cache::policy::delegate!(@ $field $method); )+
    };
    (@ $field:ident prefetch) => {
        #[inline(always)]
        fn prefetch(&self, id: u32) {
            self.$field.prefetch(id);
        }
    };
    (@ $field:ident prefetch_near) => {
        #[inline(always)]
        fn prefetch_near(&self, id: u32) {
            self.$field.prefetch_near(id);
        }
    };
    (@ $field:ident contains) => {
        fn contains(&self, id: u32) -> bool {
            self.$field.contains(id)
        }
    };
    (@ $field:ident len) => {
        fn len(&self) -> usize {
            self.$field.len()
        }
    };
    (@ $field:ident used) => {
        fn used(&self) -> u64 {
            self.$field.used()
        }
    };
}
pub(super) use delegate;

/// Turns the table (`policies/mod.rs`) into code: the policy modules, [`TABLE`], the
/// [`AnyPolicy`] enum and every method that dispatches on it. The enum holds each policy by
/// value, so each loop over accesses is monomorphised per policy (one `match` per run of
/// accesses, none per access), and a row's `offline` flag reaches the loop as a constant.
macro_rules! policy_table {
    ($(
        $file:ident => $ty:ty {
            min_capacity: $min:expr,
            offline: $offline:literal,
            takes_costs: $costs:literal,
            params: [$($param:expr),* $(,)?],
            libcachesim: $peer:expr
            $(, hashes_keys: $keys:literal)? $(,)?
        }
    ),* $(,)?) => {
        /// Every policy's row, in the order users see them.
        pub const TABLE: &[PolicyInfo] = &[$(
            PolicyInfo {
                name: $crate::cache::policy::policy_name!($file),
                min_capacity_for: $min,
                offline: $offline,
                takes_costs: $costs,
                params: &[$($param),*],
                libcachesim: $peer,
                hashes_keys: false $(|| $keys)?,
            },
        )*];

        /// Any policy, by value. Variants are named after the policies' files.
        #[allow(non_camel_case_types)]
        pub enum AnyPolicy {
            $( $file($ty), )*
        }

        impl AnyPolicy {
            /// Build a policy by name (a row's name; its capacity and options checked).
            pub(super) fn build(name: &str, capacity: usize, n_ids: usize, options: Options) -> Option<AnyPolicy> {
                $(
                    if name == $crate::cache::policy::policy_name!($file) {
                        return Some(AnyPolicy::$file(<$ty as Policy>::new(capacity, n_ids, options)));
                    }
                )*
                None
            }

            /// The policy's name.
            pub fn name(&self) -> &'static str {
                match self { $( AnyPolicy::$file(_) => $crate::cache::policy::policy_name!($file), )* }
            }

            /// Replay one run of checked accesses (the loops of `steps.rs`).
            pub(super) fn run(&mut self, part: &Accesses<'_>, mask: &mut [bool]) -> Result<u64> {
                match self { $( AnyPolicy::$file(p) => run::<_, $offline>(p, part, mask), )* }
            }

            /// One online access (an online policy; size and cost checked against the mode).
            pub(super) fn access(&mut self, id: u32, size: Option<u64>, cost: Option<f64>) -> Result<bool> {
                match self { $( AnyPolicy::$file(p) => access(p, id, size, cost), )* }
            }

            /// [`AnyPolicy::run`] behind an admission filter.
            pub(super) fn run_gated(&mut self, part: &Accesses<'_>, mask: &mut [bool], gate: &mut AnyFilter) -> Result<u64> {
                match self { $( AnyPolicy::$file(p) => run_gated::<_, $offline>(p, part, mask, gate), )* }
            }

            /// [`AnyPolicy::access`] behind an admission filter.
            pub(super) fn access_gated(
                &mut self,
                id: u32,
                size: Option<u64>,
                cost: Option<f64>,
                gate: &mut AnyFilter,
            ) -> Result<bool> {
                match self { $( AnyPolicy::$file(p) => access_gated(p, id, size, cost, gate), )* }
            }

            /// The trace's own keys of ids `first..` ([`Policy::learn_keys`]).
            pub fn learn_keys(&mut self, first: u32, keys: &[u64]) {
                match self { $( AnyPolicy::$file(p) => p.learn_keys(first, keys), )* }
            }

            /// Whether `id` is cached now.
            pub fn contains(&self, id: u32) -> bool {
                match self { $( AnyPolicy::$file(p) => p.contains(id), )* }
            }

            /// Number of cached objects.
            pub fn len(&self) -> usize {
                match self { $( AnyPolicy::$file(p) => p.len(), )* }
            }

            /// Bytes held in sized mode, else objects held.
            pub fn used(&self) -> u64 {
                match self { $( AnyPolicy::$file(p) => p.used(), )* }
            }
        }
    };
}
pub(super) use policy_table;
