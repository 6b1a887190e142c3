//! Core errors to Python exceptions, in one place.

use osbench_core::Error;
use pyo3::exceptions::{PyKeyboardInterrupt, PyOSError, PyValueError};
use pyo3::PyErr;

pub fn to_py(err: Error) -> PyErr {
    match err {
        Error::InvalidArgument { .. } => PyValueError::new_err(err.to_string()),
        Error::Os { .. } => PyOSError::new_err(err.to_string()),
        Error::Interrupted => PyKeyboardInterrupt::new_err("interrupted"),
    }
}

/// `?`-friendly conversion for core results.
pub trait IntoPy<T> {
    fn py_err(self) -> pyo3::PyResult<T>;
}

impl<T> IntoPy<T> for Result<T, Error> {
    fn py_err(self) -> pyo3::PyResult<T> {
        self.map_err(to_py)
    }
}
