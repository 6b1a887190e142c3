//! Trace generation (`osbench.traces`): the core's chunked generators, run with the GIL
//! released and stopped by Ctrl-C.

use crate::arrays::slice;
use crate::interrupt;
use numpy::{PyArray1, PyReadonlyArray1};
use osbench_core::cancel::Cancel;
use osbench_core::generate::{cyclic, drift, scan, zipf, Drift, Pcg64};
use osbench_core::Result;
use pyo3::exceptions::PyMemoryError;
use pyo3::prelude::*;

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(traces_zipf, m)?)?;
    m.add_function(wrap_pyfunction!(traces_loop, m)?)?;
    m.add_function(wrap_pyfunction!(traces_scan, m)?)?;
    m.add_function(wrap_pyfunction!(traces_drift, m)?)?;
    Ok(())
}

/// A zeroed vector of `n` keys, or MemoryError.
fn keys(n: usize) -> PyResult<Vec<i64>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| PyMemoryError::new_err(format!("a trace of {n} accesses")))?;
    v.resize(n, 0);
    Ok(v)
}

/// numpy's PCG64 started at (state, inc), each given as its (high, low) 64-bit halves.
fn pcg64(state: (u64, u64), inc: (u64, u64)) -> Pcg64 {
    let u128_of = |(hi, lo): (u64, u64)| ((hi as u128) << 64) | lo as u128;
    Pcg64::new(u128_of(state), u128_of(inc))
}

/// `length` keys written by `fill` (one of the core's generators), run as `task` with the GIL
/// released and Ctrl-C watched, as a numpy array.
fn generated<'py>(
    py: Python<'py>,
    task: &'static str,
    length: usize,
    fill: impl FnOnce(&mut [i64], &Cancel) -> Result<()> + Send,
) -> PyResult<Bound<'py, PyArray1<i64>>> {
    let mut out = keys(length)?;
    interrupt::run(py, task, |cancel| fill(&mut out, cancel))?;
    Ok(PyArray1::from_vec(py, out))
}

/// `length` Zipf keys: numpy's PCG64 started at (state, inc), each draw mapped through `cdf`.
#[pyfunction]
fn traces_zipf<'py>(
    py: Python<'py>,
    cdf: PyReadonlyArray1<'py, f64>,
    state: (u64, u64),
    inc: (u64, u64),
    length: usize,
) -> PyResult<Bound<'py, PyArray1<i64>>> {
    let c = slice("cdf", &cdf)?;
    let mut rng = pcg64(state, inc);
    generated(py, "traces.zipf", length, |out, cancel| zipf(c, &mut rng, out, cancel))
}

/// `length` keys cycling through 0..n_keys.
#[pyfunction]
fn traces_loop(py: Python<'_>, n_keys: u64, length: usize) -> PyResult<Bound<'_, PyArray1<i64>>> {
    generated(py, "traces.loop", length, |out, cancel| cyclic(n_keys, out, cancel))
}

/// `length` keys of a hot set of `n_hot` polluted every `period` accesses by a scan of
/// `scan_length` one-off keys: numpy's PCG64 started at (state, inc).
#[pyfunction]
fn traces_scan(
    py: Python<'_>,
    n_hot: u64,
    scan_length: u64,
    period: u64,
    state: (u64, u64),
    inc: (u64, u64),
    length: usize,
) -> PyResult<Bound<'_, PyArray1<i64>>> {
    let mut rng = pcg64(state, inc);
    generated(py, "traces.scan", length, |out, cancel| scan(n_hot, scan_length, period, &mut rng, out, cancel))
}

/// `length` keys whose hot set of `n_hot` moves over `phases` phases, a share `p_hot` of the
/// accesses to it and the rest to all `n_keys`: numpy's PCG64 started at (state, inc).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn traces_drift(
    py: Python<'_>,
    n_keys: u64,
    n_hot: u64,
    phases: u64,
    p_hot: f64,
    state: (u64, u64),
    inc: (u64, u64),
    length: usize,
) -> PyResult<Bound<'_, PyArray1<i64>>> {
    let mut spare = keys(length)?;
    let mut rng = pcg64(state, inc);
    generated(py, "traces.drift", length, |out, cancel| {
        drift(Drift { n_keys, n_hot, phases, p_hot }, &mut rng, out, &mut spare, cancel)
    })
}
