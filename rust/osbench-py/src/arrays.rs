//! Arrays in from Python, in one place: numpy arrays read as slices without a copy, optional
//! arrays, 64-bit keys, and signed 64-bit integers from any sequence ([`Int64s`]). What is refused is said as the project says it everywhere,
//! `name=value is not accepted: what is accepted`. Lengths and values are the core's to check.

use crate::errors::{ArgumentError, ArgumentTypeError};
use numpy::{
    Element, PyArray1, PyArrayDescrMethods, PyArrayMethods, PyReadonlyArray1, PyUntypedArray, PyUntypedArrayMethods,
};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyList, PyString, PyTuple};

/// The elements of a 1-D array, without a copy; a strided or misaligned view is refused,
/// saying which (the Python layer hands over arrays that are neither).
pub fn slice<'a, T: Element>(name: &str, a: &'a PyReadonlyArray1<'_, T>) -> PyResult<&'a [T]> {
    a.as_slice().map_err(|_| {
        let what = if a.is_contiguous() { "a misaligned array" } else { "a strided array" };
        ArgumentError::new_err(format!(
            "{name}=<{what}> is not accepted: an aligned, C-contiguous 1-D array \
             (numpy.require(a, requirements='CA') makes one)"
        ))
    })
}

/// An optional array: its elements when given, None when not.
pub fn optional<'a, T: Element>(name: &str, a: &'a Option<PyReadonlyArray1<'_, T>>) -> PyResult<Option<&'a [T]>> {
    a.as_ref().map(|a| slice(name, a)).transpose()
}

/// Trace keys: an int64 or a uint64 array, read in place, or any other sequence of ints in
/// [-2**63, 2**63) read by [`Int64s`] (lists, tuples, buffers). A signed key is taken by its bit
/// pattern, which is one-to-one, so the core sees 64-bit patterns only and one dispatch serves
/// every form.
pub enum Keys<'py> {
    Signed(PyReadonlyArray1<'py, i64>),
    Unsigned(PyReadonlyArray1<'py, u64>),
    Owned(Vec<u64>),
}

impl<'py> Keys<'py> {
    /// The keys as 64-bit patterns, without a copy.
    pub fn bits(&self) -> PyResult<&[u64]> {
        match self {
            Keys::Signed(a) => slice("keys", a).map(bytemuck::cast_slice),
            Keys::Unsigned(a) => slice("keys", a),
            Keys::Owned(v) => Ok(v),
        }
    }
}

impl<'a, 'py> FromPyObject<'a, 'py> for Keys<'py> {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        // A view that cannot be read in place (strided, misaligned) is read from a copy.
        if let Ok(a) = obj.extract::<PyReadonlyArray1<'py, i64>>() {
            return Ok(Keys::Signed(if a.as_slice().is_ok() { a } else { copied(&obj)?.extract()? }));
        }
        if let Ok(a) = obj.extract::<PyReadonlyArray1<'py, u64>>() {
            return Ok(Keys::Unsigned(if a.as_slice().is_ok() { a } else { copied(&obj)?.extract()? }));
        }
        // Arrays of other dtypes are refused as such (the Python layer converts those it accepts).
        if obj.getattr("dtype").is_err() {
            match Int64s::extract(&obj)? {
                Some(Int64s::Owned(v)) => return Ok(Keys::Owned(v.into_iter().map(|k| k as u64).collect())),
                Some(Int64s::Array(a)) => return Ok(Keys::Signed(a)),
                None => {}
            }
        }
        let what = match obj.getattr("dtype") {
            Ok(dtype) => format!("<an array of {}>", dtype.str()?),
            Err(_) => format!("<a {}>", obj.get_type().name()?),
        };
        Err(ArgumentTypeError::new_err(format!(
            "keys={what} is not accepted: a 1-D numpy array of int64 or uint64, or a sequence of ints in [-2**63, 2**63)"
        )))
    }
}

/// The key of an online access: a Python integer (or anything with `__index__`, numpy's ints),
/// kept whole (the core takes [-2**63, 2**64) and says so); a bool or a non-integer is refused.
pub struct OnlineKey(pub i128);

impl<'a, 'py> FromPyObject<'a, 'py> for OnlineKey {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        if obj.is_instance_of::<PyBool>() {
            return Err(ArgumentTypeError::new_err(format!(
                "key={} is not accepted: a bool is no key (True would be the key 1)",
                obj.repr()?
            )));
        }
        obj.extract::<i128>().map(OnlineKey).map_err(|_| match obj.repr() {
            Ok(what) if obj.getattr("__index__").is_err() => ArgumentTypeError::new_err(format!(
                "key={what} is not accepted: the native engine takes integer keys (the reference engine any hashable)"
            )),
            Ok(what) => ArgumentError::new_err(format!("key={what} is not accepted: an integer in [-2**63, 2**64)")),
            Err(e) => e,
        })
    }
}

/// Signed 64-bit integers from any Python sequence of ints, by one path:
/// - a C-contiguous int64 numpy array is read in place;
/// - a list or tuple is read item by item, an exact `int` straight from the C API (no iterator,
///   no temporary objects), anything else through `__index__` (numpy scalars, `bool`);
/// - anything else (`array('q')`, `memoryview`, numpy arrays of other integer dtypes, `range`,
///   other sequences) through `numpy.asarray`, then as int64 when every value fits.
///
/// `Ok(None)` when `obj` is not a 1-D sequence of integers in [-2**63, 2**63): the caller
/// words the refusal, as it knows what the integers are (tokens, keys).
pub enum Int64s<'py> {
    Array(PyReadonlyArray1<'py, i64>),
    Owned(Vec<i64>),
}

impl<'py> Int64s<'py> {
    pub fn extract(obj: &Bound<'py, PyAny>) -> PyResult<Option<Int64s<'py>>> {
        if obj.is_instance_of::<PyList>() {
            return Ok(from_items(obj, ffi::PyList_GetItem));
        }
        if obj.is_instance_of::<PyTuple>() {
            return Ok(from_items(obj, ffi::PyTuple_GetItem));
        }
        if obj.is_instance_of::<PyString>() || obj.is_instance_of::<PyBytes>() {
            return Ok(None);
        }
        let a = match obj.cast::<PyArray1<i64>>() {
            Ok(a) => a.clone(),
            Err(_) => match as_int64_array(obj)? {
                Some(a) => a,
                None => return Ok(None),
            },
        };
        let a = a.readonly();
        Ok(Some(Int64s::Array(if a.as_slice().is_ok() { a } else { copied(a.as_any())?.extract()? })))
    }

    pub fn as_slice(&self) -> &[i64] {
        match self {
            Int64s::Array(a) => a.as_slice().unwrap_or(&[]),
            Int64s::Owned(v) => v,
        }
    }
}

/// A fresh copy of a numpy array (`a.copy()`: contiguous and aligned), for a view that cannot be
/// read in place; its elements are never read through the view itself, which may be misaligned.
fn copied<'py>(a: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    a.call_method0("copy")
}

/// The items of a list or tuple (`get` is PyList_GetItem or PyTuple_GetItem) as i64, or None
/// at the first one that is not an int in range.
fn from_items<'py>(
    seq: &Bound<'py, PyAny>,
    get: unsafe extern "C" fn(*mut ffi::PyObject, ffi::Py_ssize_t) -> *mut ffi::PyObject,
) -> Option<Int64s<'py>> {
    let (py, n) = (seq.py(), seq.len().ok()?);
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        // SAFETY: `seq` is a live list or tuple and `get` its own accessor, which checks the index
        // (a list can shrink under an item's `__index__`: a missing item is a refusal) and returns
        // a borrowed reference. An exact int is read at once, running no Python code, so nothing
        // can free it meanwhile; any other item is held (`to_owned`) before Python code runs.
        let value = unsafe {
            let p = get(seq.as_ptr(), i as ffi::Py_ssize_t);
            if p.is_null() {
                PyErr::take(py);
                return None;
            }
            if ffi::PyLong_CheckExact(p) != 0 {
                let v = ffi::PyLong_AsLongLong(p);
                // -1 is also a value; an overflow sets an error, taken (cleared) here.
                if v == -1 && PyErr::take(py).is_some() {
                    return None;
                }
                v
            } else {
                Borrowed::from_ptr(py, p).to_owned().extract::<i64>().ok()?
            }
        };
        out.push(value);
    }
    Some(Int64s::Owned(out))
}

/// `numpy.asarray(obj)` as a 1-D int64 array when it holds integers that all fit, else None.
fn as_int64_array<'py>(obj: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyArray1<i64>>>> {
    let np = obj.py().import("numpy")?;
    let Ok(a) = np.call_method1("asarray", (obj,)) else { return Ok(None) };
    let a = a.cast_into::<PyUntypedArray>()?;
    if a.ndim() != 1 || !matches!(a.dtype().kind(), b'i' | b'u') {
        return Ok(None);
    }
    if let Ok(u) = a.cast::<PyArray1<u64>>() {
        if u.readonly().as_array().iter().any(|&v| v > i64::MAX as u64) {
            return Ok(None);
        }
    }
    let a = np.call_method1("ascontiguousarray", (a, np.getattr("int64")?))?;
    Ok(Some(a.cast_into::<PyArray1<i64>>()?))
}
