//! vLLM's scheduler and cache configuration (`vllm/config/scheduler.py: SchedulerConfig`,
//! `vllm/config/cache.py: CacheConfig`), as the engine reads it.

use super::policy::{Mlfq, Policy};
use super::swap::Swap;
use super::tiers::{TierSettings, TiersConfig};
use crate::error::{invalid, Result};
use crate::serve::fields::{settings, Fields, PythonOnly};

/// The configuration's fields, as `python/osbench/serve/config.py: EngineConfig` has them
/// (declared once, by [`Settings`]).
pub const CONFIG_FIELDS: &[&str] = <Settings as Fields>::NAMES;

/// What the scheduler reads (`python/osbench/serve/vllm/config.py: EngineConfig`, whose
/// defaults and checks are the ones users meet: user input is validated there, once; these are
/// the invariants the engine itself needs to be safe).
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// KV blocks in the pool, vLLM's null block (block 0) included.
    pub num_blocks: u64,
    pub block_size: u64,
    pub max_num_batched_tokens: u64,
    pub max_num_seqs: usize,
    pub max_model_len: u64,
    pub enable_chunked_prefill: bool,
    /// Cap on one request's new tokens per step, 0 for none.
    pub long_prefill_token_threshold: u64,
    pub enable_prefix_caching: bool,
    pub policy: Policy,
    /// Blocks kept free when admitting while others run (`EngineConfig.watermark_blocks`).
    pub watermark_blocks: u64,
    pub scheduler_reserve_full_isl: bool,
    /// Preemption by swap (None: by recompute, vLLM v1's only way).
    pub swap: Option<Swap>,
    /// The KV tiers below the prefix cache (None: none, vLLM's own).
    pub tiers: Option<TiersConfig>,
}

settings! {
    /// The engine's options as given, one field a field of `EngineConfig` (vLLM's names, in its
    /// order, with its defaults; `policy`, `preemption` and `link` by name), before
    /// [`Config::new`] checks them. `EngineConfig` validates user input, once; `Config::new`
    /// checks what the engine needs to be safe.
    pub struct Settings {
        /// KV blocks in the pool, vLLM's null block (block 0) included (`EngineConfig` has no
        /// default: 0 here, which is refused).
        num_blocks: u64,
        block_size: u64 = 16,
        max_num_batched_tokens: u64 = 8192,
        max_num_seqs: u64 = 1024,
        max_model_len: u64 = 8192,
        enable_chunked_prefill: bool = true,
        /// Cap on one request's new tokens per step, 0 for none.
        long_prefill_token_threshold: u64,
        enable_prefix_caching: bool = true,
        /// One of [`Policy::NAMES`], with its parameters `aging` and `mlfq_*`.
        policy: String = String::from("fcfs"),
        /// Share of the blocks kept free (the engine reads `Config::watermark_blocks`).
        watermark: f64,
        scheduler_reserve_full_isl: bool = true,
        aging: f64,
        mlfq_levels: u64 = 4,
        mlfq_quantum: u64 = 64,
        mlfq_growth: u64 = 2,
        mlfq_boost: u64,
        /// How `sjf` and `srpt` predict output lengths: read in Python only, where the
        /// predictions are drawn once (`prediction.py`); the engine takes the drawn lengths
        /// (`Requests::predicted`).
        prediction: PythonOnly,
        prediction_sigma: PythonOnly,
        prediction_bucket: PythonOnly,
        prediction_seed: PythonOnly,
        /// How a preempted request's KV is kept ([`super::PREEMPTIONS`]); with `"swap"`, a host
        /// pool of `swap_space` GiB over the host link `link` ([`super::LINKS`]), or at
        /// `swap_bandwidth` bytes per second each way when given.
        preemption: String = String::from("recompute"),
        swap_space: f64 = 4.0,
        link: String = String::from("pcie5"),
        swap_bandwidth: Option<f64>,
        /// Bytes one KV block takes on one GPU (swap and tiers; `simulate` sets it from the model).
        kv_block_bytes: u64,
        /// The KV tiers below the prefix cache (none by default, vLLM's own).
        kv_tiers: Vec<TierSettings>,
        /// A block's recompute FLOPs at position 0, and per position after (the tiers' costs).
        block_flops: f64 = 1.0,
        block_flops_step: f64,
    }
}

impl Config {
    /// The configuration of `settings`, checked.
    pub fn new(s: Settings) -> Result<Self> {
        let mlfq = Mlfq { levels: s.mlfq_levels, quantum: s.mlfq_quantum, growth: s.mlfq_growth, boost: s.mlfq_boost };
        let policy = Policy::new(&s.policy, s.aging, mlfq)?;
        let tiers = TiersConfig::new(&s.kv_tiers, s.kv_block_bytes, s.block_flops, s.block_flops_step)?;
        let swap = Swap::new(&s.preemption, s.swap_space, &s.link, s.swap_bandwidth, s.kv_block_bytes)?;
        let Settings {
            num_blocks,
            block_size,
            max_num_batched_tokens,
            max_num_seqs,
            max_model_len,
            enable_chunked_prefill,
            long_prefill_token_threshold,
            enable_prefix_caching,
            watermark,
            scheduler_reserve_full_isl,
            ..
        } = s;
        if !(0.0..1.0).contains(&watermark) {
            return Err(invalid("watermark", watermark, "a number in [0, 1)"));
        }
        let positive = [
            ("num_blocks", num_blocks),
            ("block_size", block_size),
            ("max_num_batched_tokens", max_num_batched_tokens),
            ("max_num_seqs", max_num_seqs),
            ("max_model_len", max_model_len),
        ];
        for (name, value) in positive {
            if value == 0 || value > 1 << 62 {
                return Err(invalid(name, value, "a positive integer up to 2**62"));
            }
        }
        if num_blocks < 2 {
            return Err(invalid("num_blocks", num_blocks, "at least 2 (block 0 is vLLM's null block)"));
        }
        if max_num_batched_tokens < max_num_seqs {
            return Err(invalid(
                "max_num_batched_tokens",
                max_num_batched_tokens,
                format!("at least max_num_seqs={max_num_seqs}"),
            ));
        }
        if !enable_chunked_prefill && max_num_batched_tokens < max_model_len {
            return Err(invalid(
                "max_num_batched_tokens",
                max_num_batched_tokens,
                format!("at least max_model_len={max_model_len} without chunked prefill"),
            ));
        }
        Ok(Config {
            num_blocks,
            block_size,
            max_num_batched_tokens,
            max_num_seqs: max_num_seqs as usize,
            max_model_len,
            enable_chunked_prefill,
            long_prefill_token_threshold,
            enable_prefix_caching,
            policy,
            // `int(watermark * num_blocks)`, as `KVCacheManager.__init__` rounds it.
            watermark_blocks: (watermark * num_blocks as f64) as u64,
            scheduler_reserve_full_isl,
            swap,
            tiers,
        })
    }
}
