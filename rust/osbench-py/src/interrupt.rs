//! Run native work with the GIL released while still answering Ctrl-C, and report its progress.
//!
//! [`run`] runs the work on the calling thread, GIL released, with a polled cancel: every few
//! milliseconds of work (the loops' own checks, [`osbench_core::cancel::POLL_EVERY`] apart at
//! most) the thread takes the GIL back for a moment to let Python handle signals, and a Ctrl-C
//! stops the work at its next check. Whatever the size of the input, a call stops within a
//! check's worth of work. [`run_on_worker`] is for work whose own thread cannot poll: work that
//! fans out to threads (the calling thread waits for them) or that looks only at the raised
//! flag. It runs on a scoped worker thread while the calling thread polls.
//!
//! Progress: the work reports units done (and plans its total) on its [`Cancel`]; a progress
//! hook set for the calling thread (`osbench.progress`) is called with `(task, done, total)` at
//! most every `every` seconds (default [`REPORT_EVERY`]) from the polling side, first after
//! `every` (a short call reports nothing), and once more when the call ends if it reported
//! before; with `every` 0, at every poll and at the end of every call. An exception raised by the hook stops the work and is raised by the call.
//!
//! A panic in the work is a bug, reported as the core reports it (`par::guarded`): a
//! `RuntimeError` with its message.

use crate::errors::to_py;
use osbench_core::cancel::Cancel;
use osbench_core::{par, Result};
use pyo3::prelude::*;
use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How often the worker mode's calling thread wakes to poll.
const POLL: Duration = Duration::from_millis(5);

/// How often the progress hook is called, at most.
pub const REPORT_EVERY: Duration = Duration::from_millis(100);

/// A progress hook and how often it is called, at most.
struct Hook {
    call: Py<PyAny>,
    every: Duration,
}

thread_local! {
    /// The progress hook of this thread's native calls, if any.
    static HOOK: RefCell<Option<Hook>> = const { RefCell::new(None) };
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(progress_hook, m)?)?;
    m.add("PROGRESS_EVERY", REPORT_EVERY.as_secs_f64())?;
    Ok(())
}

/// Set the progress hook of this thread's native calls (None: none), called as
/// `hook(task, done, total)` (`total` None when the work did not plan one) at most every
/// `every` seconds while a call runs; returns the (hook, every) it replaces, or None.
#[pyfunction]
#[pyo3(signature = (hook, every=REPORT_EVERY.as_secs_f64()))]
fn progress_hook(py: Python<'_>, hook: Option<Py<PyAny>>, every: f64) -> PyResult<Option<(Py<PyAny>, f64)>> {
    if let Some(h) = &hook {
        if !h.bind(py).is_callable() {
            let what = h.bind(py).repr()?;
            return Err(crate::errors::ArgumentTypeError::new_err(format!(
                "hook={what} is not accepted: a callable hook(task, done, total), or None"
            )));
        }
    }
    let Ok(every) = Duration::try_from_secs_f64(every) else {
        return Err(crate::errors::ArgumentError::new_err(format!(
            "every={every} is not accepted: a finite number of seconds >= 0"
        )));
    };
    let new = hook.map(|call| Hook { call, every });
    Ok(HOOK.with(|cell| cell.replace(new)).map(|h| (h.call, h.every.as_secs_f64())))
}

/// What the polling side knows of one call: its task name, when it last reported, and the
/// error that stopped it (a signal's, or the hook's).
struct Watch {
    task: &'static str,
    last_report: Mutex<Instant>,
    reported: AtomicBool,
    error: Mutex<Option<PyErr>>,
}

impl Watch {
    fn new(task: &'static str) -> Watch {
        Watch {
            task,
            last_report: Mutex::new(Instant::now()),
            reported: AtomicBool::new(false),
            error: Mutex::new(None),
        }
    }

    /// Python's turn, GIL held: pending signals, then the progress hook when due. `Err`: stop
    /// the work with this error.
    fn look(&self, py: Python<'_>, cancel: &Cancel) -> PyResult<()> {
        py.check_signals()?;
        let Some(every) = HOOK.with(|cell| cell.borrow().as_ref().map(|h| h.every)) else {
            return Ok(());
        };
        let now = Instant::now();
        let due = self.last_report.lock().map(|mut last| {
            let due = now.duration_since(*last) >= every;
            if due {
                *last = now;
            }
            due
        });
        if due.unwrap_or(false) {
            self.reported.store(true, Ordering::Relaxed);
            self.report(py, cancel)?;
        }
        Ok(())
    }

    fn report(&self, py: Python<'_>, cancel: &Cancel) -> PyResult<()> {
        // Cloned out of the cell, so that a hook that makes native calls finds it free.
        let Some(hook) = HOOK.with(|cell| cell.borrow().as_ref().map(|h| h.call.clone_ref(py))) else {
            return Ok(());
        };
        let total = match cancel.total() {
            0 => None,
            n => Some(n),
        };
        hook.call1(py, (self.task, cancel.done(), total)).map(drop)
    }

    /// Keep the first error that stopped the work.
    fn stop(&self, err: PyErr) {
        if let Ok(mut slot) = self.error.lock() {
            slot.get_or_insert(err);
        }
    }

    fn take_error(&self) -> Option<PyErr> {
        self.error.lock().ok().and_then(|mut slot| slot.take())
    }

    /// The call's result: the error that stopped it, else the work's own, after a last report
    /// if the call reported before (or the hook asked to hear every poll).
    fn finish<T>(&self, py: Python<'_>, cancel: &Cancel, result: Result<T>) -> PyResult<T> {
        if let Some(err) = self.take_error() {
            return Err(err);
        }
        let value = result.map_err(to_py)?;
        // A hook that asked for every poll (`every=0`) hears the end of every call, however short.
        let every_poll = HOOK.with(|cell| cell.borrow().as_ref().is_some_and(|h| h.every.is_zero()));
        if every_poll || self.reported.load(Ordering::Relaxed) {
            self.report(py, cancel)?;
        }
        Ok(value)
    }
}

/// Run `work` on this thread with the GIL released and a polled cancel (see the module docs).
/// `task` names the work to the progress hook.
pub fn run<T: Send>(py: Python<'_>, task: &'static str, work: impl FnOnce(&Cancel) -> Result<T> + Send) -> PyResult<T> {
    let watch = Arc::new(Watch::new(task));
    let polling = watch.clone();
    let cancel = Cancel::polled(Box::new(move |cancel: &Cancel| match Python::attach(|py| polling.look(py, cancel)) {
        Ok(()) => false,
        Err(err) => {
            polling.stop(err);
            true
        }
    }));
    let result = py.detach(|| par::guarded(|| work(&cancel)));
    watch.finish(py, &cancel, result)
}

/// [`run`] for work that spreads over `threads` threads, [`run_on_worker`] when there are
/// several.
pub fn run_fanned<T: Send>(
    py: Python<'_>,
    task: &'static str,
    threads: usize,
    work: impl FnOnce(&Cancel) -> Result<T> + Send,
) -> PyResult<T> {
    if threads > 1 {
        run_on_worker(py, task, work)
    } else {
        run(py, task, work)
    }
}

/// Run `work` on a scoped worker thread, GIL released, while this thread polls for signals and
/// reports progress every few milliseconds (see the module docs).
pub fn run_on_worker<T: Send>(
    py: Python<'_>,
    task: &'static str,
    work: impl FnOnce(&Cancel) -> Result<T> + Send,
) -> PyResult<T> {
    let watch = Watch::new(task);
    let cancel = Cancel::new();
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
            while !done.load(Ordering::Acquire) && !worker.is_finished() {
                std::thread::park_timeout(POLL);
                if !cancel.is_raised() && !done.load(Ordering::Acquire) {
                    if let Err(err) = Python::attach(|py| watch.look(py, &cancel)) {
                        cancel.raise();
                        watch.stop(err);
                    }
                }
            }
            worker.join()
        })
    });
    // `guarded` catches every panic of the work, so the worker itself cannot fail.
    let result = outcome.unwrap_or_else(|_| Err(osbench_core::error::internal("the native worker thread failed")));
    watch.finish(py, &cancel, result)
}
