//! osbench-core: the algorithms behind osbench, in plain Rust with no Python.
//!
//! Every domain module works on plain slices and returns plain values or an [`Error`];
//! the PyO3 binding (`osbench-py`) converts arrays and errors in one place. Shared by the
//! domains: [`cancel`] (stopping long loops on request), [`par`] (one scoped fan-out with one
//! panic policy) and [`hash`] (splitmix64).

pub mod cache;
pub mod cancel;
pub mod error;
pub mod generate;
pub mod hash;
#[cfg(target_os = "linux")]
pub mod host;
pub mod mem;
pub mod par;
pub mod radix;
pub mod sched;
pub mod serve;

pub use error::{Error, Result};
