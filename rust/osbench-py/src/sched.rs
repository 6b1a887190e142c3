//! Scheduling: one call runs the event loop of a policy over a workload's arrays.

use crate::arrays::{optional, slice};
use crate::errors::ToPyResult;
use crate::interrupt;
use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1};
use osbench_core::error::invalid;
use osbench_core::sched::{simulate, Params, POLICIES};
use pyo3::prelude::*;

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // The core's policy table: (name, the parameters it reads, whether it preempts) a row.
    m.add("SCHED_POLICIES", POLICIES.map(|p| (p.name, p.reads.to_vec(), p.preemptive)).to_vec())?;
    m.add_function(wrap_pyfunction!(sched_simulate, m)?)?;
    Ok(())
}

type SimOut<'py> = (Bound<'py, PyArray1<f64>>, Bound<'py, PyArray1<f64>>, u64, f64);

/// Run `policy` over the jobs. Returns (completion, first_start, switches, switch_time).
/// `predicted` and `priority` may be None; `levels=None` is unbounded, `boost=None` never.
/// The parameters have no defaults here: the public function's (`osbench.sched.simulate`) are
/// the ones, and the core checks them against its own (`Params::default`).
#[pyfunction]
#[pyo3(signature = (policy, arrival, size, predicted, priority, *, quantum, switch_cost, levels, boost, use_predictions, aging))]
#[allow(clippy::too_many_arguments)]
fn sched_simulate<'py>(
    py: Python<'py>,
    policy: &str,
    arrival: PyReadonlyArray1<'py, f64>,
    size: PyReadonlyArray1<'py, f64>,
    predicted: Option<PyReadonlyArray1<'py, f64>>,
    priority: Option<PyReadonlyArray1<'py, i64>>,
    quantum: f64,
    switch_cost: f64,
    levels: Option<u32>,
    boost: Option<f64>,
    use_predictions: bool,
    aging: f64,
) -> PyResult<SimOut<'py>> {
    let arrival = slice("arrival", &arrival)?;
    let size = slice("size", &size)?;
    let predicted = optional("predicted", &predicted)?.unwrap_or(&[]);
    let classes = optional("priority", &priority)?.unwrap_or(&[]);
    if levels == Some(0) {
        return Err(invalid("levels", 0, "a positive number of levels, or None for unbounded")).py_err();
    }
    let params = Params {
        quantum,
        switch_cost,
        levels: levels.unwrap_or(0),
        boost: boost.unwrap_or(f64::INFINITY),
        use_predictions,
        aging,
    };
    let out = interrupt::run(py, "sched.simulate", |cancel| {
        simulate(policy, arrival, size, predicted, classes, &params, cancel)
    })?;
    Ok((out.completion.into_pyarray(py), out.first_start.into_pyarray(py), out.switches, out.switch_time))
}
