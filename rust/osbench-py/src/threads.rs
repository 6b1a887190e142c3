//! How many threads a parallel call may use: the `threads=` a caller gives, else every CPU this
//! process may run on (`len(os.sched_getaffinity(0))`, so `taskset` and container CPU sets are
//! honoured; `os.cpu_count()` where the OS has no affinity call). Decided here, once, for every
//! native entry point that fans out.

use crate::errors::ArgumentError;
use pyo3::prelude::*;

/// The most threads a caller may ask for.
const MAX_THREADS: usize = 1024;

/// `threads` if given (1 to [`MAX_THREADS`]), else the CPUs this process may use.
pub fn threads(py: Python<'_>, threads: Option<usize>) -> PyResult<usize> {
    match threads {
        Some(n) if (1..=MAX_THREADS).contains(&n) => Ok(n),
        Some(n) => Err(ArgumentError::new_err(format!(
            "threads={n} is not accepted: a number of threads from 1 to {MAX_THREADS}"
        ))),
        None => usable_cpus(py),
    }
}

fn usable_cpus(py: Python<'_>) -> PyResult<usize> {
    let os = py.import("os")?;
    let n = match os.getattr("sched_getaffinity") {
        Ok(affinity) => affinity.call1((0,))?.len()?,
        Err(_) => os.getattr("cpu_count")?.call0()?.extract::<Option<usize>>()?.unwrap_or(1),
    };
    Ok(n.clamp(1, MAX_THREADS))
}
