//! The measured step time: its tables converted once, then many steps evaluated in the core
//! (`osbench.serve.measured.seconds`, bit-equal).

use crate::arrays::slice;
use crate::errors::ToPyResult;
use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1};
use osbench_core::serve::step_time_measured::{Attention, Grid, Measured};
use osbench_core::serve::{Batch, StepTime};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::sync::Arc;

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<MeasuredTables>()?;
    m.add_function(wrap_pyfunction!(serve_step_seconds, m)?)?;
    Ok(())
}

/// The seconds of each step (the `Batch` fields as arrays, by name) under the step-time model
/// `StepTime.spec()` gives (linear, roofline, corrected), as the engine computes them.
#[pyfunction]
#[pyo3(signature = (step_kind, step_coefficients, **columns))]
fn serve_step_seconds<'py>(
    py: Python<'py>,
    step_kind: &str,
    step_coefficients: Vec<f64>,
    columns: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let step_time = StepTime::new(step_kind, &step_coefficients).py_err()?;
    let steps = batches(columns)?;
    let out: Vec<f64> = steps.iter().map(|b| step_time.duration(b)).collect::<Result<_, _>>().py_err()?;
    Ok(out.into_pyarray(py))
}

/// The `Batch` fields, as the step columns name them (`measured.py: STEP_COLUMNS`).
const BATCH_FIELDS: [&str; 6] =
    ["num_seqs", "prefill_seqs", "prefill_tokens", "decode_seqs", "context_tokens", "attention_pairs"];

/// The steps described by the `Batch` fields as columns given by name (all of one length,
/// counts >= 0), and no other column.
fn batches(columns: Option<&Bound<'_, PyDict>>) -> PyResult<Vec<Batch>> {
    let bad = |what: String| crate::errors::ArgumentError::new_err(what);
    let Some(columns) = columns else {
        return Err(bad(format!("the step columns are not accepted: give {}", BATCH_FIELDS.join(", "))));
    };
    for key in columns.keys() {
        let key: String = key.extract()?;
        if !BATCH_FIELDS.contains(&key.as_str()) {
            return Err(bad(format!("{key} is not accepted: the step columns are {}", BATCH_FIELDS.join(", "))));
        }
    }
    let mut arrays = Vec::with_capacity(6);
    for name in BATCH_FIELDS {
        let a = columns.get_item(name)?.ok_or_else(|| bad(format!("{name} is missing: give it as an int64 array")))?;
        arrays.push(a.extract::<PyReadonlyArray1<'_, i64>>()?);
    }
    let n = slice(BATCH_FIELDS[0], &arrays[0])?.len();
    let mut c: Vec<&[i64]> = Vec::with_capacity(6);
    for (name, a) in BATCH_FIELDS.iter().zip(&arrays) {
        c.push(counts(name, a, n)?);
    }
    Ok((0..n)
        .map(|j| Batch {
            num_seqs: c[0][j] as u64,
            prefill_seqs: c[1][j] as u64,
            prefill_tokens: c[2][j] as u64,
            decode_seqs: c[3][j] as u64,
            context_tokens: c[4][j] as u64,
            attention_pairs: c[5][j] as u64,
        })
        .collect())
}

fn counts<'a>(name: &str, a: &'a PyReadonlyArray1<'_, i64>, n: usize) -> PyResult<&'a [i64]> {
    let s = slice(name, a)?;
    if s.len() != n || s.iter().any(|&v| v < 0) {
        return Err(crate::errors::ArgumentError::new_err(format!(
            "{name} is not accepted: it must hold {n} counts >= 0, like num_seqs"
        )));
    }
    Ok(s)
}

/// One kind of attention layer as `MeasuredTables.native` passes it: its window (0: full), then
/// the context grid's rows, columns and values and the generation grid's.
type AttentionArrays<'py> = (
    u64,
    PyReadonlyArray1<'py, f64>,
    PyReadonlyArray1<'py, f64>,
    PyReadonlyArray1<'py, f64>,
    PyReadonlyArray1<'py, f64>,
    PyReadonlyArray1<'py, f64>,
    PyReadonlyArray1<'py, f64>,
);

/// A measured step time's tables (`measured.py: MeasuredTables.native`), checked and converted
/// once into the core; the native engine and [`MeasuredTables::seconds`] share them.
#[pyclass(frozen, name = "MeasuredTables", module = "osbench._native")]
pub struct MeasuredTables {
    pub inner: Arc<Measured>,
}

#[pymethods]
impl MeasuredTables {
    #[new]
    #[pyo3(signature = (host_step, tokens, seqs, attention))]
    fn new(
        host_step: f64,
        tokens: PyReadonlyArray1<'_, f64>,
        seqs: PyReadonlyArray1<'_, f64>,
        attention: Vec<AttentionArrays<'_>>,
    ) -> PyResult<Self> {
        let grid = |name, r: &PyReadonlyArray1<f64>, c: &PyReadonlyArray1<f64>, v: &PyReadonlyArray1<f64>| {
            Grid::new(name, slice(name, r)?.to_vec(), slice(name, c)?.to_vec(), slice(name, v)?.to_vec()).py_err()
        };
        let mut kinds = Vec::with_capacity(attention.len());
        for (window, cr, cc, cv, gr, gc, gv) in &attention {
            kinds.push(Attention {
                window: *window,
                context: grid("context", cr, cc, cv)?,
                generation: grid("generation", gr, gc, gv)?,
            });
        }
        let measured =
            Measured::new(host_step, slice("tokens", &tokens)?.to_vec(), slice("seqs", &seqs)?.to_vec(), kinds)
                .py_err()?;
        Ok(MeasuredTables { inner: Arc::new(measured) })
    }

    /// The seconds of each step described by the arrays: the `Batch` fields, and the prefill
    /// chunks `(chunk_new[i], chunk_context[i])` of step `j` at `chunk_offsets[j]..chunk_offsets[j + 1]`.
    #[pyo3(signature = (*, chunk_offsets, chunk_new, chunk_context, **columns))]
    fn seconds<'py>(
        &self,
        py: Python<'py>,
        chunk_offsets: PyReadonlyArray1<'py, i64>,
        chunk_new: PyReadonlyArray1<'py, i64>,
        chunk_context: PyReadonlyArray1<'py, i64>,
        columns: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let steps = batches(columns)?;
        let offsets = counts("chunk_offsets", &chunk_offsets, steps.len() + 1)?;
        let n_chunks = slice("chunk_new", &chunk_new)?.len();
        let new = counts("chunk_new", &chunk_new, n_chunks)?;
        let cached = counts("chunk_context", &chunk_context, n_chunks)?;
        if offsets[0] != 0 || offsets.windows(2).any(|w| w[0] > w[1]) || offsets[steps.len()] as usize != n_chunks {
            return Err(crate::errors::ArgumentError::new_err(format!(
                "chunk_offsets is not accepted: it must rise from 0 to {n_chunks} (the chunks given)"
            )));
        }
        let mut chunks = Vec::new();
        let mut out = Vec::with_capacity(steps.len());
        for (j, b) in steps.iter().enumerate() {
            let (lo, hi) = (offsets[j] as usize, offsets[j + 1] as usize);
            chunks.clear();
            chunks.extend((lo..hi).map(|i| (new[i] as u64, cached[i] as u64)));
            if b.decode_seqs + b.prefill_seqs != b.num_seqs {
                return Err(crate::errors::ArgumentError::new_err(format!(
                    "step {j} is not accepted: num_seqs={} must be prefill_seqs + decode_seqs",
                    b.num_seqs
                )));
            }
            out.push(self.inner.seconds(b, &chunks).py_err()?);
        }
        Ok(out.into_pyarray(py))
    }
}

/// The engine's step time from `StepTime.spec()`, and for `kind="measured"` its tables
/// (`step_tables`, required then and refused otherwise).
pub fn step_time(kind: &str, coefficients: &[f64], tables: Option<&MeasuredTables>) -> PyResult<StepTime> {
    match (kind, tables) {
        ("measured", Some(t)) => Ok(StepTime::Measured(Arc::clone(&t.inner))),
        ("measured", None) => Err(crate::errors::ArgumentError::new_err(
            "step_tables=None is not accepted: a measured step time comes with its tables (StepTime.measured)",
        )),
        (_, Some(_)) => Err(crate::errors::ArgumentError::new_err(format!(
            "step_tables is not accepted with step_kind={kind:?}: only a measured step time has tables"
        ))),
        (_, None) => StepTime::new(kind, coefficients).py_err(),
    }
}
