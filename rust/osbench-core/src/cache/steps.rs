//! The loops over accesses, written once and monomorphised per policy (the table's dispatch
//! calls them with each policy's type): one per mode, unit or sized, with or without next uses,
//! hit flags and costs, each switch a constant so the unit path is `step` and an add. The same
//! loops run a policy behind an admission filter ([`run_gated`]): how one access is stepped is
//! a type ([`Plain`] or [`Gated`]), so the run without a filter compiles as if there were none.

use super::accesses::Accesses;
use super::admission::AnyFilter;
use super::memory::{STEPS_AHEAD, STEPS_NEAR};
use super::policy::Policy;
use super::NEVER;
use crate::error::Result;

/// How one access goes through a policy.
trait Step<P: Policy> {
    fn step<const SIZED: bool>(&mut self, p: &mut P, id: u32, size: u64, next_use: u64) -> bool;
    fn costed<const SIZED: bool>(&mut self, p: &mut P, id: u32, size: u64, cost: f64) -> Result<bool>;
}

/// Straight to the policy.
struct Plain;

impl<P: Policy> Step<P> for Plain {
    #[inline(always)]
    fn step<const SIZED: bool>(&mut self, p: &mut P, id: u32, size: u64, next_use: u64) -> bool {
        p.step::<SIZED>(id, size, next_use)
    }
    #[inline(always)]
    fn costed<const SIZED: bool>(&mut self, p: &mut P, id: u32, size: u64, cost: f64) -> Result<bool> {
        p.step_costed::<SIZED>(id, size, cost)
    }
}

/// Behind an admission filter ([`Policy::step_gated`]).
struct Gated<'a>(&'a mut AnyFilter);

impl<P: Policy> Step<P> for Gated<'_> {
    #[inline(always)]
    fn step<const SIZED: bool>(&mut self, p: &mut P, id: u32, size: u64, next_use: u64) -> bool {
        p.step_gated::<SIZED, _>(id, size, next_use, self.0)
    }
    #[inline(always)]
    fn costed<const SIZED: bool>(&mut self, p: &mut P, id: u32, size: u64, cost: f64) -> Result<bool> {
        p.step_costed_gated::<SIZED, _>(id, size, cost, self.0)
    }
}

/// Replay one run of checked accesses through `p` (`OFFLINE`: it reads next uses); `mask` is
/// empty or has one flag per access.
pub(super) fn run<P: Policy, const OFFLINE: bool>(p: &mut P, a: &Accesses<'_>, mask: &mut [bool]) -> Result<u64> {
    run_by::<P, OFFLINE, _>(p, a, mask, Plain)
}

/// [`run`] behind an admission filter.
pub(super) fn run_gated<P: Policy, const OFFLINE: bool>(
    p: &mut P,
    a: &Accesses<'_>,
    mask: &mut [bool],
    gate: &mut AnyFilter,
) -> Result<u64> {
    run_by::<P, OFFLINE, _>(p, a, mask, Gated(gate))
}

#[inline(always)]
fn run_by<P: Policy, const OFFLINE: bool, S: Step<P>>(
    p: &mut P,
    a: &Accesses<'_>,
    mask: &mut [bool],
    s: S,
) -> Result<u64> {
    let (ids, sizes, next) = (a.ids(), a.sizes().unwrap_or(&[]), a.next_use().unwrap_or(&[]));
    if let Some(costs) = a.costs() {
        return match a.sizes() {
            None => costed::<P, false, S>(p, ids, sizes, costs, mask, s),
            Some(_) => costed::<P, true, S>(p, ids, sizes, costs, mask, s),
        };
    }
    Ok(match (a.sizes().is_some(), mask.is_empty()) {
        (false, true) => steps::<P, false, OFFLINE, false, S>(p, ids, sizes, next, mask, s),
        (false, false) => steps::<P, false, OFFLINE, true, S>(p, ids, sizes, next, mask, s),
        (true, true) => steps::<P, true, OFFLINE, false, S>(p, ids, sizes, next, mask, s),
        (true, false) => steps::<P, true, OFFLINE, true, S>(p, ids, sizes, next, mask, s),
    })
}

/// The loop: each switch is a constant, so the unit path without flags is `step` and an add.
#[inline(always)]
fn steps<P: Policy, const SIZED: bool, const OFFLINE: bool, const MASK: bool, S: Step<P>>(
    p: &mut P,
    ids: &[u32],
    sizes: &[u64],
    next: &[u64],
    mask: &mut [bool],
    mut s: S,
) -> u64 {
    // Checked by `Accesses`; said again here so that the compiler drops the bounds checks.
    if (SIZED && sizes.len() < ids.len()) || (OFFLINE && next.len() < ids.len()) || (MASK && mask.len() < ids.len()) {
        return 0;
    }
    let mut hits = 0u64;
    let last = ids.len().saturating_sub(1);
    for (i, &id) in ids.iter().enumerate() {
        // Near the end the last id is asked for again: harmless, and no branch.
        p.prefetch(ids[(i + STEPS_AHEAD).min(last)]);
        p.prefetch_near(ids[(i + STEPS_NEAR).min(last)]);
        let size = if SIZED { sizes[i] } else { 1 };
        let next_use = if OFFLINE { next[i] } else { NEVER };
        let hit = s.step::<SIZED>(p, id, size, next_use);
        if MASK {
            mask[i] = hit;
        }
        hits += hit as u64;
    }
    hits
}

/// The loop with one cost per access (sizes: one per access when `SIZED`, else unit).
fn costed<P: Policy, const SIZED: bool, S: Step<P>>(
    p: &mut P,
    ids: &[u32],
    sizes: &[u64],
    costs: &[f64],
    mask: &mut [bool],
    mut s: S,
) -> Result<u64> {
    let mut hits = 0u64;
    let last = ids.len().saturating_sub(1);
    for (i, (&id, &cost)) in ids.iter().zip(costs).enumerate() {
        p.prefetch(ids[(i + STEPS_AHEAD).min(last)]);
        p.prefetch_near(ids[(i + STEPS_NEAR).min(last)]);
        let size = if SIZED { sizes[i] } else { 1 };
        let hit = s.costed::<SIZED>(p, id, size, cost)?;
        if let Some(flag) = mask.get_mut(i) {
            *flag = hit;
        }
        hits += hit as u64;
    }
    Ok(hits)
}

/// One online access of `p`: unit or sized (`size`), with a cost or not (size, cost and the
/// cache's mode checked by the caller).
pub(super) fn access<P: Policy>(p: &mut P, id: u32, size: Option<u64>, cost: Option<f64>) -> Result<bool> {
    access_by(p, id, size, cost, Plain)
}

/// [`access`] behind an admission filter.
pub(super) fn access_gated<P: Policy>(
    p: &mut P,
    id: u32,
    size: Option<u64>,
    cost: Option<f64>,
    gate: &mut AnyFilter,
) -> Result<bool> {
    access_by(p, id, size, cost, Gated(gate))
}

#[inline(always)]
fn access_by<P: Policy, S: Step<P>>(
    p: &mut P,
    id: u32,
    size: Option<u64>,
    cost: Option<f64>,
    mut s: S,
) -> Result<bool> {
    match (size, cost) {
        (None, None) => Ok(s.step::<false>(p, id, 1, NEVER)),
        (Some(size), None) => Ok(s.step::<true>(p, id, size, NEVER)),
        (None, Some(cost)) => s.costed::<false>(p, id, 1, cost),
        (Some(size), Some(cost)) => s.costed::<true>(p, id, size, cost),
    }
}
