//! Arrays in from Python, in one place: numpy arrays read as slices without a copy, optional
//! arrays, and 64-bit keys. What is refused is said as the project says it everywhere,
//! `name=value is not accepted: what is accepted`. Lengths and values are the core's to check.

use crate::errors::{ArgumentError, ArgumentTypeError};
use numpy::{Element, PyReadonlyArray1};
use pyo3::prelude::*;

/// The elements of a 1-D array, without a copy; a strided view is refused.
pub fn slice<'a, T: Element>(name: &str, a: &'a PyReadonlyArray1<'_, T>) -> PyResult<&'a [T]> {
    a.as_slice().map_err(|_| {
        ArgumentError::new_err(format!(
            "{name}=<a strided array> is not accepted: a C-contiguous 1-D array (numpy.ascontiguousarray makes one)"
        ))
    })
}

/// An optional array: its elements when given, None when not.
pub fn optional<'a, T: Element>(name: &str, a: &'a Option<PyReadonlyArray1<'_, T>>) -> PyResult<Option<&'a [T]>> {
    a.as_ref().map(|a| slice(name, a)).transpose()
}

/// Trace keys: an int64 or a uint64 array. A signed key is taken by its bit pattern, which is
/// one-to-one, so the core sees 64-bit patterns only and one dispatch serves both dtypes.
pub enum Keys<'py> {
    Signed(PyReadonlyArray1<'py, i64>),
    Unsigned(PyReadonlyArray1<'py, u64>),
}

impl<'py> Keys<'py> {
    /// The keys as 64-bit patterns, without a copy.
    pub fn bits(&self) -> PyResult<&[u64]> {
        match self {
            Keys::Signed(a) => slice("keys", a).map(bytemuck::cast_slice),
            Keys::Unsigned(a) => slice("keys", a),
        }
    }
}

impl<'a, 'py> FromPyObject<'a, 'py> for Keys<'py> {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        if let Ok(a) = obj.extract::<PyReadonlyArray1<'py, i64>>() {
            return Ok(Keys::Signed(a));
        }
        if let Ok(a) = obj.extract::<PyReadonlyArray1<'py, u64>>() {
            return Ok(Keys::Unsigned(a));
        }
        let what = match obj.getattr("dtype") {
            Ok(dtype) => format!("<an array of {}>", dtype.str()?),
            Err(_) => format!("<a {}>", obj.get_type().name()?),
        };
        Err(ArgumentTypeError::new_err(format!("keys={what} is not accepted: a 1-D numpy array of int64 or uint64")))
    }
}
