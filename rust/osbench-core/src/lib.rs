//! osbench-core: the algorithms behind osbench, in plain Rust with no Python.
//!
//! Every domain module works on plain slices and returns plain values or an [`Error`];
//! the PyO3 binding (`osbench-py`) converts arrays and errors in one place.

pub mod cache;
pub mod error;
#[cfg(target_os = "linux")]
pub mod host;
pub mod mem;
pub mod radix;
pub mod sched;
pub mod serve;

pub use error::{Error, Result};
