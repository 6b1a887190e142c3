//! Stopping a run that cannot end (`python/osbench/serve/reference.py: LivelockGuard`).
//!
//! vLLM's priority policy preempts the running request of the largest (priority, arrival),
//! the first such in running order; requests that tie on both can preempt one another forever,
//! each losing its progress before it produces a token. The engine is deterministic and nothing
//! reaches it but the requests sent to it, so when its state (the clock aside) repeats with no
//! token and no arrival in between, it spins without progress until the next request is sent,
//! if ever: the run is stopped there, the error saying since when the requests made no progress
//! and when the next one would arrive ([`stalled`]). After a stretch of steps without any output
//! token, the guard compares the engine's whole state step after step with a saved one (Brent's
//! cycle detection); a token or an arrival resets it. Runs that produce tokens never pay.

use crate::error::Result;

/// Steps without an output token before the guard starts comparing states.
pub const QUIET_STEPS: u64 = 64;

#[derive(Debug, Clone, Default)]
pub struct Guard {
    quiet: u64,
    saved: Option<Vec<u64>>,
    power: u64,
    since_saved: u64,
    state: Vec<u64>,
    /// The end of the last step with a token or an arrival.
    since: f64,
}

impl Guard {
    /// After a step ending at `now`: `progressed` when it produced a token or a request
    /// arrived; `write_state` writes the engine's whole state, the clock aside (or runs out of
    /// memory, an error). True when the
    /// state repeated: the run makes no progress before the next request is sent, if ever.
    pub fn repeats(
        &mut self,
        progressed: bool,
        now: f64,
        write_state: impl FnOnce(&mut Vec<u64>) -> Result<()>,
    ) -> Result<bool> {
        if progressed {
            self.progress(now);
            return Ok(false);
        }
        self.quiet += 1;
        if self.quiet < QUIET_STEPS {
            return Ok(false);
        }
        self.state.clear();
        write_state(&mut self.state)?;
        if self.saved.as_ref() == Some(&self.state) {
            return Ok(true);
        }
        self.since_saved += 1;
        if self.saved.is_none() || self.since_saved == self.power {
            self.power = if self.saved.is_none() { 1 } else { self.power * 2 };
            self.since_saved = 0;
            self.saved = Some(std::mem::take(&mut self.state));
        }
        Ok(false)
    }

    /// Steps ending at `now` produced a token (the decode jump's, taken at once).
    pub fn progress(&mut self, now: f64) {
        self.quiet = 0;
        self.saved = None;
        self.since = now;
    }

    /// The livelock error's account of time ([`stalled`]), for a run found repeating;
    /// `next_send`: when the next request would be sent (None or infinity: never).
    pub fn stalled(&self, next_send: Option<f64>) -> String {
        stalled(self.since, next_send)
    }
}

/// From when the requests in the engine made no progress, and when the next request would
/// arrive (`reference.py: stalled`, word for word; an f64's `Display` is the shortest digits
/// that read back as it, as the reference writes it).
pub fn stalled(since: f64, next_send: Option<f64>) -> String {
    let words = format!("the requests in the engine make no progress from t={since} s on");
    match next_send {
        Some(t) if t.is_finite() => {
            format!("{words}, and nothing changes before the next request would arrive, at t={t} s")
        }
        _ => words,
    }
}
