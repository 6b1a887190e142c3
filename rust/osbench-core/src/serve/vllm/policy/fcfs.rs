//! `fcfs`: vLLM's first come first served (`request_queue.py: FCFSRequestQueue`,
//! `scheduler.py: Scheduler.schedule`'s `self.running.pop()`). Waiting requests leave in
//! arrival order; a full pool preempts the last running request, which goes back to the front
//! of the waiting queue. vLLM's rules, none replaced.

/// The last running request.
pub fn victim(running: &[u32]) -> usize {
    running.len().saturating_sub(1)
}
