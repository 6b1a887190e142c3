//! Cache replacement: dense-id mapping, replay, curves, and the online cache class.

use crate::errors::ToPyResult;
use crate::errors::{ArgumentError, ArgumentTypeError};
use crate::interrupt;
use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1};
use osbench_core::cache::{curve, keys, shards, stream, AnyPolicy, Options, NEVER, POLICIES, SIZED_POLICIES};
use osbench_core::error::invalid;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt};
use std::collections::HashMap;

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("CACHE_POLICIES", POLICIES.to_vec())?;
    m.add("CACHE_SIZED_POLICIES", SIZED_POLICIES.to_vec())?;
    m.add_function(wrap_pyfunction!(dense_ids, m)?)?;
    m.add_function(wrap_pyfunction!(next_use, m)?)?;
    m.add_function(wrap_pyfunction!(cache_replay, m)?)?;
    m.add_function(wrap_pyfunction!(cache_curve, m)?)?;
    m.add_function(wrap_pyfunction!(cache_spatial_sample, m)?)?;
    m.add_function(wrap_pyfunction!(cache_lru_shards, m)?)?;
    m.add_function(wrap_pyfunction!(cache_online_args, m)?)?;
    m.add_class::<OnlineCache>()?;
    m.add_class::<CacheStream>()?;
    Ok(())
}

fn slice<'a, T: numpy::Element>(name: &str, a: &'a PyReadonlyArray1<'_, T>) -> PyResult<&'a [T]> {
    a.as_slice().map_err(|_| ArgumentError::new_err(format!("{name} must be a C-contiguous 1-D array")))
}

/// An optional per-access array (`n` entries when given) as a slice, empty when not given.
fn optional_slice<'a, T: numpy::Element>(
    name: &str,
    a: &'a Option<PyReadonlyArray1<'_, T>>,
    n: usize,
) -> PyResult<&'a [T]> {
    match a {
        Some(a) => {
            let s = slice(name, a)?;
            if s.len() != n {
                return Err(ArgumentError::new_err(format!(
                    "{name} has {} entries: it must have one per access ({n})",
                    s.len()
                )));
            }
            Ok(s)
        }
        None => Ok(&[]),
    }
}

fn dense<K: keys::Key>(py: Python<'_>, keys: &[K]) -> PyResult<(Vec<u32>, usize)> {
    interrupt::run_sized(py, keys.len(), |_| {
        let mut out = vec![0u32; keys.len()];
        let n = keys::dense_ids(keys, &mut out)?;
        Ok((out, n))
    })
}

/// Map 64-bit keys (an int64 or uint64 array) to dense ids in order of first appearance.
/// Returns (ids as uint32, number of distinct keys).
#[pyfunction]
fn dense_ids<'py>(py: Python<'py>, keys: &Bound<'py, PyAny>) -> PyResult<(Bound<'py, PyArray1<u32>>, usize)> {
    let (ids, n) = if let Ok(a) = keys.extract::<PyReadonlyArray1<'py, i64>>() {
        dense(py, slice("keys", &a)?)?
    } else if let Ok(a) = keys.extract::<PyReadonlyArray1<'py, u64>>() {
        dense(py, slice("keys", &a)?)?
    } else {
        return Err(ArgumentTypeError::new_err("keys must be a 1-D numpy array of int64 or uint64"));
    };
    Ok((ids.into_pyarray(py), n))
}

/// For each access, the index of the next access to the same id (2**64-1 = never).
#[pyfunction]
fn next_use<'py>(
    py: Python<'py>,
    ids: PyReadonlyArray1<'py, u32>,
    n_ids: usize,
) -> PyResult<Bound<'py, PyArray1<u64>>> {
    let ids = slice("ids", &ids)?;
    let out = interrupt::run_sized(py, ids.len(), |_| {
        let mut out = vec![0u64; ids.len()];
        keys::next_use(ids, n_ids, &mut out)?;
        Ok(out)
    })?;
    Ok(out.into_pyarray(py))
}

fn check_ids(ids: &[u32], n_ids: usize) -> osbench_core::Result<()> {
    match ids.iter().copied().max() {
        Some(m) if m as usize >= n_ids => Err(invalid("ids", m, format!("ids below n_ids={n_ids}"))),
        _ => Ok(()),
    }
}

/// Replay dense ids through one policy. Returns (hits, per-access hit mask or None).
#[pyfunction]
#[pyo3(signature = (policy, ids, n_ids, capacity, next_use=None, mask=false, bit_on_insert=false, sizes=None, costs=None))]
#[allow(clippy::too_many_arguments)]
fn cache_replay<'py>(
    py: Python<'py>,
    policy: &str,
    ids: PyReadonlyArray1<'py, u32>,
    n_ids: usize,
    capacity: u64,
    next_use: Option<PyReadonlyArray1<'py, u64>>,
    mask: bool,
    bit_on_insert: bool,
    sizes: Option<PyReadonlyArray1<'py, u64>>,
    costs: Option<PyReadonlyArray1<'py, f64>>,
) -> PyResult<(u64, Option<Bound<'py, PyArray1<bool>>>)> {
    let ids = slice("ids", &ids)?;
    let sizes = optional_slice("sizes", &sizes, ids.len())?;
    let costs = optional_slice("costs", &costs, ids.len())?;
    let next = match &next_use {
        Some(a) => slice("next_use", a)?,
        None => &[][..],
    };
    let mut policy = AnyPolicy::new(policy, capacity, n_ids, Options { bit_on_insert }).py_err()?;
    if policy.needs_future() && next.len() != ids.len() {
        return Err(ArgumentError::new_err(
            "next_use is required by offline policies and must have one entry per access",
        ));
    }
    let (hits, flags) = interrupt::run_sized(py, ids.len(), |cancel| {
        check_ids(ids, n_ids)?;
        let mut flags = if mask { vec![false; ids.len()] } else { Vec::new() };
        let hits = curve::replay_cancellable(&mut policy, ids, sizes, costs, next, &mut flags, cancel)?;
        Ok((hits, flags))
    })?;
    Ok((hits, if mask { Some(flags.into_pyarray(py)) } else { None }))
}

/// Hits at each capacity: one pass for LRU and OPT (stack distances), else one replay per
/// capacity on `threads` threads (default: every available core).
#[pyfunction]
#[pyo3(signature = (policy, ids, n_ids, capacities, next_use=None, bit_on_insert=false, threads=None, sizes=None, costs=None))]
#[allow(clippy::too_many_arguments)]
fn cache_curve<'py>(
    py: Python<'py>,
    policy: &str,
    ids: PyReadonlyArray1<'py, u32>,
    n_ids: usize,
    capacities: PyReadonlyArray1<'py, u64>,
    next_use: Option<PyReadonlyArray1<'py, u64>>,
    bit_on_insert: bool,
    threads: Option<usize>,
    sizes: Option<PyReadonlyArray1<'py, u64>>,
    costs: Option<PyReadonlyArray1<'py, f64>>,
) -> PyResult<Bound<'py, PyArray1<u64>>> {
    let ids = slice("ids", &ids)?;
    let sizes = optional_slice("sizes", &sizes, ids.len())?;
    let costs = optional_slice("costs", &costs, ids.len())?;
    let caps = slice("capacities", &capacities)?;
    let next = match &next_use {
        Some(a) => slice("next_use", a)?,
        None => &[][..],
    };
    if policy == "opt" && next.len() != ids.len() {
        return Err(ArgumentError::new_err(
            "next_use is required by offline policies and must have one entry per access",
        ));
    }
    let threads = threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let work = ids.len().saturating_mul(caps.len());
    let hits = interrupt::run_sized(py, work, |cancel| {
        check_ids(ids, n_ids)?;
        let options = Options { bit_on_insert };
        if !costs.is_empty() {
            // Checks the name, and that the policy takes costs, before any work.
            if !AnyPolicy::new(policy, u64::MAX, 0, options)?.takes_costs() {
                return Err(invalid("costs", "given", "costs are taken by gdsf only"));
            }
            curve::curve_costed(policy, ids, n_ids, sizes, costs, caps, options, threads, cancel)
        } else if !sizes.is_empty() {
            AnyPolicy::new(policy, u64::MAX, 0, options)?;
            curve::curve_sized(policy, ids, n_ids, sizes, next, caps, options, threads, cancel)
        } else {
            curve::curve(policy, ids, n_ids, next, caps, options, threads, cancel)
        }
    })?;
    Ok(hits.into_pyarray(py))
}

/// SHARDS spatial sampling: one flag per access, True when its key is in the sample at `rate`.
#[pyfunction]
#[pyo3(signature = (keys, rate, seed=0))]
fn cache_spatial_sample<'py>(
    py: Python<'py>,
    keys: &Bound<'py, PyAny>,
    rate: f64,
    seed: u64,
) -> PyResult<Bound<'py, PyArray1<bool>>> {
    fn run<K: keys::Key>(py: Python<'_>, keys: &[K], rate: f64, seed: u64) -> PyResult<Vec<bool>> {
        interrupt::run_sized(py, keys.len(), |_| {
            let mut mask = vec![false; keys.len()];
            shards::spatial_mask(keys, rate, seed, &mut mask)?;
            Ok(mask)
        })
    }
    let mask = if let Ok(a) = keys.extract::<PyReadonlyArray1<'py, i64>>() {
        run(py, slice("keys", &a)?, rate, seed)?
    } else if let Ok(a) = keys.extract::<PyReadonlyArray1<'py, u64>>() {
        run(py, slice("keys", &a)?, rate, seed)?
    } else {
        return Err(ArgumentTypeError::new_err("keys must be a 1-D numpy array of int64 or uint64"));
    };
    Ok(mask.into_pyarray(py))
}

type U64Array<'py> = Bound<'py, PyArray1<u64>>;

/// One SHARDS pass for LRU: the sampled keys (uint64 bit patterns, trace order) and the exact
/// LRU hits of the whole trace at capacities 1..=exact_depth (a bounded stack in the same pass).
#[pyfunction]
#[pyo3(signature = (keys, rate, seed=0, exact_depth=0))]
fn cache_lru_shards<'py>(
    py: Python<'py>,
    keys: &Bound<'py, PyAny>,
    rate: f64,
    seed: u64,
    exact_depth: usize,
) -> PyResult<(U64Array<'py>, U64Array<'py>)> {
    let result = if let Ok(a) = keys.extract::<PyReadonlyArray1<'py, i64>>() {
        let k = slice("keys", &a)?;
        interrupt::run(py, |cancel| shards::lru_shards(k, rate, seed, exact_depth, cancel))?
    } else if let Ok(a) = keys.extract::<PyReadonlyArray1<'py, u64>>() {
        let k = slice("keys", &a)?;
        interrupt::run(py, |cancel| shards::lru_shards(k, rate, seed, exact_depth, cancel))?
    } else {
        return Err(ArgumentTypeError::new_err("keys must be a 1-D numpy array of int64 or uint64"));
    };
    Ok((result.kept.into_pyarray(py), result.exact_hits.into_pyarray(py)))
}

/// An online cache over Python integer keys (any value in [-2**63, 2**64)). With `sizes`,
/// capacity counts bytes and each access gives the object's size; with `costs` (gdsf), each
/// access gives the object's cost.
#[pyclass(module = "osbench._native")]
pub struct OnlineCache {
    policy: AnyPolicy,
    ids: HashMap<i128, u32>,
    #[pyo3(get)]
    capacity: u64,
    #[pyo3(get)]
    name: String,
    #[pyo3(get)]
    sizes: bool,
    #[pyo3(get)]
    costs: bool,
}

// The per-access argument checks of online caches. The reference engine's online adapter
// (osbench.cache._ReferenceOnline) calls them too, so both engines fail the same way.

/// Check one online access's `size` and `cost` for a cache made with `sizes` and `costs`:
/// (size, cost), each None where the cache takes none.
#[pyfunction]
#[pyo3(signature = (size, cost, sizes, costs))]
fn cache_online_args(
    size: Option<&Bound<'_, PyAny>>,
    cost: Option<&Bound<'_, PyAny>>,
    sizes: bool,
    costs: bool,
) -> PyResult<(Option<u64>, Option<f64>)> {
    Ok((size_arg(size, sizes)?, cost_arg(cost, costs)?))
}

/// The `size` argument of one access: required in a cache made with sizes, refused otherwise.
fn size_arg(size: Option<&Bound<'_, PyAny>>, sized: bool) -> PyResult<Option<u64>> {
    let Some(size) = size else {
        return if sized {
            Err(ArgumentTypeError::new_err(
                "size is required: this cache counts bytes (made with sizes=True), so call access(key, size)",
            ))
        } else {
            Ok(None)
        };
    };
    let shown = size.repr()?;
    if !sized {
        return Err(ArgumentTypeError::new_err(format!(
            "size={shown} is not accepted: this cache counts objects; make it with sizes=True to give sizes"
        )));
    }
    if size.is_instance_of::<PyBool>() {
        return Err(ArgumentTypeError::new_err(format!("size={shown} is not accepted: it must be a positive integer")));
    }
    match size.extract::<u64>() {
        Ok(v) if v > 0 => Ok(Some(v)),
        // An integer, but 0, negative or too large.
        Ok(_) => Err(ArgumentError::new_err(format!(
            "size={shown} is not accepted: it must be a positive integer up to {}",
            u64::MAX
        ))),
        Err(e) if e.is_instance_of::<pyo3::exceptions::PyOverflowError>(size.py()) => Err(ArgumentError::new_err(
            format!("size={shown} is not accepted: it must be a positive integer up to {}", u64::MAX),
        )),
        Err(_) => {
            Err(ArgumentTypeError::new_err(format!("size={shown} is not accepted: it must be a positive integer")))
        }
    }
}

/// The `cost` argument of one access: a finite positive real number, required in a cache made
/// with costs, refused otherwise.
fn cost_arg(cost: Option<&Bound<'_, PyAny>>, costed: bool) -> PyResult<Option<f64>> {
    let Some(cost) = cost else {
        return if costed {
            Err(ArgumentTypeError::new_err(
                "cost is required: this cache was made with costs=True, so call access(key, cost=...)",
            ))
        } else {
            Ok(None)
        };
    };
    let py = cost.py();
    if !costed {
        return Err(ArgumentTypeError::new_err(format!(
            "cost={} is not accepted: this cache takes no costs; make a gdsf cache with costs=True to give costs",
            cost.repr()?
        )));
    }
    // Fast paths for float and int; anything else must be a numbers.Real, as in Python.
    let value = if let Ok(f) = cost.cast::<PyFloat>() {
        Some(f.value())
    } else if cost.is_instance_of::<PyBool>() {
        None
    } else if cost.is_instance_of::<PyInt>() || cost.is_instance(&py.import("numbers")?.getattr("Real")?)? {
        // An int too large for a float counts as infinite, refused below.
        Some(cost.extract::<f64>().unwrap_or(f64::INFINITY))
    } else {
        None
    };
    match value {
        Some(v) if v.is_finite() && v > 0.0 => Ok(Some(v)),
        Some(_) => Err(ArgumentError::new_err(format!(
            "cost={} is not accepted: it must be a finite positive number",
            cost.repr()?
        ))),
        None => Err(ArgumentTypeError::new_err(format!(
            "cost={} is not accepted: it must be a positive number",
            cost.repr()?
        ))),
    }
}

#[pymethods]
impl OnlineCache {
    #[new]
    #[pyo3(signature = (policy, capacity, bit_on_insert=false, sizes=false, costs=false))]
    fn new(policy: &str, capacity: u64, bit_on_insert: bool, sizes: bool, costs: bool) -> PyResult<Self> {
        let built = AnyPolicy::new(policy, capacity, 0, Options { bit_on_insert }).py_err()?;
        if built.needs_future() {
            return Err(ArgumentError::new_err(format!(
                "policy={policy:?} needs the future (each access's next use), so it has no online form; use replay()"
            )));
        }
        if costs && !built.takes_costs() {
            return Err(ArgumentError::new_err(format!(
                "costs=True is not accepted for policy={policy:?}: only gdsf takes costs"
            )));
        }
        Ok(OnlineCache { policy: built, ids: HashMap::new(), capacity, name: policy.to_string(), sizes, costs })
    }

    /// Access `key`; True on a hit. A miss inserts it. `size` (bytes) is required when the
    /// cache was made with sizes, `cost` when it was made with costs; both are kept from
    /// the access that brings the object in.
    #[pyo3(signature = (key, size=None, cost=None))]
    fn access(
        &mut self,
        key: i128,
        size: Option<&Bound<'_, PyAny>>,
        cost: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<bool> {
        if !(i128::from(i64::MIN)..=i128::from(u64::MAX)).contains(&key) {
            return Err(ArgumentError::new_err(format!("key={key} is outside [-2**63, 2**64)")));
        }
        let (size, cost) = cache_online_args(size, cost, self.sizes, self.costs)?;
        let next_id = self.ids.len();
        if next_id >= keys::MAX_IDS {
            return Err(ArgumentError::new_err("the online cache has seen 2**32 - 2 distinct keys, its limit"));
        }
        let id = *self.ids.entry(key).or_insert(next_id as u32);
        Ok(match (size, cost) {
            (_, Some(cost)) => self.policy.access_costed(id, size, cost).py_err()?,
            (Some(size), None) => self.policy.access_sized(id, size, NEVER),
            (None, None) => self.policy.access(id, NEVER),
        })
    }

    /// Bytes held (with sizes), else the number of objects held.
    #[getter]
    fn used(&self) -> u64 {
        if self.sizes {
            self.policy.used_bytes()
        } else {
            self.policy.len() as u64
        }
    }

    fn __contains__(&self, key: i128) -> bool {
        self.ids.get(&key).is_some_and(|&id| self.policy.contains(id))
    }

    fn __len__(&self) -> usize {
        self.policy.len()
    }
}

/// A replay fed chunk by chunk: keeps the key map and the policy between chunks, so a trace
/// larger than memory replays in pieces with exactly the hits of one replay of the whole.
#[pyclass(module = "osbench._native")]
pub struct CacheStream {
    stream: stream::Stream,
    /// Set when a feed failed or was interrupted midway: the state is then partial.
    broken: bool,
    #[pyo3(get)]
    capacity: u64,
    #[pyo3(get)]
    name: String,
}

#[pymethods]
impl CacheStream {
    #[new]
    #[pyo3(signature = (policy, capacity, bit_on_insert=false))]
    fn new(policy: &str, capacity: u64, bit_on_insert: bool) -> PyResult<Self> {
        let stream = stream::Stream::new(policy, capacity, Options { bit_on_insert }).py_err()?;
        Ok(CacheStream { stream, broken: false, capacity, name: policy.to_string() })
    }

    /// Replay the next chunk of keys (int64 or uint64; keys are taken by their 64-bit pattern).
    /// `next_access` (int64, one per key, negative = never) is required by offline policies.
    /// Returns the chunk's hits.
    #[pyo3(signature = (keys, next_access=None, sizes=None))]
    fn feed<'py>(
        &mut self,
        py: Python<'py>,
        keys: &Bound<'py, PyAny>,
        next_access: Option<PyReadonlyArray1<'py, i64>>,
        sizes: Option<PyReadonlyArray1<'py, u64>>,
    ) -> PyResult<u64> {
        if self.broken {
            return Err(ArgumentError::new_err(
                "this stream was interrupted or failed midway; its state is partial: start a new one",
            ));
        }
        let next = match &next_access {
            Some(a) => slice("next_access", a)?,
            None => &[][..],
        };
        let sizes = match &sizes {
            Some(a) => slice("sizes", a)?,
            None => &[][..],
        };
        let stream = &mut self.stream;
        let result = if let Ok(a) = keys.extract::<PyReadonlyArray1<'py, i64>>() {
            let k = slice("keys", &a)?;
            interrupt::run(py, |cancel| stream.feed(k, next, sizes, cancel))
        } else if let Ok(a) = keys.extract::<PyReadonlyArray1<'py, u64>>() {
            let k = slice("keys", &a)?;
            interrupt::run(py, |cancel| stream.feed(k, next, sizes, cancel))
        } else {
            return Err(ArgumentTypeError::new_err("keys must be a 1-D numpy array of int64 or uint64"));
        };
        if result.is_err() {
            self.broken = true;
        }
        result
    }

    #[getter]
    fn accesses(&self) -> u64 {
        self.stream.accesses()
    }
    #[getter]
    fn hits(&self) -> u64 {
        self.stream.hits()
    }
    #[getter]
    fn n_distinct(&self) -> usize {
        self.stream.n_distinct()
    }
    #[getter]
    fn needs_future(&self) -> bool {
        self.stream.needs_future()
    }
}
