//! Stopping a long loop when the caller asks (Ctrl-C in Python): the binding raises a flag,
//! the loop looks at it every few milliseconds of work through [`check`] and stops with
//! [`Error::Interrupted`].

use crate::error::{Error, Result};
use std::sync::atomic::{AtomicBool, Ordering};

/// `Err(Interrupted)` once `cancel` is raised. Cheap (one relaxed load): call it between chunks.
#[inline]
pub fn check(cancel: &AtomicBool) -> Result<()> {
    if cancel.load(Ordering::Relaxed) {
        Err(Error::Interrupted)
    } else {
        Ok(())
    }
}
