//! Cache replacement: dense-id mapping, replay, curves, and the online cache class.

use crate::errors::IntoPy;
use crate::interrupt;
use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1};
use osbench_core::cache::{curve, keys, shards, stream, AnyPolicy, Options, NEVER, POLICIES, SIZED_POLICIES};
use osbench_core::error::invalid;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
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
    m.add_class::<OnlineCache>()?;
    m.add_class::<CacheStream>()?;
    Ok(())
}

fn slice<'a, T: numpy::Element>(name: &str, a: &'a PyReadonlyArray1<'_, T>) -> PyResult<&'a [T]> {
    a.as_slice().map_err(|_| PyValueError::new_err(format!("{name} must be a C-contiguous 1-D array")))
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
        return Err(PyTypeError::new_err("keys must be a 1-D numpy array of int64 or uint64"));
    };
    Ok((ids.into_pyarray(py), n))
}

/// For each access, the index of the next access to the same id (2**64-1 = never).
#[pyfunction]
fn next_use<'py>(py: Python<'py>, ids: PyReadonlyArray1<'py, u32>, n_ids: usize) -> PyResult<Bound<'py, PyArray1<u64>>> {
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
#[pyo3(signature = (policy, ids, n_ids, capacity, next_use=None, mask=false, bit_on_insert=false, sizes=None))]
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
) -> PyResult<(u64, Option<Bound<'py, PyArray1<bool>>>)> {
    let ids = slice("ids", &ids)?;
    let sizes = match &sizes {
        Some(a) => Some(slice("sizes", a)?),
        None => None,
    };
    let next = match &next_use {
        Some(a) => slice("next_use", a)?,
        None => &[][..],
    };
    let mut policy = AnyPolicy::new(policy, capacity, n_ids, Options { bit_on_insert }).py_err()?;
    if policy.needs_future() && next.len() != ids.len() {
        return Err(PyValueError::new_err("next_use is required by offline policies and must have one entry per access"));
    }
    let (hits, flags) = interrupt::run_sized(py, ids.len(), |cancel| {
        check_ids(ids, n_ids)?;
        let mut flags = if mask { vec![false; ids.len()] } else { Vec::new() };
        let hits = curve::replay_cancellable(&mut policy, ids, sizes.unwrap_or(&[]), next, &mut flags, cancel)?;
        Ok((hits, flags))
    })?;
    Ok((hits, if mask { Some(flags.into_pyarray(py)) } else { None }))
}

/// Hits at each capacity: one pass for LRU and OPT (stack distances), else one replay per
/// capacity on `threads` threads (default: every available core).
#[pyfunction]
#[pyo3(signature = (policy, ids, n_ids, capacities, next_use=None, bit_on_insert=false, threads=None, sizes=None))]
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
) -> PyResult<Bound<'py, PyArray1<u64>>> {
    let ids = slice("ids", &ids)?;
    let sizes = match &sizes {
        Some(a) => Some(slice("sizes", a)?),
        None => None,
    };
    let caps = slice("capacities", &capacities)?;
    let next = match &next_use {
        Some(a) => slice("next_use", a)?,
        None => &[][..],
    };
    if policy == "opt" && next.len() != ids.len() {
        return Err(PyValueError::new_err("next_use is required by offline policies and must have one entry per access"));
    }
    let threads = threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let work = ids.len().saturating_mul(caps.len());
    let hits = interrupt::run_sized(py, work, |cancel| {
        check_ids(ids, n_ids)?;
        match sizes {
            Some(s) => {
                AnyPolicy::new(policy, u64::MAX, 0, Options { bit_on_insert })?;
                curve::curve_sized(policy, ids, n_ids, s, next, caps, Options { bit_on_insert }, threads, cancel)
            }
            None => curve::curve(policy, ids, n_ids, next, caps, Options { bit_on_insert }, threads, cancel),
        }
    })?;
    Ok(hits.into_pyarray(py))
}

/// SHARDS spatial sampling: one flag per access, True when its key is in the sample at `rate`.
#[pyfunction]
#[pyo3(signature = (keys, rate, seed=0))]
fn cache_spatial_sample<'py>(py: Python<'py>, keys: &Bound<'py, PyAny>, rate: f64, seed: u64) -> PyResult<Bound<'py, PyArray1<bool>>> {
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
        return Err(PyTypeError::new_err("keys must be a 1-D numpy array of int64 or uint64"));
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
        return Err(PyTypeError::new_err("keys must be a 1-D numpy array of int64 or uint64"));
    };
    Ok((result.kept.into_pyarray(py), result.exact_hits.into_pyarray(py)))
}

/// An online cache over Python integer keys (any value in [-2**63, 2**64)).
#[pyclass(module = "osbench._native")]
pub struct OnlineCache {
    policy: AnyPolicy,
    ids: HashMap<i128, u32>,
    #[pyo3(get)]
    capacity: u64,
    #[pyo3(get)]
    name: String,
}

#[pymethods]
impl OnlineCache {
    #[new]
    #[pyo3(signature = (policy, capacity, bit_on_insert=false))]
    fn new(policy: &str, capacity: u64, bit_on_insert: bool) -> PyResult<Self> {
        let built = AnyPolicy::new(policy, capacity, 0, Options { bit_on_insert }).py_err()?;
        if built.needs_future() {
            return Err(PyValueError::new_err(format!(
                "policy={policy:?} needs the future (each access's next use), so it has no online form; use replay()"
            )));
        }
        Ok(OnlineCache { policy: built, ids: HashMap::new(), capacity, name: policy.to_string() })
    }

    /// Access `key`; True on a hit. A miss inserts it.
    fn access(&mut self, key: i128) -> PyResult<bool> {
        if !(i128::from(i64::MIN)..=i128::from(u64::MAX)).contains(&key) {
            return Err(PyValueError::new_err(format!("key={key} is outside [-2**63, 2**64)")));
        }
        let next_id = self.ids.len();
        if next_id >= keys::MAX_IDS {
            return Err(PyValueError::new_err("the online cache has seen 2**32 - 2 distinct keys, its limit"));
        }
        let id = *self.ids.entry(key).or_insert(next_id as u32);
        Ok(self.policy.access(id, NEVER))
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
            return Err(PyValueError::new_err("this stream was interrupted or failed midway; its state is partial: start a new one"));
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
            return Err(PyTypeError::new_err("keys must be a 1-D numpy array of int64 or uint64"));
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
