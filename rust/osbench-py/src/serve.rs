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
use pyo3::conversion::FromPyObjectOwned;
use pyo3::exceptions::PyKeyError;
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

/// A group of arguments Python passes as one dict, read by name (`FromPyObject` with
/// `from_item_all`, an item marked `#[pyo3(default)]` optional), declared once: the macro
/// gives the struct and its [`Group::KEYS`], which [`group`] holds the dict to.
macro_rules! group {
    ($(#[doc = $doc:expr])* struct $name:ident $(<$py:lifetime>)? {
        $($(#[$attr:meta])* $field:ident: $ty:ty,)*
    }) => {
        $(#[doc = $doc])*
        #[derive(FromPyObject)]
        #[pyo3(from_item_all)]
        struct $name $(<$py>)? { $($(#[$attr])* $field: $ty,)* }

        impl $(<$py>)? Group for $name $(<$py>)? {
            const KEYS: &'static [&'static str] = &[$(stringify!($field)),*];
        }
    };
}

/// The keys of a group of arguments ([`group!`]).
trait Group {
    const KEYS: &'static [&'static str];
}

/// The group `T` from the dict Python passed as `argument` (anything else is refused): a key `T` does not take is refused
/// (`ArgumentTypeError`), and so is a required one missing (`ArgumentError`), each naming the
/// argument and the keys it takes.
fn group<'py, T: Group + FromPyObjectOwned<'py>>(argument: &str, value: &Bound<'py, PyAny>) -> PyResult<T> {
    let dict = value.cast::<PyDict>().map_err(|_| {
        let kind = value.get_type().name().map(|n| n.to_string()).unwrap_or_default();
        crate::errors::ArgumentTypeError::new_err(format!(
            "{argument}={kind} is not accepted: a dict of {}",
            T::KEYS.join(", ")
        ))
    })?;
    check_keys(argument, dict, T::KEYS)?;
    dict.extract::<T>().map_err(|err| {
        let err: PyErr = err.into();
        let py = dict.py();
        if !err.is_instance_of::<PyKeyError>(py) {
            return err;
        }
        let key = err.value(py).str().map(|k| k.to_string()).unwrap_or_default();
        crate::errors::ArgumentError::new_err(format!(
            "{argument} is not accepted: it has no {key}; it takes {}",
            T::KEYS.join(", ")
        ))
    })
}

/// Refuses a key of `dict` (the argument `argument`) that is not one of `keys`.
fn check_keys(argument: &str, dict: &Bound<'_, PyDict>, keys: &[&str]) -> PyResult<()> {
    for key in dict.keys() {
        let key = key.str()?.to_string();
        if !keys.contains(&key.as_str()) {
            return Err(crate::errors::ArgumentTypeError::new_err(format!(
                "{argument}[{key:?}] is not accepted: {argument} takes {}",
                keys.join(", ")
            )));
        }
    }
    Ok(())
}

group! {
/// The requests as Python passes them: a dict of arrays by name (`native._inputs`'
/// `requests`), an optional one absent or None when not given.
struct RequestArrays<'py> {
    arrival: PyReadonlyArray1<'py, f64>,
    prompt_len: PyReadonlyArray1<'py, i64>,
    output_len: PyReadonlyArray1<'py, i64>,
    #[pyo3(default)]
    priority: Option<PyReadonlyArray1<'py, i64>>,
    #[pyo3(default)]
    predicted: Option<PyReadonlyArray1<'py, i64>>,
    #[pyo3(default)]
    keys: Option<PyReadonlyArray1<'py, u64>>,
    #[pyo3(default)]
    key_offsets: Option<PyReadonlyArray1<'py, i64>>,
}
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

group! {
/// One pool's engines as Python passes them, a dict (`native._inputs`' `engine`): the
/// configuration's fields by name (`settings`: `SERVE_ENGINES`' row of the semantics) and the
/// step time (`StepTime.spec()` as `step_kind` and `step_coefficients`, with `step_tables` for
/// a measured one).
struct EngineArgs<'py> {
    settings: Bound<'py, PyDict>,
    step_kind: String,
    step_coefficients: Vec<f64>,
    #[pyo3(default)]
    step_tables: Option<PyRef<'py, MeasuredTables>>,
}
}

impl EngineArgs<'_> {
    /// The configuration (the settings read, then checked by `config`) and the step time.
    fn engine<T: Fields, C>(&self, config: impl FnOnce(T) -> osbench_core::Result<C>) -> PyResult<(C, StepTime)> {
        let config = config(SettingsDict::read(&self.settings)?).py_err()?;
        let step_time =
            crate::step_time::step_time(&self.step_kind, &self.step_coefficients, self.step_tables.as_deref())?;
        Ok((config, step_time))
    }
}

group! {
/// A run's options as Python passes them, a dict (`native._inputs`' `options`): `record`
/// (keep every step's detail), `jump` (skip decode-only stretches in one jump), `concurrency`
/// (at most that many requests in flight, closed-loop clients; None: each request sent at its
/// arrival; None when absent), `turnaround` (seconds from a finish to that client's next
/// request; 0 when absent), `warmup` (the first that many requests a phase the others wait for;
/// 0 when absent) and `steps` (keep the per-step rows; true when absent).
struct OptionArgs {
    record: bool,
    jump: bool,
    #[pyo3(default)]
    concurrency: Option<usize>,
    #[pyo3(default)]
    turnaround: f64,
    #[pyo3(default)]
    warmup: usize,
    #[pyo3(default = Options::default().steps)]
    steps: bool,
}
}

impl From<OptionArgs> for Options {
    fn from(o: OptionArgs) -> Options {
        Options {
            record: o.record,
            jump: o.jump,
            concurrency: o.concurrency,
            turnaround: o.turnaround,
            warmup: o.warmup,
            steps: o.steps,
        }
    }
}

group! {
/// A pool's router as Python passes it, a dict (`native._router`): its name in `SERVE_ROUTERS`,
/// every parameter (`native.ROUTER_DEFAULTS` where not set: a router that does not read one
/// ignores it), and for `prefix-aware` the prompts' block keys at its `block_size`.
struct RouterArgs<'py> {
    name: String,
    seed: u64,
    cache_threshold: f64,
    balance_abs_threshold: u64,
    balance_rel_threshold: f64,
    block_size: u64,
    #[pyo3(default)]
    keys: Option<PyReadonlyArray1<'py, u64>>,
    #[pyo3(default)]
    key_offsets: Option<PyReadonlyArray1<'py, i64>>,
}
}

impl RouterArgs<'_> {
    /// The core's router, and its keys and their offsets (empty without); `argument`: the
    /// router's argument, for the errors.
    fn spec(&self, argument: &str) -> PyResult<(Spec, disagg::RouterKeys<'_>)> {
        let params = prefix_aware::Params {
            cache_threshold: self.cache_threshold,
            balance_abs_threshold: self.balance_abs_threshold,
            balance_rel_threshold: self.balance_rel_threshold,
            block_size: self.block_size,
        };
        let keys = (
            optional(&format!("{argument}[\"keys\"]"), &self.keys)?,
            optional(&format!("{argument}[\"key_offsets\"]"), &self.key_offsets)?,
        );
        Ok((Spec::new(&self.name, self.seed, params).py_err()?, keys))
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
        check_keys("settings", dict, T::NAMES)?;
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

/// Serve `requests` (see [`RequestArrays`]: with prefix caching, `keys` and `key_offsets` are
/// the prompts' block keys, `Requests.prompt_block_keys(block_size)`, None for prompts without
/// content; `predicted` the predicted output lengths, for `sjf` and `srpt`) on one vLLM engine
/// (`engine`: see [`EngineArgs`]), with `options` (see [`OptionArgs`]). Returns (the
/// per-request and per-step arrays by name, the step records by name or None, the steps the
/// decode jump took).
#[pyfunction]
fn serve_simulate<'py>(
    py: Python<'py>,
    requests: &Bound<'py, PyAny>,
    engine: &Bound<'py, PyAny>,
    options: &Bound<'py, PyAny>,
) -> PyResult<RunOut<'py>> {
    let requests: RequestArrays = group("requests", requests)?;
    let engine: EngineArgs = group("engine", engine)?;
    let options: OptionArgs = group("options", options)?;
    let requests = requests.view()?;
    let (config, step_time) = engine.engine(Config::new)?;
    let options = Options::from(options);
    let run = interrupt::run(py, "serve.simulate", |cancel| simulate(&requests, &config, &step_time, options, cancel))?;
    to_python(py, run)
}

/// Serve the requests on `replicas` engines behind `router` (see [`RouterArgs`]), as
/// `osbench.serve.replicas.drive_replicas` does; the other arguments are `serve_simulate`'s.
/// Returns (the replica of each request, the loads the router saw as one flat row-major array,
/// and per replica what `serve_simulate` returns for its run).
#[pyfunction]
fn serve_simulate_cluster<'py>(
    py: Python<'py>,
    requests: &Bound<'py, PyAny>,
    engine: &Bound<'py, PyAny>,
    replicas: usize,
    router: &Bound<'py, PyAny>,
    options: &Bound<'py, PyAny>,
) -> PyResult<ClusterOut<'py>> {
    let requests: RequestArrays = group("requests", requests)?;
    let engine: EngineArgs = group("engine", engine)?;
    let router: RouterArgs = group("router", router)?;
    let options: OptionArgs = group("options", options)?;
    let requests = requests.view()?;
    let (config, step_time) = engine.engine(Config::new)?;
    let (spec, (rk, ro)) = router.spec("router")?;
    let options = Options::from(options);
    let run = interrupt::run(py, "serve.simulate_cluster", |cancel| {
        simulate_cluster(&requests, &config, &step_time, options, replicas, &spec, rk, ro, cancel)
    })?;
    let runs = run.runs.into_iter().map(|r| to_python(py, r)).collect::<PyResult<Vec<_>>>()?;
    Ok((run.replica.into_pyarray(py), run.load.into_pyarray(py), runs))
}

/// Serve the requests on `prefill` prefill instances and `decode` decode instances, each pool
/// with its own engines and router (`prefill_engine`, `router`; `decode_engine`,
/// `decode_router`), joined by `link`: (bytes per second, seconds a transfer, and the model's
/// layers when the KV moves layer by layer during the prompt's last step, else 0), as
/// `osbench.serve.pools.drive_disaggregated` does. `kv_bytes`: each request's KV bytes per GPU;
/// `prefill_predicted`: the predicted output lengths the prefill instances see (None: the true
/// ones); the other arguments are `serve_simulate`'s. Returns (prefill instance of each request,
/// decode instance of each, transfer starts, KV arrivals, per prefill instance and per decode
/// instance what `serve_simulate` returns for its run, per decode instance its requests in the
/// order it received them).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn serve_simulate_disaggregated<'py>(
    py: Python<'py>,
    requests: &Bound<'py, PyAny>,
    prefill_engine: &Bound<'py, PyAny>,
    decode_engine: &Bound<'py, PyAny>,
    prefill: usize,
    decode: usize,
    router: &Bound<'py, PyAny>,
    decode_router: &Bound<'py, PyAny>,
    link: (f64, f64, u32),
    kv_bytes: PyReadonlyArray1<'py, i64>,
    prefill_predicted: Option<PyReadonlyArray1<'py, i64>>,
    options: &Bound<'py, PyAny>,
) -> PyResult<DisaggOut<'py>> {
    let requests: RequestArrays = group("requests", requests)?;
    let prefill_engine: EngineArgs = group("prefill_engine", prefill_engine)?;
    let decode_engine: EngineArgs = group("decode_engine", decode_engine)?;
    let router: RouterArgs = group("router", router)?;
    let decode_router: RouterArgs = group("decode_router", decode_router)?;
    let options: OptionArgs = group("options", options)?;
    let requests = requests.view()?;
    let (p_config, p_step) = prefill_engine.engine(Config::new)?;
    let (d_config, d_step) = decode_engine.engine(Config::new)?;
    let ((p_spec, p_keys), (d_spec, d_keys)) = (router.spec("router")?, decode_router.spec("decode_router")?);
    let link = disagg::Link::new(link.0, link.1, link.2).py_err()?;
    let kv_bytes = slice("kv_bytes", &kv_bytes)?;
    let prefill_predicted = optional("prefill_predicted", &prefill_predicted)?;
    let options = Options::from(options);
    let run = interrupt::run(py, "serve.simulate_disaggregated", |cancel| {
        simulate_disaggregated(
            &requests,
            (&p_config, &d_config),
            (&p_step, &d_step),
            options,
            (prefill, decode),
            (p_spec, d_spec),
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
    Vec<RunOut<'py>>,
    Vec<RunOut<'py>>,
    Vec<Bound<'py, numpy::PyArray1<i64>>>,
);

/// Serve the requests with SGLang 0.5.23's scheduler: `requests`' `keys` and `key_offsets` are
/// the prompts' tokens as one-token block keys (`Requests.prompt_block_keys(1)`), None for
/// prompts without content (the core makes the keys that method gives them); `engine`'s
/// settings are `SERVE_ENGINES`' row for SGLang. The other arguments and what it returns are
/// `serve_simulate`'s (the core's `simulate_sglang` takes no decode jump, whatever `jump`
/// says). `compensated_sum`: the reference's interpreter sums floats with compensation (Python
/// 3.12 on), as the admission's sum of expected outputs must then.
#[pyfunction]
#[pyo3(signature = (requests, engine, options, *, compensated_sum=false))]
fn serve_simulate_sglang<'py>(
    py: Python<'py>,
    requests: &Bound<'py, PyAny>,
    engine: &Bound<'py, PyAny>,
    options: &Bound<'py, PyAny>,
    compensated_sum: bool,
) -> PyResult<RunOut<'py>> {
    let requests: RequestArrays = group("requests", requests)?;
    let engine: EngineArgs = group("engine", engine)?;
    let options: OptionArgs = group("options", options)?;
    let requests = requests.view()?;
    let (config, step_time) = engine.engine(|s| SglangConfig::new(s, compensated_sum))?;
    let options = Options::from(options);
    let run = interrupt::run(py, "serve.simulate", |cancel| {
        simulate_sglang(&requests, &config, &step_time, options, cancel)
    })?;
    to_python(py, run)
}

/// What `serve_simulate_cluster` returns.
type ClusterOut<'py> = (Bound<'py, numpy::PyArray1<i64>>, Bound<'py, numpy::PyArray1<i64>>, Vec<RunOut<'py>>);

/// A run as Python takes it: (its columns by name, its record's columns by name or None, the
/// steps the decode jump took).
type RunOut<'py> = (Bound<'py, PyDict>, Option<Bound<'py, PyDict>>, u64);

fn to_python(py: Python<'_>, mut run: Run) -> PyResult<RunOut<'_>> {
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
