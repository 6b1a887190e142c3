//! Cache replacement: the policy table, dense-id mapping, replay, curves, SHARDS sampling, and
//! the online cache and stream classes. Each function converts its arguments and calls one
//! entry point of the core, which checks them and decides.

use crate::arrays::{optional, slice, Keys, OnlineKey};
use crate::errors::ToPyResult;
use crate::interrupt;
use crate::threads;
use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1};
use osbench_core::cache::{
    self, admission, keys, online, shards, stream, Accesses, Admission, Options, Value, FILTERS, TABLE,
};
use osbench_core::error::check_len;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt};
use std::sync::{Mutex, MutexGuard, TryLockError};

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("CACHE_POLICIES", policy_table(m.py())?)?;
    m.add("CACHE_ADMISSIONS", filter_table(m.py())?)?;
    m.add_function(wrap_pyfunction!(cache_admission_parameters, m)?)?;
    m.add_function(wrap_pyfunction!(dense_ids, m)?)?;
    m.add_function(wrap_pyfunction!(next_use, m)?)?;
    m.add_function(wrap_pyfunction!(cache_parameters, m)?)?;
    m.add_function(wrap_pyfunction!(cache_min_capacity, m)?)?;
    m.add_function(wrap_pyfunction!(cache_replay, m)?)?;
    m.add_function(wrap_pyfunction!(cache_curve, m)?)?;
    m.add_function(wrap_pyfunction!(cache_replay_grid, m)?)?;
    m.add_function(wrap_pyfunction!(cache_spatial_sample, m)?)?;
    m.add_function(wrap_pyfunction!(cache_lru_shards, m)?)?;
    m.add_class::<OnlineCache>()?;
    m.add_class::<CacheStream>()?;
    Ok(())
}

/// The core's policy table, one row (a dict) per policy, in the order users see them; each
/// parameter a dict of its name, kind ("flag", "int" or "real"), default, what it accepts (in
/// words) and doc.
fn policy_table(py: Python<'_>) -> PyResult<Vec<Bound<'_, PyDict>>> {
    let mut table = Vec::with_capacity(TABLE.len());
    for p in TABLE {
        let row = PyDict::new(py);
        row.set_item("name", p.name)?;
        row.set_item("min_capacity", p.min_capacity())?;
        row.set_item("offline", p.offline)?;
        row.set_item("takes_costs", p.takes_costs)?;
        row.set_item("reads", p.reads().collect::<Vec<_>>())?;
        row.set_item("params", params_table(py, p.params)?)?;
        row.set_item("libcachesim", p.libcachesim)?;
        row.set_item("randomised", p.randomised())?;
        row.set_item("hashes_keys", p.hashes_keys)?;
        table.push(row);
    }
    Ok(table)
}

/// Each parameter a dict of its name, kind, default, what it accepts (in words) and doc.
fn params_table<'py>(py: Python<'py>, declared: &[cache::Param]) -> PyResult<Vec<Bound<'py, PyDict>>> {
    let mut params = Vec::with_capacity(declared.len());
    for param in declared {
        let d = PyDict::new(py);
        d.set_item("name", param.name)?;
        d.set_item("kind", param.accepts.kind())?;
        d.set_item("default", value_to_py(py, param.default)?)?;
        d.set_item("accepts", param.accepts.describe())?;
        d.set_item("doc", param.doc)?;
        params.push(d);
    }
    Ok(params)
}

/// The core's table of admission filters, one row (a dict) per filter, in the order users see
/// them: name, params (as the policy table's), libcachesim (its admissioner class), seeded, doc.
fn filter_table(py: Python<'_>) -> PyResult<Vec<Bound<'_, PyDict>>> {
    let mut table = Vec::with_capacity(FILTERS.len());
    for f in FILTERS {
        let row = PyDict::new(py);
        row.set_item("name", f.name)?;
        row.set_item("params", params_table(py, f.params)?)?;
        row.set_item("libcachesim", f.libcachesim)?;
        row.set_item("seeded", f.seeded)?;
        row.set_item("doc", f.doc)?;
        table.push(row);
    }
    Ok(table)
}

/// The admission filter `name` (None: none) with `params` checked against its row.
fn admission(name: Option<&str>, params: Option<&Bound<'_, PyDict>>) -> PyResult<Option<Admission>> {
    let Some(name) = name else {
        if params.is_some_and(|d| !d.is_empty()) {
            return Err(crate::errors::ArgumentError::new_err(
                "admission_params is not accepted without admission: name the filter (admission=...)",
            ));
        }
        return Ok(None);
    };
    let given = values(params, |n| admission::parameter(n).map(|p| p.name))?;
    Ok(Some(Admission::new(name, &given).py_err()?))
}

/// The parameters of admission filter `name` resolved against its row (defaults filled in),
/// after checking them: what the reference engine's filter classes take.
#[pyfunction]
#[pyo3(signature = (name, params=None))]
fn cache_admission_parameters<'py>(
    py: Python<'py>,
    name: &str,
    params: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyDict>> {
    let a = admission(Some(name), params)?.ok_or_else(|| PyRuntimeError::new_err("no filter"))?;
    let out = PyDict::new(py);
    for (k, v) in a.options.iter() {
        out.set_item(k, value_to_py(py, v)?)?;
    }
    Ok(out)
}

fn value_to_py(py: Python<'_>, value: Value) -> PyResult<Bound<'_, PyAny>> {
    Ok(match value {
        Value::Flag(b) => PyBool::new(py, b).to_owned().into_any(),
        Value::Int(v) => v.into_pyobject(py)?.into_any(),
        Value::Real(v) => PyFloat::new(py, v).into_any(),
    })
}

/// Policy parameters from a dict of name -> bool, int or float (the core checks them against
/// the policy's row; Python refuses other types before).
fn options(params: Option<&Bound<'_, PyDict>>) -> PyResult<Options> {
    values(params, |n| cache::parameter(n).map(|p| p.name))
}

/// Parameter values from a dict, each name turned into the table's by `declared`.
fn values(
    params: Option<&Bound<'_, PyDict>>,
    declared: impl Fn(&str) -> osbench_core::error::Result<&'static str>,
) -> PyResult<Options> {
    let mut o = Options::new();
    for (key, value) in params.into_iter().flat_map(|d| d.iter()) {
        let name = declared(&key.extract::<String>()?).py_err()?;
        let value = if let Ok(b) = value.cast::<PyBool>() {
            Value::Flag(b.is_true())
        } else if value.is_instance_of::<PyInt>() {
            Value::Int(value.extract::<i128>().unwrap_or(i128::MAX))
        } else if let Ok(f) = value.cast::<PyFloat>() {
            Value::Real(f.value())
        } else {
            return Err(crate::errors::ArgumentTypeError::new_err(format!(
                "{name}={} is not accepted: a bool, an int or a float",
                value.repr()?
            )));
        };
        o.set(name, value).py_err()?;
    }
    Ok(o)
}

/// The parameters of `policy` resolved against its row (defaults filled in), after checking
/// them and each of `capacities` (argument `name`): what the reference engine's classes take.
#[pyfunction]
#[pyo3(signature = (policy, name, capacities, params=None))]
fn cache_parameters<'py>(
    py: Python<'py>,
    policy: &str,
    name: &str,
    capacities: Vec<u64>,
    params: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyDict>> {
    let info = cache::info(policy).py_err()?;
    let resolved = info.resolve(&options(params)?).py_err()?;
    let name = if name == "capacities" { "capacities" } else { "capacity" };
    for c in capacities {
        info.check_capacity(name, c, &resolved).py_err()?;
    }
    let out = PyDict::new(py);
    for (k, v) in resolved.iter() {
        out.set_item(k, value_to_py(py, v)?)?;
    }
    Ok(out)
}

/// The smallest capacity `policy` takes under `params` (checked; the defaults for the others).
#[pyfunction]
#[pyo3(signature = (policy, params=None))]
fn cache_min_capacity(policy: &str, params: Option<&Bound<'_, PyDict>>) -> PyResult<u64> {
    let info = cache::info(policy).py_err()?;
    let resolved = info.resolve(&options(params)?).py_err()?;
    Ok((info.min_capacity_for)(&resolved))
}

type U64Array<'py> = Bound<'py, PyArray1<u64>>;

/// Map 64-bit keys (an int64 or uint64 array) to dense ids in order of first appearance.
/// Returns (ids as uint32, number of distinct keys).
#[pyfunction]
fn dense_ids<'py>(py: Python<'py>, keys: Keys<'py>) -> PyResult<(Bound<'py, PyArray1<u32>>, usize)> {
    let keys = keys.bits()?;
    let (ids, n) = interrupt::run(py, "cache.dense_ids", |cancel| {
        let mut out = cache::filled_or_cancelled(keys.len(), 0u32, cancel)?;
        let n = keys::dense_ids(keys, &mut out, cancel)?;
        Ok((out, n))
    })?;
    Ok((ids.into_pyarray(py), n))
}

/// For each access, the index of the next access to the same id (2**64-1 = never).
#[pyfunction]
fn next_use<'py>(py: Python<'py>, ids: PyReadonlyArray1<'py, u32>, n_ids: usize) -> PyResult<U64Array<'py>> {
    let ids = slice("ids", &ids)?;
    let out = interrupt::run(py, "cache.next_use", |cancel| {
        let mut out = cache::filled_or_cancelled(ids.len(), 0u64, cancel)?;
        keys::next_use(ids, n_ids, &mut out, cancel)?;
        Ok(out)
    })?;
    Ok(out.into_pyarray(py))
}

/// A trace's arrays as the replay entry points take them, each checked (aligned, contiguous) in
/// the order their errors are reported: keys, ids, next uses, sizes, costs.
struct Trace<'a> {
    ids: &'a [u32],
    next: Option<&'a [u64]>,
    sizes: Option<&'a [u64]>,
    costs: Option<&'a [f64]>,
    keys: Option<&'a [u64]>,
}

impl<'a> Trace<'a> {
    fn new(
        ids: &'a PyReadonlyArray1<'_, u32>,
        next_use: &'a Option<PyReadonlyArray1<'_, u64>>,
        sizes: &'a Option<PyReadonlyArray1<'_, u64>>,
        costs: &'a Option<PyReadonlyArray1<'_, f64>>,
        keys: &'a Option<PyReadonlyArray1<'_, u64>>,
    ) -> PyResult<Self> {
        let keys = optional("keys", keys)?;
        Ok(Trace {
            ids: slice("ids", ids)?,
            next: optional("next_use", next_use)?,
            sizes: optional("sizes", sizes)?,
            costs: optional("costs", costs)?,
            keys,
        })
    }

    /// The accesses of `n_ids` dense ids (the core checks them), with the trace's keys if given.
    fn accesses(&self, n_ids: usize) -> osbench_core::error::Result<Accesses<'a>> {
        let accesses = Accesses::from_parts(self.ids, n_ids, self.sizes, self.costs, self.next)?;
        match self.keys {
            Some(keys) => accesses.with_keys(keys),
            None => Ok(accesses),
        }
    }
}

/// Replay dense ids through one policy. Returns (hits, per-access hit mask or None). `keys`:
/// the trace's own key of each id, for the policies that hash keys as libCacheSim does.
#[pyfunction]
#[pyo3(signature = (policy, ids, n_ids, capacity, next_use=None, mask=false, params=None, sizes=None, costs=None, admission=None, admission_params=None, keys=None))]
#[allow(clippy::too_many_arguments)]
fn cache_replay<'py>(
    py: Python<'py>,
    policy: &str,
    ids: PyReadonlyArray1<'py, u32>,
    n_ids: usize,
    capacity: u64,
    next_use: Option<PyReadonlyArray1<'py, u64>>,
    mask: bool,
    params: Option<&Bound<'py, PyDict>>,
    sizes: Option<PyReadonlyArray1<'py, u64>>,
    costs: Option<PyReadonlyArray1<'py, f64>>,
    admission: Option<&str>,
    admission_params: Option<&Bound<'py, PyDict>>,
    keys: Option<PyReadonlyArray1<'py, u64>>,
) -> PyResult<(u64, Option<Bound<'py, PyArray1<bool>>>)> {
    let options = options(params)?;
    let admission = self::admission(admission, admission_params)?;
    let trace = Trace::new(&ids, &next_use, &sizes, &costs, &keys)?;
    let (hits, flags) = interrupt::run(py, "cache.replay", |cancel| {
        let accesses = trace.accesses(n_ids)?;
        let mut flags = if mask { vec![false; trace.ids.len()] } else { Vec::new() };
        let hits =
            cache::replay_admitted(policy, capacity, &accesses, options, admission.as_ref(), &mut flags, cancel)?;
        Ok((hits, flags))
    })?;
    Ok((hits, mask.then(|| flags.into_pyarray(py))))
}

/// Hits at each capacity: one pass for LRU and OPT (stack distances), else one replay per
/// capacity on `threads` threads (default: every usable CPU).
#[pyfunction]
#[pyo3(signature = (policy, ids, n_ids, capacities, next_use=None, params=None, threads=None, sizes=None, costs=None, admission=None, admission_params=None, keys=None))]
#[allow(clippy::too_many_arguments)]
fn cache_curve<'py>(
    py: Python<'py>,
    policy: &str,
    ids: PyReadonlyArray1<'py, u32>,
    n_ids: usize,
    capacities: PyReadonlyArray1<'py, u64>,
    next_use: Option<PyReadonlyArray1<'py, u64>>,
    params: Option<&Bound<'py, PyDict>>,
    threads: Option<usize>,
    sizes: Option<PyReadonlyArray1<'py, u64>>,
    costs: Option<PyReadonlyArray1<'py, f64>>,
    admission: Option<&str>,
    admission_params: Option<&Bound<'py, PyDict>>,
    keys: Option<PyReadonlyArray1<'py, u64>>,
) -> PyResult<U64Array<'py>> {
    let options = options(params)?;
    let admission = self::admission(admission, admission_params)?;
    let trace = Trace::new(&ids, &next_use, &sizes, &costs, &keys)?;
    let caps = slice("capacities", &capacities)?;
    let threads = threads::threads(py, threads)?;
    let hits = interrupt::run_fanned(py, "cache.curve", threads.min(caps.len()), |cancel| {
        let accesses = trace.accesses(n_ids)?;
        cache::curve_admitted(policy, &accesses, caps, options, admission.as_ref(), threads, cancel)
    })?;
    Ok(hits.into_pyarray(py))
}

/// Hits of each (policies[i], capacities[i]) cell, each a fresh replay of the same dense ids,
/// on `threads` threads (default: every usable CPU); the same numbers as one replay per cell.
#[pyfunction]
#[pyo3(signature = (policies, capacities, ids, n_ids, next_use=None, params=None, threads=None, sizes=None, costs=None, admission=None, admission_params=None, keys=None))]
#[allow(clippy::too_many_arguments)]
fn cache_replay_grid<'py>(
    py: Python<'py>,
    policies: Vec<String>,
    capacities: PyReadonlyArray1<'py, u64>,
    ids: PyReadonlyArray1<'py, u32>,
    n_ids: usize,
    next_use: Option<PyReadonlyArray1<'py, u64>>,
    params: Option<&Bound<'py, PyDict>>,
    threads: Option<usize>,
    sizes: Option<PyReadonlyArray1<'py, u64>>,
    costs: Option<PyReadonlyArray1<'py, f64>>,
    admission: Option<&str>,
    admission_params: Option<&Bound<'py, PyDict>>,
    keys: Option<PyReadonlyArray1<'py, u64>>,
) -> PyResult<U64Array<'py>> {
    let options = options(params)?;
    let admission = self::admission(admission, admission_params)?;
    let trace = Trace::new(&ids, &next_use, &sizes, &costs, &keys)?;
    let caps = slice("capacities", &capacities)?;
    let threads = threads::threads(py, threads)?;
    let hits = interrupt::run_fanned(py, "cache.replay_grid", threads.min(caps.len()), |cancel| {
        check_len("capacities", caps.len(), policies.len(), "policy")?;
        let cells: Vec<(&str, u64)> = policies.iter().map(String::as_str).zip(caps.iter().copied()).collect();
        let accesses = trace.accesses(n_ids)?;
        cache::replay_grid_admitted(&cells, &accesses, options, admission.as_ref(), threads, cancel)
    })?;
    Ok(hits.into_pyarray(py))
}

/// SHARDS spatial sampling: one flag per access, True when its key is in the sample at `rate`.
#[pyfunction]
#[pyo3(signature = (keys, rate, seed=0))]
fn cache_spatial_sample<'py>(
    py: Python<'py>,
    keys: Keys<'py>,
    rate: f64,
    seed: u64,
) -> PyResult<Bound<'py, PyArray1<bool>>> {
    let keys = keys.bits()?;
    let mask = interrupt::run(py, "cache.spatial_sample", |cancel| {
        let mut mask = vec![false; keys.len()];
        shards::spatial_mask(keys, rate, seed, &mut mask, cancel)?;
        Ok(mask)
    })?;
    Ok(mask.into_pyarray(py))
}

/// One SHARDS pass for LRU: the sampled keys (uint64 bit patterns, trace order) and the exact
/// LRU hits of the whole trace at capacities 1..=exact_depth (a bounded stack in the same pass).
#[pyfunction]
#[pyo3(signature = (keys, rate, seed=0, exact_depth=0))]
fn cache_lru_shards<'py>(
    py: Python<'py>,
    keys: Keys<'py>,
    rate: f64,
    seed: u64,
    exact_depth: usize,
) -> PyResult<(U64Array<'py>, U64Array<'py>)> {
    let keys = keys.bits()?;
    let result =
        interrupt::run(py, "cache.lru_shards", |cancel| shards::lru_shards(keys, rate, seed, exact_depth, cancel))?;
    Ok((result.kept.into_pyarray(py), result.exact_hits.into_pyarray(py)))
}

/// An online cache over integer keys in [-2**63, 2**64). With `sizes`, capacity counts bytes
/// and each access gives the object's size; with `costs`, each access gives its cost.
#[pyclass(module = "osbench._native")]
pub struct OnlineCache {
    cache: online::Online,
    #[pyo3(get)]
    capacity: u64,
    #[pyo3(get)]
    name: String,
    #[pyo3(get)]
    sizes: bool,
    #[pyo3(get)]
    costs: bool,
}

#[pymethods]
impl OnlineCache {
    #[new]
    #[pyo3(signature = (policy, capacity, params=None, sizes=false, costs=false, admission=None, admission_params=None))]
    fn new(
        policy: &str,
        capacity: u64,
        params: Option<&Bound<'_, PyDict>>,
        sizes: bool,
        costs: bool,
        admission: Option<&str>,
        admission_params: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let admission = self::admission(admission, admission_params)?;
        let cache =
            online::Online::admitted(policy, capacity, options(params)?, admission.as_ref(), sizes, costs).py_err()?;
        Ok(OnlineCache { cache, capacity, name: policy.to_string(), sizes, costs })
    }

    /// Access `key`; True on a hit. A miss inserts it. `size` is given exactly when the cache
    /// was made with sizes, `cost` exactly when it was made with costs. An access that sets
    /// off an admission filter's long work (AdaptSize's reconfiguration) does it first with
    /// the GIL released, stopped by Ctrl-C.
    #[pyo3(signature = (key, size=None, cost=None))]
    fn access(&mut self, py: Python<'_>, key: OnlineKey, size: Option<u64>, cost: Option<f64>) -> PyResult<bool> {
        if self.cache.long_work_next() {
            let cache = &mut self.cache;
            interrupt::run(py, "cache.access", |cancel| cache.prepare(cancel))?;
        }
        self.cache.access(key.0, size, cost).py_err()
    }

    /// Bytes held (with sizes), else the number of objects held.
    #[getter]
    fn used(&self) -> u64 {
        self.cache.used()
    }

    fn __contains__(&self, key: OnlineKey) -> bool {
        self.cache.contains(key.0)
    }

    fn __len__(&self) -> usize {
        self.cache.len()
    }
}

/// A replay fed chunk by chunk: keeps the key map and the policy between chunks, so a trace
/// larger than memory replays in pieces with exactly the hits of one replay of the whole.
/// Chunks go in one at a time: a `feed` while another thread's `feed` runs is refused (the
/// order of the chunks is the trace), never blocked, so no thread waits holding the GIL.
#[pyclass(module = "osbench._native", frozen)]
pub struct CacheStream {
    state: Mutex<StreamState>,
    #[pyo3(get)]
    capacity: u64,
    #[pyo3(get)]
    name: String,
}

struct StreamState {
    stream: stream::Stream,
    /// Set when a feed failed or was interrupted midway: the state is then partial.
    broken: bool,
}

impl CacheStream {
    /// The stream's state, or the error that says another thread is feeding it.
    fn state(&self) -> PyResult<MutexGuard<'_, StreamState>> {
        match self.state.try_lock() {
            Ok(state) => Ok(state),
            // A feed that panicked is reported as a bug where it happened; its stream is partial.
            Err(TryLockError::Poisoned(poisoned)) => {
                let mut state = poisoned.into_inner();
                state.broken = true;
                Ok(state)
            }
            Err(TryLockError::WouldBlock) => Err(PyRuntimeError::new_err(
                "this CacheStream is being fed by another thread: a stream takes its chunks one at a time, \
                 in trace order (feed it from one thread, or give each thread its own stream)",
            )),
        }
    }
}

#[pymethods]
impl CacheStream {
    #[new]
    #[pyo3(signature = (policy, capacity, params=None, admission=None, admission_params=None))]
    fn new(
        policy: &str,
        capacity: u64,
        params: Option<&Bound<'_, PyDict>>,
        admission: Option<&str>,
        admission_params: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let admission = self::admission(admission, admission_params)?;
        let stream = stream::Stream::admitted(policy, capacity, options(params)?, admission.as_ref()).py_err()?;
        Ok(CacheStream { state: Mutex::new(StreamState { stream, broken: false }), capacity, name: policy.to_string() })
    }

    /// Replay the next chunk of keys (int64 or uint64; keys are taken by their 64-bit pattern).
    /// `next_access` (int64, one per key, negative = never) is required by offline policies.
    /// Returns the chunk's hits.
    #[pyo3(signature = (keys, next_access=None, sizes=None))]
    fn feed<'py>(
        &self,
        py: Python<'py>,
        keys: Keys<'py>,
        next_access: Option<PyReadonlyArray1<'py, i64>>,
        sizes: Option<PyReadonlyArray1<'py, u64>>,
    ) -> PyResult<u64> {
        let mut state = self.state()?;
        state.usable()?;
        let (keys, next, sizes) = (keys.bits()?, optional("next_access", &next_access)?, optional("sizes", &sizes)?);
        let stream = &mut state.stream;
        let result = interrupt::run(py, "cache.stream", |cancel| stream.feed(keys, next, sizes, cancel));
        state.broken = result.is_err();
        result
    }

    /// The end of the trace: an offline policy's next uses must all have come true.
    fn finish(&self) -> PyResult<()> {
        let state = self.state()?;
        state.usable()?;
        state.stream.finish().py_err()
    }

    #[getter]
    fn accesses(&self) -> PyResult<u64> {
        Ok(self.state()?.stream.accesses())
    }
    #[getter]
    fn hits(&self) -> PyResult<u64> {
        Ok(self.state()?.stream.hits())
    }
    #[getter]
    fn n_distinct(&self) -> PyResult<usize> {
        Ok(self.state()?.stream.n_distinct())
    }
    #[getter]
    fn needs_future(&self) -> PyResult<bool> {
        Ok(self.state()?.stream.needs_future())
    }
    /// The access (counted from the start) whose next use or size was refused, or None.
    #[getter]
    fn bad_access(&self) -> PyResult<Option<u64>> {
        Ok(self.state()?.stream.bad_access())
    }
    /// Bytes held by the stream's key map.
    #[getter]
    fn key_map_bytes(&self) -> PyResult<usize> {
        Ok(self.state()?.stream.key_map_bytes())
    }
}

impl StreamState {
    fn usable(&self) -> PyResult<()> {
        if self.broken {
            return Err(crate::errors::ArgumentError::new_err(
                "this stream was interrupted or failed midway; its state is partial: start a new one",
            ));
        }
        Ok(())
    }
}
