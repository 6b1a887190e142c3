//! The serving engine (lecture section 2.8): continuous batching bounded by a paged KV cache
//! with prefix caching, as vLLM 0.33.0's v1 scheduler runs it (synchronous scheduling).
//!
//! Two layers. [`engine`] is the loop every semantics shares: the clock, arrivals (open or
//! closed loop), step times ([`step_time`], bit-equal to `steptime.py`), the recorder, the
//! decode jump and the livelock guard ([`livelock`]); it drives any [`Scheduler`]
//! ([`scheduler`]: the seam, a trait one step at a time) and can be driven from outside, step
//! by step. Each engine semantics is one folder: [`vllm`] is vLLM's scheduler, one file per
//! component, mirroring `python/osbench/serve/reference.py`, which states every rule and cites
//! the vLLM source it follows. [`hash`] is the block-content hashing both sides share. The
//! engine is held to the reference step for step: same batches, preemptions, block counts and
//! times.

pub mod cluster;
pub mod disagg;
pub mod engine;
pub mod fields;
pub mod hash;
pub mod livelock;
pub mod routers;
pub mod scheduler;
mod send;
pub mod sglang;
pub mod step_time;
pub mod step_time_batch;
pub mod step_time_measured;
pub mod vllm;

#[cfg(test)]
mod tests;

pub use engine::Engine;
pub use scheduler::{NewRequest, Occupancy, QuietStretch, Scheduler, StepPlan};
pub use step_time::{Batch, StepTime, KINDS};
pub use vllm::config::{Config, Settings};
pub use vllm::policy::POLICIES;
pub use vllm::tiers::{TierSettings, MEDIA};
pub use vllm::{Policy, LINKS, PREEMPTIONS};

use crate::cancel::Cancel;
use crate::error::{invalid, Result};
use fields::columns;

/// The longest prompt or output accepted, in tokens (`requests.py: MAX_TOKENS`).
pub const MAX_TOKENS: i64 = (1 << 31) - 1;

/// One engine semantics, as `osbench.serve.ENGINES` lists it: a folder of this module.
#[derive(Debug, Clone, Copy)]
pub struct EngineInfo {
    /// The name `simulate(..., semantics=...)` takes.
    pub name: &'static str,
    /// The release of the real engine it reproduces, step for step.
    pub follows: &'static str,
    /// Its scheduling policies.
    pub policies: &'static [&'static str],
    /// Its configuration's fields, in order (the Python configuration class has these).
    pub config_fields: &'static [&'static str],
    /// The engines that run it (`simulate(..., engine=...)`), the first its default:
    /// `"native"` (this core) and `"reference"` (the readable Python), or fewer.
    pub engines: &'static [&'static str],
}

/// Every engine semantics, declared once; the binding exports it (`SERVE_ENGINES`).
pub const ENGINES: [EngineInfo; 2] = [vllm::ENGINE, sglang::ENGINE];

/// The requests, in arrival order (`python/osbench/serve/requests.py: Requests`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Requests<'a> {
    /// Seconds: finite, >= 0, non-decreasing.
    pub arrival: &'a [f64],
    /// Tokens, from 1 to [`MAX_TOKENS`].
    pub prompt_len: &'a [i64],
    pub output_len: &'a [i64],
    /// One per request, or empty (all 0). Smaller is more urgent.
    pub priority: &'a [i64],
    /// Predicted output lengths (`sjf`, `srpt`), from 0 to 2**62, one per request, or empty
    /// (the true lengths). Drawn in Python (`prediction.py`), so both engines see the same.
    pub predicted: &'a [i64],
    /// With prefix caching: the content keys of every prompt's full blocks
    /// (`Requests.prompt_block_keys(block_size)`), request `i`'s being
    /// `keys[key_offsets[i]..key_offsets[i + 1]]`; both empty when the prompts have no content
    /// (every block unique to its request and position: no hash is computed, and the results
    /// are those of the keys `prompt_block_keys` gives such prompts). Unused without.
    pub keys: &'a [u64],
    pub key_offsets: &'a [i64],
}

/// How to run.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Keep every step's detail ([`Record`]).
    pub record: bool,
    /// Skip decode-only stretches in one jump (the results are the same either way).
    pub jump: bool,
    /// Closed-loop clients: at most this many requests in flight, the next one sent when one
    /// finishes (None: each request is sent at its arrival).
    pub concurrency: Option<usize>,
    /// Under `concurrency`: seconds from a request's finish to the client's next request
    /// reaching the engine (`drive.py: Sender`); 0 sends it at the finish.
    pub turnaround: f64,
    /// Under `concurrency`: the first this many requests are a warm-up phase, the others sent
    /// only once all of them have finished (`run.py: Clients`).
    pub warmup: usize,
    /// Keep the per-step rows (`Run::start`, `duration`, the batches): a run that needs only
    /// its per-request times (the service time alone of every request, one at a time: a row
    /// for each of its 100M steps at 1M requests, 96 bytes each) keeps none.
    pub steps: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options { record: false, jump: true, concurrency: None, turnaround: 0.0, warmup: 0, steps: true }
    }
}

/// The closed-loop clients of `options`: a positive count, a finite turnaround of at least 0.
fn check_clients(options: &Options) -> Result<()> {
    if options.concurrency == Some(0) {
        return Err(invalid("concurrency", 0, "a positive number of requests in flight, or None"));
    }
    if !(options.turnaround.is_finite() && options.turnaround >= 0.0) {
        return Err(invalid("turnaround", options.turnaround, "finite seconds >= 0"));
    }
    Ok(())
}

columns! {
    /// Every step's detail (`run.py: StepRecord`, whose fields are [`Record::COLUMNS`]): ragged
    /// lists as flat arrays with offsets.
    pub struct Record {
        scheduled_offsets: Vec<i64>,
        scheduled_request: Vec<i64>,
        scheduled_tokens: Vec<i64>,
        preempted_offsets: Vec<i64>,
        preempted_request: Vec<i64>,
        admitted_offsets: Vec<i64>,
        admitted_request: Vec<i64>,
        admitted_hit_tokens: Vec<i64>,
        free_blocks: Vec<i64>,
    }
}

columns! {
    /// One run (`run.py: EngineRun`): per request, then per step (`run.py: Steps`), then per
    /// KV tier; [`Run::COLUMNS`] are `EngineRun`'s fields in order, `steps` standing for
    /// `Steps`' and `record` left out.
    pub struct Run {
        /// When each request reached the engine: its arrival, or later under a concurrency limit.
        arrival: Vec<f64>,
        admitted: Vec<f64>,
        first_token: Vec<f64>,
        finish: Vec<f64>,
        preemptions: Vec<i64>,
        cached_tokens: Vec<i64>,
        start: Vec<f64>,
        duration: Vec<f64>,
        num_seqs: Vec<i64>,
        prefill_seqs: Vec<i64>,
        prefill_tokens: Vec<i64>,
        decode_seqs: Vec<i64>,
        context_tokens: Vec<i64>,
        attention_pairs: Vec<i64>,
        num_preempted: Vec<i64>,
        num_waiting: Vec<i64>,
        blocks_used: Vec<i64>,
        blocks_cached: Vec<i64>,
        /// KV bytes copied to host memory and back (preemption by swap), the seconds the copies
        /// added to the step, and the tokens computed again (lost to a preemption by recompute).
        swap_out_bytes: Vec<i64>,
        swap_in_bytes: Vec<i64>,
        swap_time: Vec<f64>,
        recomputed_tokens: Vec<i64>,
        /// KV bytes each step loaded from the tiers, and the seconds that added to it.
        tier_load_bytes: Vec<i64>,
        tier_time: Vec<f64>,
        /// Prompt tokens loaded from the KV tiers when each request was first scheduled.
        tier_tokens: Vec<i64>,
        /// Per KV tier, in order: blocks loaded from it, evicted contents stored in it, and of
        /// those the ones it did not hold.
        tier_blocks: Vec<[u64; 3]>,
    }
    also {
        record: Option<Record>,
        /// Steps taken by the decode jump rather than one by one (0 with `jump: false`).
        jumped_steps: u64,
    }
}

/// Serve `requests` with the engine `config` describes, each step taking `step_time`.
/// Refuses (`Error::InvalidArgument`) what no engine can serve, as `run.py: check_requests`
/// does, so that every run ends; stops with `Error::Interrupted` when `cancel` is raised, and
/// reports its progress there (requests scheduled, summed over steps).
pub fn simulate(
    requests: &Requests,
    config: &Config,
    step_time: &StepTime,
    options: Options,
    cancel: &Cancel,
) -> Result<Run> {
    check_requests(requests, config)?;
    check_clients(&options)?;
    if options.record && !options.steps {
        return Err(invalid("steps", false, "true with record=True (the detail is kept by step)"));
    }
    // Without prefix caching the keys are not checked: the engine does not see them.
    let requests =
        if config.enable_prefix_caching { *requests } else { Requests { keys: &[], key_offsets: &[], ..*requests } };
    let scheduler = vllm::Scheduler::new(config, requests.arrival.len());
    engine::run(scheduler, &requests, step_time, options, cancel)
}

/// Serve `requests` on `replicas` engines of the configuration `config` behind the router
/// `spec` ([`cluster`]; `python/osbench/serve/cluster.py: simulate_cluster`), each step taking
/// `step_time`; `router_keys` and `router_key_offsets`: the prompts' block keys at the router's
/// granularity, for a router that reads them. Refuses what [`simulate`] refuses.
#[allow(clippy::too_many_arguments)]
pub fn simulate_cluster(
    requests: &Requests,
    config: &Config,
    step_time: &StepTime,
    options: Options,
    replicas: usize,
    spec: &routers::Spec,
    router_keys: &[u64],
    router_key_offsets: &[i64],
    cancel: &Cancel,
) -> Result<cluster::ClusterRun> {
    check_requests(requests, config)?;
    check_clients(&options)?;
    if !(1..=cluster::MAX_REPLICAS).contains(&replicas) {
        return Err(invalid("replicas", replicas, format!("a positive integer up to {}", cluster::MAX_REPLICAS)));
    }
    let requests =
        if config.enable_prefix_caching { *requests } else { Requests { keys: &[], key_offsets: &[], ..*requests } };
    let capacity = requests.arrival.len().div_ceil(replicas);
    let scheds = (0..replicas).map(|_| vllm::Scheduler::new(config, capacity)).collect();
    let (usable, block_size) = (config.num_blocks - 1, config.block_size);
    cluster::run(
        scheds,
        &requests,
        step_time,
        Options { steps: true, ..options }, // the router reads each step's row
        spec,
        router_keys,
        router_key_offsets,
        usable,
        block_size,
        cancel,
    )
}

/// Serve `requests` on `prefill` instances of `configs.0` and `decode` instances of
/// `configs.1` joined by `link` ([`disagg`]; `python/osbench/serve/disagg.py:
/// simulate_disaggregated`), each pool's steps taking its own step time and its router its
/// own spec and block keys; request `i`'s KV takes `kv_bytes[i]` bytes per GPU.
/// `prefill_predicted`: the predicted output lengths the prefill instances see (empty: one).
/// Refuses what [`simulate`] refuses of either pool (a prefill instance serves one token).
#[allow(clippy::too_many_arguments)]
pub fn simulate_disaggregated(
    requests: &Requests,
    configs: (&Config, &Config),
    step_times: (&StepTime, &StepTime),
    options: Options,
    sizes: (usize, usize),
    specs: (routers::Spec, routers::Spec),
    router_keys: (disagg::RouterKeys<'_>, disagg::RouterKeys<'_>),
    prefill_predicted: &[i64],
    link: disagg::Link,
    kv_bytes: &[i64],
    cancel: &Cancel,
) -> Result<disagg::DisaggRun> {
    check_requests(requests, configs.1)?;
    let one = vec![1i64; requests.arrival.len()];
    check_requests(&Requests { output_len: &one, predicted: prefill_predicted, ..*requests }, configs.0)?;
    check_clients(&options)?;
    for (name, num) in [("prefill", sizes.0), ("decode", sizes.1)] {
        if !(1..=cluster::MAX_REPLICAS).contains(&num) {
            return Err(invalid(name, num, format!("a positive integer up to {}", cluster::MAX_REPLICAS)));
        }
    }
    let caching = configs.0.enable_prefix_caching && configs.1.enable_prefix_caching;
    let requests = if caching { *requests } else { Requests { keys: &[], key_offsets: &[], ..*requests } };
    let n = requests.arrival.len();
    fn pool<'a>(
        config: &'a Config,
        size: usize,
        n: usize,
        spec: routers::Spec,
        step_time: &'a StepTime,
        (keys, offsets): disagg::RouterKeys<'a>,
    ) -> disagg::Pool<'a, vllm::Scheduler<'a>> {
        disagg::Pool {
            scheds: (0..size).map(|_| vllm::Scheduler::new(config, n.div_ceil(size))).collect(),
            spec,
            step_time,
            usable_blocks: config.num_blocks - 1,
            block_size: config.block_size,
            router_keys: keys,
            router_key_offsets: offsets,
        }
    }
    let prefill = pool(configs.0, sizes.0, n, specs.0, step_times.0, router_keys.0);
    let decode = pool(configs.1, sizes.1, n, specs.1, step_times.1, router_keys.1);
    // The routers read each step's row, as a cluster's.
    let options = Options { steps: true, ..options };
    disagg::run(&requests, prefill_predicted, prefill, decode, link, kv_bytes, options, cancel)
}

/// Serve `requests` with SGLang 0.5.23's scheduler as `config` describes it
/// (`python/osbench/serve/sglang/stepper.py: run`), each step taking `step_time`. The requests'
/// `keys` are their prompts' tokens as keys of one-token blocks
/// (`Requests.prompt_block_keys(1)`, each key a token shifted left by two bits), every request's
/// `prompt_len` of them; both `keys` and `key_offsets` empty for prompts without content (the
/// scheduler makes the keys `prompt_block_keys` gives such prompts). Refuses what SGLang would never admit (`stepper.py: check_requests`);
/// stops with `Error::Interrupted` when `cancel` is raised. There is no decode jump.
pub fn simulate_sglang(
    requests: &Requests,
    config: &sglang::Config,
    step_time: &StepTime,
    options: Options,
    cancel: &Cancel,
) -> Result<Run> {
    check_shapes(requests)?;
    let (r, n) = (requests, requests.arrival.len());
    let o = r.key_offsets;
    let keyless = r.keys.is_empty() && o.is_empty();
    if !keyless && (o.len() != n + 1 || o[0] != 0 || o[n] != r.keys.len() as i64) {
        return Err(invalid(
            "key_offsets",
            format!("{} offsets", o.len()),
            format!("{} offsets from 0 to len(keys)={}, one key per prompt token", n + 1, r.keys.len()),
        ));
    }
    for i in 0..n {
        if !keyless && o[i + 1].checked_sub(o[i]) != Some(r.prompt_len[i]) {
            return Err(invalid("key_offsets", format!("request {i}'s keys"), "prompt_len[i] keys for request i"));
        }
        let need = (r.prompt_len[i] + r.output_len[i]) as u64 + config.page_size;
        if need >= config.max_total_tokens {
            return Err(invalid(
                "requests",
                i,
                format!(
                    "prompt_len + output_len + page_size={} must be below the pool's max_total_tokens={}, else \
                     SGLang never admits the request",
                    config.page_size, config.max_total_tokens
                ),
            ));
        }
    }
    check_clients(&options)?;
    let scheduler = sglang::Scheduler::new(config, n)?;
    engine::run(scheduler, requests, step_time, Options { jump: false, ..options }, cancel)
}

/// What every semantics refuses: arrays of other lengths, arrivals out of order, lengths out
/// of range.
fn check_shapes(r: &Requests) -> Result<()> {
    let n = r.arrival.len();
    if n >= u32::MAX as usize {
        return Err(invalid("arrival", format!("{n} requests"), "fewer than 2**32 - 1 requests"));
    }
    let per_request = [("prompt_len", r.prompt_len.len()), ("output_len", r.output_len.len())];
    for (name, len) in per_request {
        if len != n {
            return Err(invalid(name, format!("{len} entries"), format!("{n} entries, one per request")));
        }
    }
    if !r.priority.is_empty() && r.priority.len() != n {
        return Err(invalid(
            "priority",
            format!("{} entries", r.priority.len()),
            format!("{n} entries, one per request (or none)"),
        ));
    }
    if !r.predicted.is_empty() && r.predicted.len() != n {
        return Err(invalid(
            "predicted_output_len",
            format!("{} entries", r.predicted.len()),
            format!("{n} entries, one per request (or none)"),
        ));
    }
    if let Some(i) = r.predicted.iter().position(|&v| !(0..=1 << 62).contains(&v)) {
        return Err(invalid(
            "predicted_output_len",
            format!("{} at index {i}", r.predicted[i]),
            "integers from 0 to 2**62 (tokens)",
        ));
    }
    let mut last = 0.0;
    for (i, &a) in r.arrival.iter().enumerate() {
        if !(a.is_finite() && a >= 0.0) {
            return Err(invalid("arrival", format!("{a} at index {i}"), "finite numbers >= 0 (seconds)"));
        }
        if a < last {
            return Err(invalid("arrival", format!("{a} at index {i}"), "non-decreasing times (arrival order)"));
        }
        last = a;
    }
    for (name, values) in [("prompt_len", r.prompt_len), ("output_len", r.output_len)] {
        if let Some(i) = values.iter().position(|&v| !(1..=MAX_TOKENS).contains(&v)) {
            return Err(invalid(
                name,
                format!("{} at index {i}", values[i]),
                format!("integers from 1 to {MAX_TOKENS}"),
            ));
        }
    }
    Ok(())
}

fn check_requests(r: &Requests, cfg: &Config) -> Result<()> {
    check_shapes(r)?;
    let n = r.arrival.len();
    for i in 0..n {
        let total = (r.prompt_len[i] + r.output_len[i]) as u64;
        if total > cfg.max_model_len {
            return Err(invalid(
                "requests",
                format!("request {i}"),
                format!("prompt_len + output_len within max_model_len={}", cfg.max_model_len),
            ));
        }
        if (total - 1).div_ceil(cfg.block_size) > cfg.num_blocks - 1 {
            return Err(invalid(
                "requests",
                format!("request {i}"),
                format!(
                    "prompt_len + output_len - 1 tokens in the {} blocks of block_size={} the pool has",
                    cfg.num_blocks - 1,
                    cfg.block_size
                ),
            ));
        }
    }
    if cfg.enable_prefix_caching && !(r.keys.is_empty() && r.key_offsets.is_empty()) {
        let o = r.key_offsets;
        let accepted = || {
            format!(
                "{} offsets from 0 to len(keys)={}, request i's count prompt_len[i] // block_size",
                n + 1,
                r.keys.len()
            )
        };
        if o.len() != n + 1 || o[0] != 0 || o[n] != r.keys.len() as i64 {
            return Err(invalid("key_offsets", format!("{} offsets", o.len()), accepted()));
        }
        for i in 0..n {
            let count = o[i + 1].checked_sub(o[i]).unwrap_or(-1);
            if count != r.prompt_len[i] / cfg.block_size as i64 {
                return Err(invalid("key_offsets", format!("{count} keys for request {i}"), accepted()));
            }
        }
    }
    Ok(())
}
