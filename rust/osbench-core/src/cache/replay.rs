//! Replay: a trace's accesses through one policy, in chunks between looks at the cancel flag
//! (the loops themselves are `steps.rs`); [`replay_grid`]: through many (policy, capacity)
//! cells at once, one cell per thread at a time.

use super::accesses::Accesses;
use super::admission::{Admission, AnyFilter};
use super::lookup::info;
use super::policies::AnyPolicy;
use super::policy::{Gate, Options};
use super::CHUNK;
use crate::cancel::Cancel;
use crate::error::{check_len, Result};
use crate::par;

/// Replay `accesses` through a fresh `policy` of `capacity`; returns the hits. `mask`, if not
/// empty, receives one hit flag per access.
pub fn replay(
    policy: &str,
    capacity: u64,
    accesses: &Accesses<'_>,
    options: Options,
    mask: &mut [bool],
    cancel: &Cancel,
) -> Result<u64> {
    replay_admitted(policy, capacity, accesses, options, None, mask, cancel)
}

/// [`replay()`] behind an admission filter (a fresh one), if `admission` names one.
pub fn replay_admitted(
    policy: &str,
    capacity: u64,
    accesses: &Accesses<'_>,
    options: Options,
    admission: Option<&Admission>,
    mask: &mut [bool],
    cancel: &Cancel,
) -> Result<u64> {
    let mut p = AnyPolicy::new(policy, capacity, accesses.n_ids(), options)?;
    let mut filter = admission.map(|a| a.build(capacity, accesses.n_ids())).transpose()?;
    cancel.plan(accesses.len() as u64);
    p.replay_planned(accesses, mask, filter.as_mut(), cancel)
}

/// The hits of each (policy, capacity) cell, in the cells' order, each cell a fresh replay of
/// `accesses`, spread over up to `threads` threads (a thread takes the next cell when it is
/// free). The same numbers as replaying the cells one after another: the cells share only the
/// read-only accesses. Every cell is checked before any runs.
pub fn replay_grid(
    cells: &[(&str, u64)],
    accesses: &Accesses<'_>,
    options: Options,
    threads: usize,
    cancel: &Cancel,
) -> Result<Vec<u64>> {
    replay_grid_admitted(cells, accesses, options, None, threads, cancel)
}

/// [`replay_grid`] with every cell behind its own fresh admission filter, if `admission`
/// names one.
pub fn replay_grid_admitted(
    cells: &[(&str, u64)],
    accesses: &Accesses<'_>,
    options: Options,
    admission: Option<&Admission>,
    threads: usize,
    cancel: &Cancel,
) -> Result<Vec<u64>> {
    for &(policy, capacity) in cells {
        let info = info(policy)?;
        info.check_capacity("capacities", capacity, &info.resolve(&options)?)?;
        info.check_accesses(accesses)?;
    }
    cancel.plan(accesses.len() as u64 * cells.len() as u64);
    par::map(cells.to_vec(), threads, |(policy, capacity)| {
        let mut filter = admission.map(|a| a.build(capacity, accesses.n_ids())).transpose()?;
        AnyPolicy::new(policy, capacity, accesses.n_ids(), options)?.replay_planned(
            accesses,
            &mut [],
            filter.as_mut(),
            cancel,
        )
    })
}

impl AnyPolicy {
    /// Replay `accesses` through this policy, continuing from its state; see [`replay()`].
    /// Progress: one unit an access.
    pub fn replay(&mut self, accesses: &Accesses<'_>, mask: &mut [bool], cancel: &Cancel) -> Result<u64> {
        cancel.plan(accesses.len() as u64);
        self.replay_planned(accesses, mask, None, cancel)
    }

    /// [`AnyPolicy::replay`] of accesses the caller planned for, behind `filter` if given.
    pub(crate) fn replay_planned(
        &mut self,
        accesses: &Accesses<'_>,
        mask: &mut [bool],
        mut filter: Option<&mut AnyFilter>,
        cancel: &Cancel,
    ) -> Result<u64> {
        self.info().check_accesses(accesses)?;
        if !mask.is_empty() {
            check_len("mask", mask.len(), accesses.len(), "access")?;
        }
        if let Some(keys) = accesses.keys() {
            self.learn_keys(0, keys);
        }
        let mut hits = 0;
        cancel.check()?;
        let mut start = 0;
        while start < accesses.len() {
            let mut end = accesses.len().min(start + CHUNK);
            if let Some(f) = filter.as_deref_mut() {
                // A filter's long work (AdaptSize's reconfiguration) starts a chunk, done first
                // with the cancel at hand.
                if f.light_accesses() == 0 {
                    f.prepare(cancel)?;
                }
                let light = f.light_accesses().max(1);
                end = end.min(start.saturating_add(light.try_into().unwrap_or(usize::MAX)));
            }
            let flags = if mask.is_empty() { &mut [][..] } else { &mut mask[start..end] };
            let part = accesses.part(start..end);
            hits += match filter.as_deref_mut() {
                None => self.run(&part, flags)?,
                Some(f) => self.run_gated(&part, flags, f)?,
            };
            cancel.advance((end - start) as u64)?;
            start = end;
        }
        Ok(hits)
    }
}
