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
    /// Nanoseconds between two asks, at least.
    period: u64,
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
        Cancel::polled_every(hook, POLL_EVERY)
    }

    /// [`Cancel::polled`], asking at most every `period` (the first ask waits a period too: a
    /// short call never leaves its loop).
    pub fn polled_every(hook: PollHook, period: Duration) -> Cancel {
        let period = period.as_nanos().min(u64::MAX as u128) as u64;
        let poll = Poll {
            hook,
            owner: std::thread::current().id(),
            origin: Instant::now(),
            period,
            next: AtomicU64::new(period),
        };
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
        poll.next.store(now.saturating_add(poll.period), Ordering::Relaxed);
        if (poll.hook)(self) {
            self.raise();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU32;
    use std::sync::{Arc, Mutex};

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

    /// A hook that counts its asks and stops the work at the third.
    fn counting() -> (Arc<AtomicU32>, PollHook) {
        let asked = Arc::new(AtomicU32::new(0));
        let a = asked.clone();
        (asked, Box::new(move |_: &Cancel| a.fetch_add(1, Ordering::Relaxed) == 2))
    }

    #[test]
    fn a_polled_cancel_asks_its_hook_on_its_own_thread_once_a_period_has_passed() {
        // A period longer than the test: never asked (a short call never leaves its loop).
        let (asked, hook) = counting();
        let c = Cancel::polled_every(hook, Duration::from_secs(3600));
        for _ in 0..1000 {
            c.advance(1).unwrap();
        }
        assert_eq!(asked.load(Ordering::Relaxed), 0);
        // No period: asked at every check, on this thread only; the third ask stops the work.
        let (asked, hook) = counting();
        let c = Cancel::polled_every(hook, Duration::ZERO);
        assert_eq!(c.advance(1), Ok(()));
        std::thread::scope(|s| {
            s.spawn(|| assert_eq!(c.check(), Ok(()))); // a fan-out's worker only reads the flag
        });
        assert_eq!(asked.load(Ordering::Relaxed), 1);
        assert_eq!(c.check(), Ok(()));
        assert_eq!(c.advance(1), Err(Error::Interrupted));
        assert_eq!(asked.load(Ordering::Relaxed), 3);
        assert!(c.is_raised() && c.done() == 2);
    }

    #[test]
    fn the_hook_sees_the_work_done_and_planned() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let s = seen.clone();
        let c = Cancel::polled_every(
            Box::new(move |c: &Cancel| {
                s.lock().unwrap().push((c.done(), c.total()));
                false
            }),
            Duration::ZERO,
        );
        c.plan(10);
        c.advance(4).unwrap();
        c.advance(6).unwrap();
        assert_eq!(*seen.lock().unwrap(), [(4, 10), (10, 10)]);
    }
}
