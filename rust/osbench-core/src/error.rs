//! The one error type of the core. The binding maps each variant to a Python exception.

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// An argument is out of the accepted range: `name` is the argument, `value` what was
    /// given, `accepted` a short description of what would have been accepted.
    InvalidArgument { name: &'static str, value: String, accepted: String },
    /// The operating system refused a call (a host probe that cannot run here).
    Os { call: &'static str, message: String },
    /// The caller asked the long-running operation to stop (Ctrl-C).
    Interrupted,
    /// Memory ran out: an allocation of `what` failed (grown with `try_reserve`, so that the
    /// caller gets an error, never an abort of the process).
    OutOfMemory { what: String },
    /// A bug: an invariant of osbench itself does not hold (a worker thread panicked, a state
    /// that cannot happen happened). Never the caller's fault; reported as such.
    Internal { what: String },
}

pub type Result<T> = std::result::Result<T, Error>;

/// Shorthand for an [`Error::Internal`].
pub fn internal(what: impl Into<String>) -> Error {
    Error::Internal { what: what.into() }
}

/// Room for `additional` more items in `v`, or [`Error::OutOfMemory`] naming `what` they are.
pub fn try_grow<T>(v: &mut Vec<T>, additional: usize, what: &str) -> Result<()> {
    v.try_reserve(additional).map_err(|_| Error::OutOfMemory { what: format!("{what} ({additional} more)") })
}

/// Shorthand for an [`Error::InvalidArgument`].
pub fn invalid(name: &'static str, value: impl fmt::Display, accepted: impl Into<String>) -> Error {
    Error::InvalidArgument { name, value: value.to_string(), accepted: accepted.into() }
}

/// The check of an array that holds one entry per item of another (per access, per job...):
/// `name` has `len` entries where `expected`, one per `each`, are due.
pub fn check_len(name: &'static str, len: usize, expected: usize, each: &str) -> Result<()> {
    if len == expected {
        Ok(())
    } else {
        Err(invalid(name, format!("{len} entries"), format!("{expected} entries, one per {each}")))
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InvalidArgument { name, value, accepted } => {
                write!(f, "{name}={value} is not accepted: {accepted}")
            }
            Error::Os { call, message } => write!(f, "{call} failed: {message}"),
            Error::Interrupted => write!(f, "interrupted"),
            Error::OutOfMemory { what } => write!(f, "out of memory: no room for {what}"),
            Error::Internal { what } => write!(f, "internal error in osbench (a bug, please report it): {what}"),
        }
    }
}

impl std::error::Error for Error {}
