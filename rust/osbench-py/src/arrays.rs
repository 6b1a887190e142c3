//! Arrays in from Python, in one place: numpy arrays read as slices without a copy, and
//! optional arrays. What is refused is said as the project says it everywhere,
//! `name=value is not accepted: what is accepted`. Lengths and values are the core's to check.

use crate::errors::ArgumentError;
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
