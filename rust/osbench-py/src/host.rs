//! Host probes: native ping-pong, page faults, copy-on-write and pointer chasing.
//! Every probe runs with the GIL released and answers Ctrl-C.

use crate::errors::ToPyResult;
use crate::interrupt;
use numpy::{IntoPyArray, PyArray1};
use osbench_core::host::{chase, faults, pingpong, sys, Mode, MECHANISMS};
use pyo3::prelude::*;
use pyo3::types::PyDict;

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("HOST_MECHANISMS", MECHANISMS.map(|m| m.name).to_vec())?;
    m.add_function(wrap_pyfunction!(host_current_cpu, m)?)?;
    m.add_function(wrap_pyfunction!(host_pingpong, m)?)?;
    m.add_function(wrap_pyfunction!(host_page_touch, m)?)?;
    m.add_function(wrap_pyfunction!(host_cow, m)?)?;
    m.add_function(wrap_pyfunction!(host_chase_cycle, m)?)?;
    m.add_function(wrap_pyfunction!(host_chase, m)?)?;
    Ok(())
}

/// The CPU the calling thread runs on now (-1 if the kernel does not say).
#[pyfunction]
fn host_current_cpu() -> i32 {
    sys::current_cpu()
}

/// Round trips through `mechanism` between two threads or two processes ("threads",
/// "processes"). Returns a dict: samples_ns, cpu_a, cpu_b (numpy arrays, one per sample),
/// received_a, received_b, mismatched, round_trips.
#[pyfunction]
#[pyo3(signature = (mechanism, mode, rounds, warmup=1000, batch=1, cpu_a=None, cpu_b=None))]
#[allow(clippy::too_many_arguments)]
fn host_pingpong<'py>(
    py: Python<'py>,
    mechanism: &str,
    mode: &str,
    rounds: usize,
    warmup: usize,
    batch: usize,
    cpu_a: Option<usize>,
    cpu_b: Option<usize>,
) -> PyResult<Bound<'py, PyDict>> {
    let mode = Mode::parse(mode).py_err()?;
    let r = interrupt::run_on_worker(py, "host.pingpong", |cancel| {
        pingpong(mechanism, mode, rounds, warmup, batch, cpu_a, cpu_b, cancel)
    })?;
    let d = PyDict::new(py);
    d.set_item("samples_ns", r.samples_ns.into_pyarray(py))?;
    d.set_item("cpu_a", r.cpu_a.into_pyarray(py))?;
    d.set_item("cpu_b", r.cpu_b.into_pyarray(py))?;
    d.set_item("received_a", r.received_a)?;
    d.set_item("received_b", r.received_b)?;
    d.set_item("mismatched", r.mismatched)?;
    d.set_item("round_trips", r.round_trips)?;
    Ok(d)
}

/// Map `nbytes` of fresh anonymous memory and write one byte per page. `prefault` is "none",
/// "populate" (MAP_POPULATE) or "hugepage" (MADV_HUGEPAGE). Returns a dict of counts and ns.
#[pyfunction]
#[pyo3(signature = (nbytes, prefault="none"))]
fn host_page_touch<'py>(py: Python<'py>, nbytes: u64, prefault: &str) -> PyResult<Bound<'py, PyDict>> {
    let prefault = faults::Prefault::parse(prefault).py_err()?;
    let t = interrupt::run_on_worker(py, "host.page_touch", |cancel| faults::touch_fresh(nbytes, prefault, cancel))?;
    let d = PyDict::new(py);
    d.set_item("bytes", t.bytes)?;
    d.set_item("page_size", t.page_size)?;
    d.set_item("pages", t.pages)?;
    d.set_item("map_minor_faults", t.map_minor_faults)?;
    d.set_item("touch_minor_faults", t.touch_minor_faults)?;
    d.set_item("major_faults", t.major_faults)?;
    d.set_item("map_ns", t.map_ns)?;
    d.set_item("touch_ns", t.touch_ns)?;
    Ok(d)
}

/// Fork with a filled buffer of `buffer_bytes`; the child writes `pages_written` pages.
/// Returns (child minor faults, child nanoseconds, buffer pages).
#[pyfunction]
fn host_cow(py: Python<'_>, buffer_bytes: u64, pages_written: u64) -> PyResult<(u64, u64, u64)> {
    let c = interrupt::run_on_worker(py, "host.cow", |cancel| faults::cow_faults(buffer_bytes, pages_written, cancel))?;
    Ok((c.child_minor_faults, c.child_ns, c.buffer_pages))
}

/// The random cycle the pointer chase follows: next line of each line (uint32).
#[pyfunction]
fn host_chase_cycle<'py>(py: Python<'py>, lines: usize, seed: u64) -> PyResult<Bound<'py, PyArray1<u32>>> {
    let next = interrupt::run(py, "host.chase_cycle", |cancel| chase::cycle(lines, seed, cancel))?;
    Ok(next.into_pyarray(py))
}

/// Nanoseconds per dependent load over a working set of `nbytes`, one per repeat (float64);
/// `huge_pages` asks for transparent huge pages (MADV_HUGEPAGE) under the working set.
#[pyfunction]
#[pyo3(signature = (nbytes, loads, repeats=3, seed=0, huge_pages=false))]
fn host_chase<'py>(
    py: Python<'py>,
    nbytes: u64,
    loads: u64,
    repeats: usize,
    seed: u64,
    huge_pages: bool,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let v = interrupt::run_on_worker(py, "host.chase", |cancel| {
        chase::latency(nbytes, loads, repeats, seed, huge_pages, cancel)
    })?;
    Ok(v.into_pyarray(py))
}
