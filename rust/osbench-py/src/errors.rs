//! Core errors to Python exceptions, in one place.
//!
//! A refused argument raises osbench's own `ArgumentError` (a `ValueError`) or
//! `ArgumentTypeError` (a `TypeError`), defined in `osbench/errors.py`, so Python code and the
//! command line tell a refused input from a bug the same way for both engines.

use osbench_core::Error;
use pyo3::exceptions::{PyKeyboardInterrupt, PyMemoryError, PyOSError, PyRuntimeError};
use pyo3::PyErr;

pyo3::import_exception!(osbench.errors, ArgumentError);
pyo3::import_exception!(osbench.errors, ArgumentTypeError);

pub fn to_py(err: Error) -> PyErr {
    match err {
        Error::InvalidArgument { .. } => ArgumentError::new_err(err.to_string()),
        Error::Os { .. } => PyOSError::new_err(err.to_string()),
        Error::Interrupted => PyKeyboardInterrupt::new_err("interrupted"),
        Error::OutOfMemory { .. } => PyMemoryError::new_err(err.to_string()),
        Error::Internal { .. } => PyRuntimeError::new_err(err.to_string()),
    }
}

/// `?`-friendly conversion of core results: `result.py_err()?`.
pub trait ToPyResult<T> {
    fn py_err(self) -> pyo3::PyResult<T>;
}

impl<T> ToPyResult<T> for Result<T, Error> {
    fn py_err(self) -> pyo3::PyResult<T> {
        self.map_err(to_py)
    }
}
