//! Host probes: what threads, processes, page faults and memory cost on this machine, measured
//! with no Python in the loop (lecture section 1, demo 01).
//!
//! - [`pingpong`]: a message goes to the other side and comes back (a round trip), between two
//!   threads or two processes, through one [`Channel`] mechanism per file: [`pipe`], [`eventfd`],
//!   [`futex`]. Each side counts what it received, so a caller can check that the two sides
//!   really alternated.
//! - [`faults`]: the cost of a minor page fault (touch every page of a fresh mapping, with and
//!   without pre-population), and fork's copy-on-write faults in a child.
//! - [`chase`]: pointer chasing over a random cycle (lmbench `lat_mem_rd` style): the latency of
//!   one dependent load for a working set of a given size.
//!
//! Everything here is Linux-only and works on raw system calls through `libc`. Code that runs in
//! a forked child performs only system calls and plain memory accesses (no allocation, no
//! panics), because the child of a multi-threaded process may only do async-signal-safe work.

pub mod chase;
pub mod eventfd;
pub mod faults;
pub mod futex;
pub mod pingpong;
pub mod pipe;
pub mod sys;

#[cfg(test)]
mod tests;

pub use pingpong::{pingpong, Mode, PingPong};

/// The two ends of a round trip: `A` starts each round trip and times it, `B` echoes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    A,
    B,
}

/// One way to wake the other side. Implementations keep only file descriptors and shared memory
/// (`MAP_SHARED`), so they work the same between threads and across `fork`.
///
/// Both methods return an `errno` on failure and never allocate: they also run in a forked child.
pub trait Channel: Sync {
    /// Deliver message number `seq` to side `to`.
    fn send(&self, to: Side, seq: u64) -> Result<(), i32>;
    /// Wait for the next message addressed to `me`, expected to be number `expect`; return the
    /// number actually received (a mechanism that carries no payload returns what it can tell,
    /// see each implementation).
    fn recv(&self, me: Side, expect: u64) -> Result<u64, i32>;
}

/// One row of the mechanism table: a way to wake the other side, and how to open one.
#[derive(Clone, Copy)]
pub struct MechanismInfo {
    /// As users name it.
    pub name: &'static str,
    /// A fresh channel (the system may refuse one: an error then).
    pub open: fn() -> crate::Result<Box<dyn Channel + Send>>,
}

/// Every mechanism [`pingpong`] accepts, one file each. The one list of them: the binding
/// exports the names, and Python's round-trip registry holds one native entry per name and mode.
pub const MECHANISMS: [MechanismInfo; 3] = [
    MechanismInfo { name: "pipe", open: || Ok(Box::new(pipe::Pipe::new()?)) },
    MechanismInfo { name: "eventfd", open: || Ok(Box::new(eventfd::EventFd::new()?)) },
    MechanismInfo { name: "futex", open: || Ok(Box::new(futex::Futex::new()?)) },
];

/// A message that is never a real sequence number: used to wake a side that must stop.
pub const POISON: u64 = u64::MAX;
