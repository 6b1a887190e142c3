//! Replay: a trace's accesses through one policy, in chunks between looks at the cancel flag,
//! with one loop per mode (unit or sized, with or without next uses and hit flags) written
//! once and monomorphised per policy.

use super::accesses::Accesses;
use super::policy::{Options, Policy};
use super::{AnyPolicy, NEVER};
use crate::cancel;
use crate::error::{check_len, Result};
use std::sync::atomic::AtomicBool;

/// How many accesses run between two looks at the cancel flag.
pub const CHUNK: usize = 1 << 16;

/// Replay `accesses` through a fresh `policy` of `capacity`; returns the hits. `mask`, if not
/// empty, receives one hit flag per access.
pub fn replay(
    policy: &str,
    capacity: u64,
    accesses: &Accesses<'_>,
    options: Options,
    mask: &mut [bool],
    cancel: &AtomicBool,
) -> Result<u64> {
    AnyPolicy::new(policy, capacity, accesses.n_ids(), options)?.replay(accesses, mask, cancel)
}

impl AnyPolicy {
    /// Replay `accesses` through this policy, continuing from its state; see [`replay()`].
    pub fn replay(&mut self, accesses: &Accesses<'_>, mask: &mut [bool], cancel: &AtomicBool) -> Result<u64> {
        accesses.check_for(self.info())?;
        if !mask.is_empty() {
            check_len("mask", mask.len(), accesses.len(), "access")?;
        }
        let mut hits = 0;
        for start in (0..accesses.len()).step_by(CHUNK) {
            cancel::check(cancel)?;
            let end = accesses.len().min(start + CHUNK);
            let flags = if mask.is_empty() { &mut [][..] } else { &mut mask[start..end] };
            hits += self.run(&accesses.part(start..end), flags)?;
        }
        Ok(hits)
    }
}

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
    for (i, &id) in ids.iter().enumerate() {
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
    for (i, (&id, &cost)) in ids.iter().zip(costs).enumerate() {
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
