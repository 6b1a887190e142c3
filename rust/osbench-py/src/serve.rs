//! The serving engine: one call runs the engine over the requests' arrays and returns the
//! run's arrays (`osbench.serve.run.EngineRun`'s fields) by name.

use crate::arrays::{self, slice};
use crate::errors::ToPyResult;
use crate::interrupt;
use crate::step_time::MeasuredTables;
use numpy::{IntoPyArray, PyArrayMethods, PyReadonlyArray1};

use osbench_core::serve::fields::{Column, FieldSource, Fields};
use osbench_core::serve::routers::{prefix_aware, Spec, ROUTERS};
use osbench_core::serve::sglang::Config as SglangConfig;
use osbench_core::serve::{
    disagg, simulate, simulate_cluster, simulate_disaggregated, simulate_sglang, Config, Options, Record, Requests,
    Run, StepTime, TierSettings, ENGINES, LINKS, MEDIA, POLICIES, PREEMPTIONS,
};
use pyo3::prelude::*;
use pyo3::types::PyDict;

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("SERVE_POLICIES", POLICIES.to_vec())?;
    m.add("SERVE_PREEMPTIONS", PREEMPTIONS.to_vec())?;
    // The host links of preemption by swap: (name, bytes per second each way, source) a row.
    let links: Vec<_> = LINKS.iter().map(|l| (l.name, l.bandwidth, l.source)).collect();
    m.add("SERVE_LINKS", links)?;
    // The KV tiers' media: (name, bytes per second, seconds a load, source) a row.
    let media: Vec<_> = MEDIA.iter().map(|m| (m.name, m.bandwidth, m.latency, m.source)).collect();
    m.add("SERVE_TIER_MEDIA", media)?;
    // The core's table of engine semantics: (name, the release it follows, its policies, its
    // configuration's fields, the engines that run it) a row.
    let engines: Vec<_> = ENGINES
        .iter()
        .map(|e| (e.name, e.follows, e.policies.to_vec(), e.config_fields.to_vec(), e.engines.to_vec()))
        .collect();
    m.add("SERVE_ENGINES", engines)?;
    // The columns of a run (`EngineRun`'s fields, `Steps`' for `steps`) and of its record
    // (`StepRecord`'s), declared once in the core.
    m.add("SERVE_RUN_COLUMNS", Run::COLUMNS.to_vec())?;
    m.add("SERVE_RECORD_COLUMNS", Record::COLUMNS.to_vec())?;
    m.add_function(wrap_pyfunction!(serve_simulate, m)?)?;
    m.add_function(wrap_pyfunction!(serve_simulate_sglang, m)?)?;
    m.add("SERVE_ROUTERS", ROUTERS.to_vec())?;
    m.add_function(wrap_pyfunction!(serve_simulate_cluster, m)?)?;
    m.add_function(wrap_pyfunction!(serve_simulate_disaggregated, m)?)?;
    Ok(())
}

/// The request arrays both serving entry points take, as Python gave them.
struct RequestArrays<'py> {
    arrival: PyReadonlyArray1<'py, f64>,
    prompt_len: PyReadonlyArray1<'py, i64>,
    output_len: PyReadonlyArray1<'py, i64>,
    priority: Option<PyReadonlyArray1<'py, i64>>,
    predicted: Option<PyReadonlyArray1<'py, i64>>,
    keys: Option<PyReadonlyArray1<'py, u64>>,
    key_offsets: Option<PyReadonlyArray1<'py, i64>>,
}

impl RequestArrays<'_> {
    /// The core's view of them (an optional array absent is empty).
    fn view(&self) -> PyResult<Requests<'_>> {
        Ok(Requests {
            arrival: slice("arrival", &self.arrival)?,
            prompt_len: slice("prompt_len", &self.prompt_len)?,
            output_len: slice("output_len", &self.output_len)?,
            priority: optional("priority", &self.priority)?,
            predicted: optional("predicted", &self.predicted)?,
            keys: optional("keys", &self.keys)?,
            key_offsets: optional("key_offsets", &self.key_offsets)?,
        })
    }
}

/// An optional array as a slice, empty when not given.
fn optional<'a, T: numpy::Element>(name: &str, a: &'a Option<PyReadonlyArray1<'_, T>>) -> PyResult<&'a [T]> {
    Ok(arrays::optional(name, a)?.unwrap_or(&[]))
}

/// A settings dict holding exactly the fields of a core declaration ([`Fields::NAMES`]: the
/// Python configuration class's, which checked them), read by name ([`FieldSource`]).
struct SettingsDict<'a, 'py>(&'a Bound<'py, PyDict>);

impl<'a, 'py> SettingsDict<'a, 'py> {
    /// `T`'s settings from `dict`; a key `T` does not declare is refused.
    fn read<T: Fields>(dict: &'a Bound<'py, PyDict>) -> PyResult<T> {
        for key in dict.keys() {
            let key = key.extract::<String>()?;
            if !T::NAMES.contains(&key.as_str()) {
                return Err(crate::errors::ArgumentTypeError::new_err(format!(
                    "settings[{key:?}] is not accepted: the settings are {}",
                    T::NAMES.join(", ")
                )));
            }
        }
        T::read(&SettingsDict(dict))
    }

    fn item(&self, name: &str) -> PyResult<Bound<'py, PyAny>> {
        self.0.get_item(name)?.ok_or_else(|| {
            crate::errors::ArgumentError::new_err(format!("settings is not accepted: it has no {name:?}"))
        })
    }
}

/// Each getter below extracts the dict's item as its type.
macro_rules! extract {
    ($($getter:ident: $ty:ty),* $(,)?) => {
        $(fn $getter(&self, name: &'static str) -> PyResult<$ty> {
            self.item(name)?.extract()
        })*
    };
}

impl FieldSource for SettingsDict<'_, '_> {
    type Error = PyErr;

    extract! {
        u64: u64,
        i64: i64,
        f64: f64,
        bool: bool,
        string: String,
        optional_u64: Option<u64>,
        optional_f64: Option<f64>,
    }

    /// `KvTier`s with their medium's figures filled in.
    fn tiers(&self, name: &'static str) -> PyResult<Vec<TierSettings>> {
        let mut tiers = Vec::new();
        for tier in self.item(name)?.try_iter()? {
            let tier = tier?;
            let field = |name: &str| tier.getattr(name);
            tiers.push(TierSettings {
                gib: field("gib")?.extract()?,
                policy: field("policy")?.extract()?,
                bandwidth: field("bandwidth")?.extract()?,
                latency: field("latency")?.extract()?,
                costs: field("costs")?.extract()?,
            });
        }
        Ok(tiers)
    }

    /// Python's random.seed(int) reads the int's 32-bit words, least significant first.
    fn words(&self, name: &'static str) -> PyResult<Vec<u32>> {
        let seed = self.item(name)?;
        let bits: usize = seed.call_method0("bit_length")?.extract()?;
        let bytes: Vec<u8> = seed.call_method1("to_bytes", (bits.div_ceil(32).max(1) * 4, "little"))?.extract()?;
        Ok(bytes.chunks(4).map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]])).collect())
    }
}

/// What every entry point sets up for each pool of engines: its configuration (its settings
/// dict read, then checked by `config`) and its step time (`StepTime.spec()`, with the tables
/// of a measured one).
fn engine<T: Fields, C>(
    settings: &Bound<'_, PyDict>,
    config: impl FnOnce(T) -> osbench_core::Result<C>,
    step_kind: &str,
    step_coefficients: &[f64],
    step_tables: Option<&MeasuredTables>,
) -> PyResult<(C, StepTime)> {
    let config = config(SettingsDict::read(settings)?).py_err()?;
    Ok((config, crate::step_time::step_time(step_kind, step_coefficients, step_tables)?))
}

/// Serve the requests. `keys` and `key_offsets`: the prompts' block keys
/// (`Requests.prompt_block_keys(block_size)`), used with prefix caching; None for prompts
/// without content (every block unique). `settings`: the
/// configuration's fields by name (`SERVE_ENGINES`' row for vLLM). `step_time`:
/// `StepTime.spec()`, a kind and its coefficients. Returns (the per-request and per-step
/// arrays by name, the step records by name or None, the steps the decode jump took).
/// `concurrency`: at most that many requests in flight (closed-loop clients), or None.
/// `predicted`: the predicted output lengths (`sjf`, `srpt`), or None for the true ones.
/// `steps`: keep the per-step rows (false: their arrays come back empty).
#[pyfunction]
#[pyo3(signature = (
    arrival, prompt_len, output_len, priority, keys, key_offsets, *,
    settings, step_kind, step_coefficients,
    record=false, jump=true, step_tables=None, concurrency=None, predicted=None, steps=true,
))]
#[allow(clippy::too_many_arguments)]
fn serve_simulate<'py>(
    py: Python<'py>,
    arrival: PyReadonlyArray1<'py, f64>,
    prompt_len: PyReadonlyArray1<'py, i64>,
    output_len: PyReadonlyArray1<'py, i64>,
    priority: Option<PyReadonlyArray1<'py, i64>>,
    keys: Option<PyReadonlyArray1<'py, u64>>,
    key_offsets: Option<PyReadonlyArray1<'py, i64>>,
    settings: Bound<'py, PyDict>,
    step_kind: &str,
    step_coefficients: Vec<f64>,
    record: bool,
    jump: bool,
    step_tables: Option<PyRef<'py, MeasuredTables>>,
    concurrency: Option<usize>,
    predicted: Option<PyReadonlyArray1<'py, i64>>,
    steps: bool,
) -> PyResult<(Bound<'py, PyDict>, Option<Bound<'py, PyDict>>, u64)> {
    let requests = RequestArrays { arrival, prompt_len, output_len, priority, predicted, keys, key_offsets };
    let requests = requests.view()?;
    let (config, step_time) = engine(&settings, Config::new, step_kind, &step_coefficients, step_tables.as_deref())?;
    let options = Options { record, jump, concurrency, steps };
    let run = interrupt::run(py, "serve.simulate", |cancel| simulate(&requests, &config, &step_time, options, cancel))?;
    to_python(py, run)
}

/// Serve the requests on `replicas` engines behind the router `router` (a name of
/// `SERVE_ROUTERS`, with `seed` for `random` and the `prefix-aware` parameters), as
/// `osbench.serve.replicas.drive_replicas` does; the other arguments are `serve_simulate`'s,
/// and `router_keys`, `router_key_offsets` the prompts' block keys at `router_block_size`
/// (`prefix-aware` only). Returns (the replica of each request, the loads the router saw as
/// one flat row-major array, and per replica what `serve_simulate` returns for its run).
/// `predicted`: as `serve_simulate` takes it.
#[pyfunction]
#[pyo3(signature = (
    arrival, prompt_len, output_len, priority, keys, key_offsets, *,
    settings, step_kind, step_coefficients, replicas, router,
    seed=0, cache_threshold=0.3, balance_abs_threshold=64, balance_rel_threshold=1.5,
    router_block_size=16, router_keys=None, router_key_offsets=None,
    record=false, jump=true, step_tables=None, concurrency=None, predicted=None,
))]
#[allow(clippy::too_many_arguments)]
fn serve_simulate_cluster<'py>(
    py: Python<'py>,
    arrival: PyReadonlyArray1<'py, f64>,
    prompt_len: PyReadonlyArray1<'py, i64>,
    output_len: PyReadonlyArray1<'py, i64>,
    priority: Option<PyReadonlyArray1<'py, i64>>,
    keys: Option<PyReadonlyArray1<'py, u64>>,
    key_offsets: Option<PyReadonlyArray1<'py, i64>>,
    settings: Bound<'py, PyDict>,
    step_kind: &str,
    step_coefficients: Vec<f64>,
    replicas: usize,
    router: &str,
    seed: u64,
    cache_threshold: f64,
    balance_abs_threshold: u64,
    balance_rel_threshold: f64,
    router_block_size: u64,
    router_keys: Option<PyReadonlyArray1<'py, u64>>,
    router_key_offsets: Option<PyReadonlyArray1<'py, i64>>,
    record: bool,
    jump: bool,
    step_tables: Option<PyRef<'py, MeasuredTables>>,
    concurrency: Option<usize>,
    predicted: Option<PyReadonlyArray1<'py, i64>>,
) -> PyResult<ClusterOut<'py>> {
    let requests = RequestArrays { arrival, prompt_len, output_len, priority, predicted, keys, key_offsets };
    let requests = requests.view()?;
    let (config, step_time) = engine(&settings, Config::new, step_kind, &step_coefficients, step_tables.as_deref())?;
    let params = prefix_aware::Params {
        cache_threshold,
        balance_abs_threshold,
        balance_rel_threshold,
        block_size: router_block_size,
    };
    let spec = Spec::new(router, seed, params).py_err()?;
    let (rk, ro) = (optional("router_keys", &router_keys)?, optional("router_key_offsets", &router_key_offsets)?);
    let options = Options { record, jump, concurrency, steps: true };
    let run = interrupt::run(py, "serve.simulate_cluster", |cancel| {
        simulate_cluster(&requests, &config, &step_time, options, replicas, &spec, rk, ro, cancel)
    })?;
    let runs = run.runs.into_iter().map(|r| to_python(py, r)).collect::<PyResult<Vec<_>>>()?;
    Ok((run.replica.into_pyarray(py), run.load.into_pyarray(py), runs))
}

/// A pool's router as Python gives it: (name, seed, cache_threshold, balance_abs_threshold,
/// balance_rel_threshold, router_block_size), as `serve_simulate_cluster` takes them.
type RouterArgs = (String, u64, f64, u64, f64, u64);

fn spec(router: &RouterArgs) -> PyResult<Spec> {
    let (name, seed, cache_threshold, balance_abs_threshold, balance_rel_threshold, block_size) = router;
    let params = prefix_aware::Params {
        cache_threshold: *cache_threshold,
        balance_abs_threshold: *balance_abs_threshold,
        balance_rel_threshold: *balance_rel_threshold,
        block_size: *block_size,
    };
    Spec::new(name, *seed, params).py_err()
}

/// Serve the requests on `prefill` prefill instances and `decode` decode instances joined by
/// a link of `bandwidth` bytes per second and `latency` seconds (the KV after the prefill, or
/// layer by layer over the model's `layers` during its last step when not 0), as
/// `osbench.serve.pools.drive_disaggregated` does: each pool with its own settings, step time
/// and router (`router`, `decode_router`: see `RouterArgs`; their block keys for
/// `prefix-aware`); `kv_bytes`: each request's KV bytes per GPU; `prefill_predicted`: the
/// predicted output lengths the prefill instances see; the other arguments are
/// `serve_simulate`'s. Returns (prefill instance of each request, decode instance of each,
/// transfer starts, KV arrivals, per prefill instance and per decode instance what
/// `serve_simulate` returns for its run, per decode instance its requests in the order it
/// received them).
#[pyfunction]
#[pyo3(signature = (
    arrival, prompt_len, output_len, priority, keys, key_offsets, *,
    prefill_settings, decode_settings, prefill_step_kind, prefill_step_coefficients,
    decode_step_kind, decode_step_coefficients, prefill, decode, router, decode_router,
    bandwidth, latency, kv_bytes, layers=0, router_keys=None, router_key_offsets=None,
    decode_router_keys=None, decode_router_key_offsets=None, record=false, jump=true,
    prefill_step_tables=None, decode_step_tables=None, concurrency=None, predicted=None,
    prefill_predicted=None,
))]
#[allow(clippy::too_many_arguments)]
fn serve_simulate_disaggregated<'py>(
    py: Python<'py>,
    arrival: PyReadonlyArray1<'py, f64>,
    prompt_len: PyReadonlyArray1<'py, i64>,
    output_len: PyReadonlyArray1<'py, i64>,
    priority: Option<PyReadonlyArray1<'py, i64>>,
    keys: Option<PyReadonlyArray1<'py, u64>>,
    key_offsets: Option<PyReadonlyArray1<'py, i64>>,
    prefill_settings: Bound<'py, PyDict>,
    decode_settings: Bound<'py, PyDict>,
    prefill_step_kind: &str,
    prefill_step_coefficients: Vec<f64>,
    decode_step_kind: &str,
    decode_step_coefficients: Vec<f64>,
    prefill: usize,
    decode: usize,
    router: RouterArgs,
    decode_router: RouterArgs,
    bandwidth: f64,
    latency: f64,
    kv_bytes: PyReadonlyArray1<'py, i64>,
    layers: u32,
    router_keys: Option<PyReadonlyArray1<'py, u64>>,
    router_key_offsets: Option<PyReadonlyArray1<'py, i64>>,
    decode_router_keys: Option<PyReadonlyArray1<'py, u64>>,
    decode_router_key_offsets: Option<PyReadonlyArray1<'py, i64>>,
    record: bool,
    jump: bool,
    prefill_step_tables: Option<PyRef<'py, MeasuredTables>>,
    decode_step_tables: Option<PyRef<'py, MeasuredTables>>,
    concurrency: Option<usize>,
    predicted: Option<PyReadonlyArray1<'py, i64>>,
    prefill_predicted: Option<PyReadonlyArray1<'py, i64>>,
) -> PyResult<DisaggOut<'py>> {
    let requests = RequestArrays { arrival, prompt_len, output_len, priority, predicted, keys, key_offsets };
    let requests = requests.view()?;
    let (p_config, p_step) = engine(
        &prefill_settings,
        Config::new,
        prefill_step_kind,
        &prefill_step_coefficients,
        prefill_step_tables.as_deref(),
    )?;
    let (d_config, d_step) = engine(
        &decode_settings,
        Config::new,
        decode_step_kind,
        &decode_step_coefficients,
        decode_step_tables.as_deref(),
    )?;
    let specs = (spec(&router)?, spec(&decode_router)?);
    let p_keys = (optional("router_keys", &router_keys)?, optional("router_key_offsets", &router_key_offsets)?);
    let d_keys = (
        optional("decode_router_keys", &decode_router_keys)?,
        optional("decode_router_key_offsets", &decode_router_key_offsets)?,
    );
    let link = disagg::Link::new(bandwidth, latency, layers).py_err()?;
    let kv_bytes = slice("kv_bytes", &kv_bytes)?;
    let prefill_predicted = optional("prefill_predicted", &prefill_predicted)?;
    let options = Options { record, jump, concurrency, steps: true };
    let run = interrupt::run(py, "serve.simulate_disaggregated", |cancel| {
        simulate_disaggregated(
            &requests,
            (&p_config, &d_config),
            (&p_step, &d_step),
            options,
            (prefill, decode),
            specs,
            (p_keys, d_keys),
            prefill_predicted,
            link,
            kv_bytes,
            cancel,
        )
    })?;
    let runs = |runs: Vec<Run>| runs.into_iter().map(|r| to_python(py, r)).collect::<PyResult<Vec<_>>>();
    let order = run.decode_order.into_iter().map(|o| o.into_pyarray(py)).collect();
    Ok((
        run.prefill_replica.into_pyarray(py),
        run.decode_replica.into_pyarray(py),
        run.transfer_start.into_pyarray(py),
        run.kv_arrival.into_pyarray(py),
        runs(run.prefill_runs)?,
        runs(run.decode_runs)?,
        order,
    ))
}

/// What `serve_simulate_disaggregated` returns.
type DisaggOut<'py> = (
    Bound<'py, numpy::PyArray1<i64>>,
    Bound<'py, numpy::PyArray1<i64>>,
    Bound<'py, numpy::PyArray1<f64>>,
    Bound<'py, numpy::PyArray1<f64>>,
    Vec<(Bound<'py, PyDict>, Option<Bound<'py, PyDict>>, u64)>,
    Vec<(Bound<'py, PyDict>, Option<Bound<'py, PyDict>>, u64)>,
    Vec<Bound<'py, numpy::PyArray1<i64>>>,
);

/// Serve the requests with SGLang 0.5.23's scheduler. `keys` and `key_offsets`: the prompts'
/// tokens as one-token block keys (`Requests.prompt_block_keys(1)`), None for prompts without
/// content (the core makes the keys that method gives them); `settings`: the
/// configuration's fields by name (`SERVE_ENGINES`' row for SGLang). The other arguments and
/// what it returns are `serve_simulate`'s (no decode jump: it takes none). `compensated_sum`:
/// the reference's interpreter sums floats with compensation (Python 3.12 on), as the
/// admission's sum of expected outputs must then.
#[pyfunction]
#[pyo3(signature = (
    arrival, prompt_len, output_len, keys, key_offsets, *,
    settings, step_kind, step_coefficients, record=false, step_tables=None, concurrency=None,
    compensated_sum=false,
))]
#[allow(clippy::too_many_arguments)]
fn serve_simulate_sglang<'py>(
    py: Python<'py>,
    arrival: PyReadonlyArray1<'py, f64>,
    prompt_len: PyReadonlyArray1<'py, i64>,
    output_len: PyReadonlyArray1<'py, i64>,
    keys: Option<PyReadonlyArray1<'py, u64>>,
    key_offsets: Option<PyReadonlyArray1<'py, i64>>,
    settings: Bound<'py, PyDict>,
    step_kind: &str,
    step_coefficients: Vec<f64>,
    record: bool,
    step_tables: Option<PyRef<'py, MeasuredTables>>,
    concurrency: Option<usize>,
    compensated_sum: bool,
) -> PyResult<(Bound<'py, PyDict>, Option<Bound<'py, PyDict>>, u64)> {
    let requests =
        RequestArrays { arrival, prompt_len, output_len, priority: None, predicted: None, keys, key_offsets };
    let requests = requests.view()?;
    let sglang = |s| SglangConfig::new(s, compensated_sum);
    let (config, step_time) = engine(&settings, sglang, step_kind, &step_coefficients, step_tables.as_deref())?;
    let options = Options { record, jump: false, concurrency, steps: true };
    let run = interrupt::run(py, "serve.simulate", |cancel| {
        simulate_sglang(&requests, &config, &step_time, options, cancel)
    })?;
    to_python(py, run)
}

/// What `serve_simulate_cluster` returns.
type ClusterOut<'py> = (
    Bound<'py, numpy::PyArray1<i64>>,
    Bound<'py, numpy::PyArray1<i64>>,
    Vec<(Bound<'py, PyDict>, Option<Bound<'py, PyDict>>, u64)>,
);

/// A run as Python takes it: (its columns by name, its record's columns by name or None, the
/// steps the decode jump took).
fn to_python(py: Python<'_>, mut run: Run) -> PyResult<(Bound<'_, PyDict>, Option<Bound<'_, PyDict>>, u64)> {
    let record = run.record.as_mut().map(|r| columns(py, r.take_columns())).transpose()?;
    Ok((columns(py, run.take_columns())?, record, run.jumped_steps))
}

/// Columns as a dict of numpy arrays by name (three counts a row: a `(rows, 3)` int64 array).
fn columns<'py>(py: Python<'py>, columns: Vec<(&'static str, Column)>) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    for (name, column) in columns {
        match column {
            Column::F64(v) => out.set_item(name, v.into_pyarray(py))?,
            Column::I64(v) => out.set_item(name, v.into_pyarray(py))?,
            Column::Rows(v) => {
                let rows = v.len();
                let flat: Vec<i64> = v.into_iter().flatten().map(|c| c as i64).collect();
                out.set_item(name, flat.into_pyarray(py).reshape([rows, 3])?)?
            }
        }
    }
    Ok(out)
}
