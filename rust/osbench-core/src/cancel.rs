//! Stopping a long loop when the caller asks (Ctrl-C in Python), and telling the caller how far
//! it got: one [`Cancel`] per call, shared by the loop and whoever watches it.
//!
//! A loop calls [`Cancel::advance`] (or [`Cancel::check`]) every few milliseconds of work, with
//! the units it did since the last call, and stops with [`Error::Interrupted`] once the cancel
//! is raised. Two ways to raise it:
//!
//! - another thread calls [`Cancel::raise`] (the binding's caller thread, polling for signals
//!   while the work runs on a worker thread), reading [`Cancel::done`] to report progress;
//! - the loop's own thread asks a [`Poll`] hook, at most every [`POLL_EVERY`], from inside
//!   `check`: the work then runs on the caller's thread and answers Ctrl-C all the same,
//!   whatever the size of its input.

use crate::error::{Error, Result};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::ThreadId;
use std::time::{Duration, Instant};

/// How often a polled cancel asks its hook (on the thread that made it).
pub const POLL_EVERY: Duration = Duration::from_millis(5);

/// Asked by a polled cancel (which it may read: [`Cancel::done`], [`Cancel::total`]); `true`
/// stops the work.
pub type PollHook = Box<dyn Fn(&Cancel) -> bool + Send + Sync>;

/// The hook of a polled cancel and when it is next due.
pub struct Poll {
    hook: PollHook,
    /// Only this thread asks the hook: other threads (a fan-out's workers) only read the flag.
    owner: ThreadId,
    origin: Instant,
    /// Nanoseconds after `origin` of the next ask.
    next: AtomicU64,
}

/// A cancel flag with a progress counter (and, polled, a hook that may raise the flag).
pub struct Cancel {
    raised: AtomicBool,
    done: AtomicU64,
    total: AtomicU64,
    poll: Option<Poll>,
}

impl Default for Cancel {
    fn default() -> Self {
        Cancel::new()
    }
}

impl Cancel {
    /// A cancel raised only by [`Cancel::raise`].
    pub const fn new() -> Cancel {
        Cancel { raised: AtomicBool::new(false), done: AtomicU64::new(0), total: AtomicU64::new(0), poll: None }
    }

    /// A cancel raised from the start: the first check stops the work.
    pub const fn raised() -> Cancel {
        Cancel { raised: AtomicBool::new(true), done: AtomicU64::new(0), total: AtomicU64::new(0), poll: None }
    }

    /// A cancel that, on this thread, asks `hook(self)` at most every [`POLL_EVERY`]
    /// from inside [`Cancel::check`], and is raised when the hook says `true`.
    pub fn polled(hook: PollHook) -> Cancel {
        // The first ask waits a period too: a short call never leaves its loop.
        let first = AtomicU64::new(POLL_EVERY.as_nanos() as u64);
        let poll = Poll { hook, owner: std::thread::current().id(), origin: Instant::now(), next: first };
        Cancel { poll: Some(poll), ..Cancel::new() }
    }

    /// Ask the work to stop at its next check.
    pub fn raise(&self) {
        self.raised.store(true, Ordering::Relaxed);
    }

    pub fn is_raised(&self) -> bool {
        self.raised.load(Ordering::Relaxed)
    }

    /// The units of work reported so far.
    pub fn done(&self) -> u64 {
        self.done.load(Ordering::Relaxed)
    }

    /// The units of work the work said it has to do (0: it did not say).
    pub fn total(&self) -> u64 {
        self.total.load(Ordering::Relaxed)
    }

    /// The work will do `units` more units than planned so far (each part of it plans its own:
    /// a fan-out's cells add up).
    pub fn plan(&self, units: u64) {
        self.total.fetch_add(units, Ordering::Relaxed);
    }

    /// The raised flag alone, for a loop that looks only at it (and so must run where another
    /// thread polls: the binding's worker mode).
    pub fn flag(&self) -> &AtomicBool {
        &self.raised
    }

    /// Report `units` more units of work done.
    #[inline]
    pub fn progress(&self, units: u64) {
        self.done.fetch_add(units, Ordering::Relaxed);
    }

    /// Report `units` more units of work done, then [`Cancel::check`].
    #[inline]
    pub fn advance(&self, units: u64) -> Result<()> {
        self.progress(units);
        self.check()
    }

    /// `Err(Interrupted)` once the cancel is raised (a polled cancel asks its hook first, when
    /// due). Cheap: a relaxed load, and a clock read when polled. Call it between chunks.
    #[inline]
    pub fn check(&self) -> Result<()> {
        if let Some(poll) = &self.poll {
            self.ask(poll);
        }
        if self.is_raised() {
            Err(Error::Interrupted)
        } else {
            Ok(())
        }
    }

    #[cold]
    fn ask(&self, poll: &Poll) {
        let now = poll.origin.elapsed().as_nanos() as u64;
        if now < poll.next.load(Ordering::Relaxed) || std::thread::current().id() != poll.owner {
            return;
        }
        poll.next.store(now + POLL_EVERY.as_nanos() as u64, Ordering::Relaxed);
        if (poll.hook)(self) {
            self.raise();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU32;
    use std::sync::Arc;

    #[test]
    fn a_raised_cancel_stops_the_next_check_and_counts_what_was_done() {
        let c = Cancel::new();
        c.plan(10);
        c.plan(10);
        assert_eq!(c.total(), 20);
        assert_eq!(c.advance(5), Ok(()));
        assert_eq!(c.advance(7), Ok(()));
        c.raise();
        assert_eq!(c.check(), Err(Error::Interrupted));
        assert_eq!(c.advance(1), Err(Error::Interrupted));
        assert_eq!(c.done(), 13);
        assert!(c.flag().load(Ordering::Relaxed));
    }

    #[test]
    fn a_polled_cancel_asks_its_hook_on_its_own_thread_at_most_every_poll_period() {
        let asked = Arc::new(AtomicU32::new(0));
        let seen = Arc::new(AtomicU64::new(0));
        let (a, s) = (asked.clone(), seen.clone());
        let c = Cancel::polled(Box::new(move |c: &Cancel| {
            s.store(c.done(), Ordering::Relaxed);
            a.fetch_add(1, Ordering::Relaxed) == 2 // the third ask stops the work
        }));
        // No ask within the first period (a short call never leaves its loop); one after it,
        // and none at once again.
        c.advance(1).unwrap();
        assert_eq!(asked.load(Ordering::Relaxed), 0);
        std::thread::sleep(POLL_EVERY);
        c.advance(1).unwrap();
        c.advance(1).unwrap();
        assert_eq!(asked.load(Ordering::Relaxed), 1);
        assert_eq!(seen.load(Ordering::Relaxed), 2);
        // Another thread never asks (a fan-out's worker): it only sees the flag.
        std::thread::scope(|s| {
            s.spawn(|| {
                std::thread::sleep(POLL_EVERY * 2);
                assert_eq!(c.check(), Ok(()));
            });
        });
        assert_eq!(asked.load(Ordering::Relaxed), 1);
        // The owner asks again once a period has passed; the third ask raises the cancel.
        let mut stopped = Ok(());
        for _ in 0..1000 {
            std::thread::sleep(POLL_EVERY);
            stopped = c.advance(1);
            if stopped.is_err() {
                break;
            }
        }
        assert_eq!(stopped, Err(Error::Interrupted));
        assert_eq!(asked.load(Ordering::Relaxed), 3);
        assert_eq!(seen.load(Ordering::Relaxed), c.done());
        assert!(c.is_raised());
    }
}
