//! The loops over accesses, written once and monomorphised per policy (the table's dispatch
//! calls them with each policy's type): one per mode, unit or sized, with or without next uses,
//! hit flags and costs, each switch a constant so the unit path is `step` and an add.

use super::accesses::Accesses;
use super::admission::AnyFilter;
use super::memory::{STEPS_AHEAD, STEPS_NEAR};
use super::policy::Policy;
use super::NEVER;
use crate::error::Result;

/// Replay one run of checked accesses through `p` (`OFFLINE`: it reads next uses); `mask` is
/// empty or has one flag per access.
pub(super) fn run<P: Policy, const OFFLINE: bool>(p: &mut P, a: &Accesses<'_>, mask: &mut [bool]) -> Result<u64> {
    let (ids, sizes, next) = (a.ids(), a.sizes().unwrap_or(&[]), a.next_use().unwrap_or(&[]));
    if let Some(costs) = a.costs() {
        return match a.sizes() {
            None => costed::<P, false>(p, ids, sizes, costs, mask),
            Some(_) => costed::<P, true>(p, ids, sizes, costs, mask),
        };
    }
    Ok(match (a.sizes().is_some(), mask.is_empty()) {
        (false, true) => steps::<P, false, OFFLINE, false>(p, ids, sizes, next, mask),
        (false, false) => steps::<P, false, OFFLINE, true>(p, ids, sizes, next, mask),
        (true, true) => steps::<P, true, OFFLINE, false>(p, ids, sizes, next, mask),
        (true, false) => steps::<P, true, OFFLINE, true>(p, ids, sizes, next, mask),
    })
}

/// The loop: each switch is a constant, so the unit path without flags is `step` and an add.
#[inline(always)]
fn steps<P: Policy, const SIZED: bool, const OFFLINE: bool, const MASK: bool>(
    p: &mut P,
    ids: &[u32],
    sizes: &[u64],
    next: &[u64],
    mask: &mut [bool],
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
        let hit = p.step::<SIZED>(id, size, next_use);
        if MASK {
            mask[i] = hit;
        }
        hits += hit as u64;
    }
    hits
}

/// The loop with one cost per access (sizes: one per access when `SIZED`, else unit).
fn costed<P: Policy, const SIZED: bool>(
    p: &mut P,
    ids: &[u32],
    sizes: &[u64],
    costs: &[f64],
    mask: &mut [bool],
) -> Result<u64> {
    let mut hits = 0u64;
    let last = ids.len().saturating_sub(1);
    for (i, (&id, &cost)) in ids.iter().zip(costs).enumerate() {
        p.prefetch(ids[(i + STEPS_AHEAD).min(last)]);
        p.prefetch_near(ids[(i + STEPS_NEAR).min(last)]);
        let size = if SIZED { sizes[i] } else { 1 };
        let hit = p.step_costed::<SIZED>(id, size, cost)?;
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
    match (size, cost) {
        (None, None) => Ok(p.step::<false>(id, 1, NEVER)),
        (Some(size), None) => Ok(p.step::<true>(id, size, NEVER)),
        (None, Some(cost)) => p.step_costed::<false>(id, 1, cost),
        (Some(size), Some(cost)) => p.step_costed::<true>(id, size, cost),
    }
}

/// [`run`] behind an admission filter: every access goes through [`Policy::step_gated`] (or
/// its costed form). A loop of its own, so that the run without a filter stays as it is.
pub(super) fn run_gated<P: Policy, const OFFLINE: bool>(
    p: &mut P,
    a: &Accesses<'_>,
    mask: &mut [bool],
    gate: &mut AnyFilter,
) -> Result<u64> {
    let (ids, sizes, next) = (a.ids(), a.sizes().unwrap_or(&[]), a.next_use().unwrap_or(&[]));
    match (a.costs(), a.sizes().is_some()) {
        (Some(costs), false) => gated_costed::<P, false>(p, ids, sizes, costs, mask, gate),
        (Some(costs), true) => gated_costed::<P, true>(p, ids, sizes, costs, mask, gate),
        (None, false) => Ok(gated::<P, false, OFFLINE>(p, ids, sizes, next, mask, gate)),
        (None, true) => Ok(gated::<P, true, OFFLINE>(p, ids, sizes, next, mask, gate)),
    }
}

fn gated<P: Policy, const SIZED: bool, const OFFLINE: bool>(
    p: &mut P,
    ids: &[u32],
    sizes: &[u64],
    next: &[u64],
    mask: &mut [bool],
    gate: &mut AnyFilter,
) -> u64 {
    if (SIZED && sizes.len() < ids.len()) || (OFFLINE && next.len() < ids.len()) {
        return 0;
    }
    let mut hits = 0u64;
    let last = ids.len().saturating_sub(1);
    for (i, &id) in ids.iter().enumerate() {
        p.prefetch(ids[(i + STEPS_AHEAD).min(last)]);
        p.prefetch_near(ids[(i + STEPS_NEAR).min(last)]);
        let size = if SIZED { sizes[i] } else { 1 };
        let next_use = if OFFLINE { next[i] } else { NEVER };
        let hit = p.step_gated::<SIZED, _>(id, size, next_use, gate);
        if let Some(flag) = mask.get_mut(i) {
            *flag = hit;
        }
        hits += hit as u64;
    }
    hits
}

fn gated_costed<P: Policy, const SIZED: bool>(
    p: &mut P,
    ids: &[u32],
    sizes: &[u64],
    costs: &[f64],
    mask: &mut [bool],
    gate: &mut AnyFilter,
) -> Result<u64> {
    let mut hits = 0u64;
    for (i, (&id, &cost)) in ids.iter().zip(costs).enumerate() {
        let size = if SIZED { sizes[i] } else { 1 };
        let hit = p.step_costed_gated::<SIZED, _>(id, size, cost, gate)?;
        if let Some(flag) = mask.get_mut(i) {
            *flag = hit;
        }
        hits += hit as u64;
    }
    Ok(hits)
}

/// [`access`] behind an admission filter.
pub(super) fn access_gated<P: Policy>(
    p: &mut P,
    id: u32,
    size: Option<u64>,
    cost: Option<f64>,
    gate: &mut AnyFilter,
) -> Result<bool> {
    match (size, cost) {
        (None, None) => Ok(p.step_gated::<false, _>(id, 1, NEVER, gate)),
        (Some(size), None) => Ok(p.step_gated::<true, _>(id, size, NEVER, gate)),
        (None, Some(cost)) => p.step_costed_gated::<false, _>(id, 1, cost, gate),
        (Some(size), Some(cost)) => p.step_costed_gated::<true, _>(id, size, cost, gate),
    }
}
