//! `osbench._native`: the PyO3 binding of osbench-core.
//!
//! Thin by design: numpy arrays in and out without copies (`arrays.rs`), the GIL released
//! around every long loop (`interrupt.rs`), core errors mapped to Python exceptions in one
//! place (`errors.rs`). The binding converts; the core checks and decides.

mod arrays;
mod cache;
mod errors;
mod generate;
#[cfg(target_os = "linux")]
mod host;
mod interrupt;
mod mem;
mod radix;
mod sched;
mod serve;
mod step_time;
mod threads;

use pyo3::prelude::*;

/// "release" or "debug": benchmarks refuse to run on a debug build.
const BUILD_PROFILE: &str = if cfg!(debug_assertions) { "debug" } else { "release" };

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("BUILD_PROFILE", BUILD_PROFILE)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    cache::register(m)?;
    radix::register(m)?;
    #[cfg(target_os = "linux")]
    host::register(m)?;
    sched::register(m)?;
    mem::register(m)?;
    serve::register(m)?;
    step_time::register(m)?;
    generate::register(m)?;
    interrupt::register(m)?;
    Ok(())
}
