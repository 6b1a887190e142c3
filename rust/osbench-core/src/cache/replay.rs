//! Replay: a trace's accesses through one policy, in chunks between looks at the cancel flag
//! (the loops themselves are `steps.rs`).

use super::accesses::Accesses;
use super::policies::AnyPolicy;
use super::policy::Options;
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
        self.info().check_accesses(accesses)?;
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
