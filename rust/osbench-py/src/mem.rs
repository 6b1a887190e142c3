//! Virtual memory and paging: translation, slot mapping, the allocation simulator.

use crate::arrays::slice;
use crate::errors::ArgumentError;
use crate::errors::ToPyResult;
use crate::interrupt;
use numpy::{PyArray1, PyArrayMethods, PyReadonlyArray1};
use osbench_core::mem::sim::{simulate_into, OutcomeMut, Requests};
use osbench_core::mem::translate::{slot_mapping, translate, Rows};
use osbench_core::mem::{AnyStrategy, STRATEGIES};
use pyo3::prelude::*;

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // The core's strategy table: (name, the parameters it reads) a row.
    m.add("MEM_STRATEGIES", STRATEGIES.map(|s| (s.name, s.reads.to_vec())).to_vec())?;
    m.add_function(wrap_pyfunction!(mem_translate, m)?)?;
    m.add_function(wrap_pyfunction!(mem_slot_mapping, m)?)?;
    m.add_function(wrap_pyfunction!(mem_simulate, m)?)?;
    Ok(())
}

type Array<'py, T> = Bound<'py, PyArray1<T>>;

/// A new array of `n` items, allocated by numpy: for large arrays numpy asks the kernel for
/// transparent huge pages, which makes first-touching the output several times cheaper than
/// a fresh Vec (one fault per 2 MB instead of per 4 KB).
fn output<T: numpy::Element>(py: Python<'_>, n: usize) -> Array<'_, T> {
    // SAFETY: every element is written by the caller before the array is returned to Python.
    unsafe { PyArray1::<T>::new(py, [n], false) }
}

/// The mutable slice of an array made by [`output`].
///
/// # Safety
/// The array must be new and not yet shared with Python, and no other slice of it may be live.
// Same shape as numpy's own `as_slice_mut(&self) -> &mut [T]`: a Python array is shared
// by reference, so mutable access goes through `&` and the caller upholds exclusivity.
#[allow(clippy::mut_from_ref)]
unsafe fn writable<'a, T: numpy::Element>(a: &'a Array<'_, T>) -> PyResult<&'a mut [T]> {
    unsafe { a.as_slice_mut() }.map_err(|e| ArgumentError::new_err(e.to_string()))
}

/// Per request: status, data held, units allocated, largest free block.
type SimArrays<'py> = (Array<'py, u8>, Array<'py, u64>, Array<'py, u64>, Array<'py, u64>);

/// Translate virtual addresses through a one-level page table (`page_table[vpn]` = frame or
/// -1). Returns (physical addresses with -1 where unmapped, number of faults).
#[pyfunction]
fn mem_translate<'py>(
    py: Python<'py>,
    vaddrs: PyReadonlyArray1<'py, i64>,
    page_table: PyReadonlyArray1<'py, i64>,
    page_size: u64,
) -> PyResult<(Array<'py, i64>, u64)> {
    let v = slice("vaddrs", &vaddrs)?;
    let t = slice("page_table", &page_table)?;
    let out = output::<i64>(py, v.len());
    // SAFETY: `out` was just made by `output` and this is its only slice.
    let o = unsafe { writable(&out)? };
    let faults = interrupt::run_on_worker(py, "mem.translate", |cancel| translate(v, t, page_size, o, cancel))?;
    Ok((out, faults))
}

/// Map token positions to KV slots through a row-major block table of rows of `row_len`.
/// Token i belongs to row `seq_ids[i]` if given, else to row `i // tokens_per_row`.
/// Returns (slots with -1 where unmapped, number unmapped).
#[pyfunction]
#[pyo3(signature = (block_table, row_len, positions, block_size, seq_ids=None, tokens_per_row=0))]
fn mem_slot_mapping<'py>(
    py: Python<'py>,
    block_table: PyReadonlyArray1<'py, i64>,
    row_len: usize,
    positions: PyReadonlyArray1<'py, i64>,
    block_size: u64,
    seq_ids: Option<PyReadonlyArray1<'py, i64>>,
    tokens_per_row: usize,
) -> PyResult<(Array<'py, i64>, u64)> {
    let t = slice("block_table", &block_table)?;
    let p = slice("positions", &positions)?;
    let rows = match &seq_ids {
        Some(ids) => Rows::Ids(slice("seq_ids", ids)?),
        None => Rows::Grid { tokens_per_row },
    };
    let out = output::<i64>(py, p.len());
    // SAFETY: `out` was just made by `output` and this is its only slice.
    let o = unsafe { writable(&out)? };
    let unmapped = interrupt::run_on_worker(py, "mem.slot_mapping", |cancel| {
        slot_mapping(t, row_len, rows, p, block_size, o, cancel)
    })?;
    Ok((out, unmapped))
}

/// Run the allocation simulator. Returns per request (status: 0 served, 1 rejected,
/// 2 preempted; data held, units allocated and largest free block seen at its arrival).
#[pyfunction]
#[pyo3(signature = (strategy, arrival, duration, initial, final_size, capacity, page_size=1, bound=1, check=false))]
#[allow(clippy::too_many_arguments)]
fn mem_simulate<'py>(
    py: Python<'py>,
    strategy: &str,
    arrival: PyReadonlyArray1<'py, f64>,
    duration: PyReadonlyArray1<'py, f64>,
    initial: PyReadonlyArray1<'py, u64>,
    final_size: PyReadonlyArray1<'py, u64>,
    capacity: u64,
    page_size: u64,
    bound: u64,
    check: bool,
) -> PyResult<SimArrays<'py>> {
    let r = Requests {
        arrival: slice("arrival", &arrival)?,
        duration: slice("duration", &duration)?,
        initial: slice("initial", &initial)?,
        final_size: slice("final_size", &final_size)?,
    };
    let mut s = AnyStrategy::new(strategy, capacity, r.arrival.len(), page_size, bound).py_err()?;
    let n = r.arrival.len();
    let (status, data, allocated, largest_free) =
        (output::<u8>(py, n), output::<u64>(py, n), output::<u64>(py, n), output::<u64>(py, n));
    // SAFETY: the four arrays were just made by `output`; each has this one slice.
    let out = unsafe {
        OutcomeMut {
            status: writable(&status)?,
            data: writable(&data)?,
            allocated: writable(&allocated)?,
            largest_free: writable(&largest_free)?,
        }
    };
    interrupt::run(py, "mem.simulate", |cancel| simulate_into(&mut s, &r, capacity, check, cancel, out))?;
    Ok((status, data, allocated, largest_free))
}
