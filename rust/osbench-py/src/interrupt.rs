//! Run long native work with the GIL released while still answering Ctrl-C.
//!
//! The work runs on a scoped worker thread and polls a cancel flag between chunks; the calling
//! thread, GIL released, wakes every few milliseconds to let Python check for signals and
//! raises the cancel flag if one arrived. The worker wakes the caller as soon as it finishes.
//! A panic in the work is a bug, reported as the core reports it (`par::guarded`): a
//! `RuntimeError` with its message.

use crate::errors::to_py;
use osbench_core::{par, Result};
use pyo3::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

const POLL: Duration = Duration::from_millis(5);

/// Below this many items of work a call finishes in well under a millisecond: it runs on the
/// calling thread (GIL released) instead of paying for a worker thread and a wake-up.
pub const INLINE_ITEMS: usize = 1 << 16;

/// Like [`run`], but small jobs (`items` below [`INLINE_ITEMS`]) run inline.
pub fn run_sized<T: Send>(
    py: Python<'_>,
    items: usize,
    work: impl FnOnce(&AtomicBool) -> Result<T> + Send,
) -> PyResult<T> {
    if items < INLINE_ITEMS {
        let never = AtomicBool::new(false);
        return py.detach(|| par::guarded(|| work(&never))).map_err(to_py);
    }
    run(py, work)
}

pub fn run<T: Send>(py: Python<'_>, work: impl FnOnce(&AtomicBool) -> Result<T> + Send) -> PyResult<T> {
    let cancel = AtomicBool::new(false);
    // Set by the worker just before it wakes the caller: `is_finished` can still be false for a
    // moment after the wake-up, which would cost the caller a whole extra poll.
    let done = AtomicBool::new(false);
    let outcome = py.detach(|| {
        let caller = std::thread::current();
        std::thread::scope(|scope| {
            let worker = scope.spawn(|| {
                let r = par::guarded(|| work(&cancel));
                done.store(true, Ordering::Release);
                caller.unpark();
                r
            });
            let mut signal: Option<PyErr> = None;
            while !done.load(Ordering::Acquire) && !worker.is_finished() {
                std::thread::park_timeout(POLL);
                if signal.is_none() && !done.load(Ordering::Acquire) {
                    if let Err(e) = Python::attach(|py| py.check_signals()) {
                        cancel.store(true, Ordering::Relaxed);
                        signal = Some(e);
                    }
                }
            }
            (worker.join(), signal)
        })
    });
    match outcome {
        (_, Some(signal)) => Err(signal),
        (Ok(result), None) => result.map_err(to_py),
        // `guarded` catches every panic of the work, so the worker itself cannot fail.
        (Err(_), None) => Err(to_py(osbench_core::error::internal("the native worker thread failed"))),
    }
}
