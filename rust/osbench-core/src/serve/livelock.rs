//! Stopping a run that cannot end (`python/osbench/serve/reference.py: LivelockGuard`).
//!
//! vLLM's priority policy preempts the running request of the largest (priority, arrival),
//! the first such in running order; requests that tie on both can preempt one another forever,
//! each losing its progress before it produces a token. The engine is deterministic, so such
//! a run repeats its state exactly (the clock aside, once every request has arrived). After a
//! stretch of steps without any output token, the guard compares the engine's whole state
//! step after step with a saved one (Brent's cycle detection): a repeat is a livelock, stopped
//! with an error; a token or an arrival resets the guard. Runs that produce tokens never pay.

/// Steps without an output token before the guard starts comparing states.
pub const QUIET_STEPS: u64 = 64;

#[derive(Debug, Clone, Default)]
pub struct Guard {
    quiet: u64,
    saved: Option<Vec<u64>>,
    power: u64,
    since_saved: u64,
    state: Vec<u64>,
}

impl Guard {
    /// After a step: `progressed` when it produced a token or a request arrived; `write_state`
    /// writes the engine's whole state. True when the state repeated: the run cannot end.
    pub fn repeats(&mut self, progressed: bool, write_state: impl FnOnce(&mut Vec<u64>)) -> bool {
        if progressed {
            self.quiet = 0;
            self.saved = None;
            return false;
        }
        self.quiet += 1;
        if self.quiet < QUIET_STEPS {
            return false;
        }
        self.state.clear();
        write_state(&mut self.state);
        if self.saved.as_ref() == Some(&self.state) {
            return true;
        }
        self.since_saved += 1;
        if self.saved.is_none() || self.since_saved == self.power {
            self.power = if self.saved.is_none() { 1 } else { self.power * 2 };
            self.since_saved = 0;
            self.saved = Some(std::mem::take(&mut self.state));
        }
        false
    }
}
