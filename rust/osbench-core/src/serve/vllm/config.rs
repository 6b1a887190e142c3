//! vLLM's scheduler and cache configuration (`vllm/config/scheduler.py: SchedulerConfig`,
//! `vllm/config/cache.py: CacheConfig`), as the engine reads it.

use super::policy::{Parameters, Policy};
use super::swap::{Swap, SwapSettings};
use super::tiers::{TierSettings, TiersConfig};
use crate::error::{invalid, Result};

/// The configuration's fields, as `python/osbench/serve/config.py: EngineConfig` has them
/// (`watermark` is a fraction there; the engine reads the blocks it keeps free).
/// The `prediction*` fields are read in Python only, where predictions are drawn once
/// (`prediction.py`); the engine takes the drawn lengths (`Requests::predicted`).
pub const CONFIG_FIELDS: [&str; 28] = [
    "num_blocks",
    "block_size",
    "max_num_batched_tokens",
    "max_num_seqs",
    "max_model_len",
    "enable_chunked_prefill",
    "long_prefill_token_threshold",
    "enable_prefix_caching",
    "policy",
    "watermark",
    "scheduler_reserve_full_isl",
    "aging",
    "mlfq_levels",
    "mlfq_quantum",
    "mlfq_growth",
    "mlfq_boost",
    "prediction",
    "prediction_sigma",
    "prediction_bucket",
    "prediction_seed",
    "preemption",
    "swap_space",
    "link",
    "swap_bandwidth",
    "kv_block_bytes",
    "kv_tiers",
    "block_flops",
    "block_flops_step",
];

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

/// The engine's options as given (vLLM's names; `policy` by name), before [`Config::new`]
/// checks them.
#[derive(Debug, Clone, Copy)]
pub struct Settings<'a> {
    pub num_blocks: u64,
    pub block_size: u64,
    pub max_num_batched_tokens: u64,
    pub max_num_seqs: u64,
    pub max_model_len: u64,
    pub enable_chunked_prefill: bool,
    pub long_prefill_token_threshold: u64,
    pub enable_prefix_caching: bool,
    pub policy: &'a str,
    /// Share of the blocks kept free (`EngineConfig.watermark`).
    pub watermark: f64,
    pub scheduler_reserve_full_isl: bool,
    /// The policy's parameters (`aging`, `mlfq_*`).
    pub parameters: Parameters,
    /// How a preempted request's KV is kept (`preemption`, `swap_space`, `link`...).
    pub swap: SwapSettings<'a>,
    /// The KV tiers (`kv_tiers`, none by default), and a block's recompute FLOPs at position
    /// 0 and per position after (`block_flops`, `block_flops_step`).
    pub tiers: &'a [TierSettings],
    pub block_flops: f64,
    pub block_flops_step: f64,
}

impl Config {
    /// The configuration of `settings`, checked.
    pub fn new(settings: Settings<'_>) -> Result<Self> {
        let Settings {
            num_blocks,
            block_size,
            max_num_batched_tokens,
            max_num_seqs,
            max_model_len,
            enable_chunked_prefill,
            long_prefill_token_threshold,
            enable_prefix_caching,
            policy,
            watermark,
            scheduler_reserve_full_isl,
            parameters,
            swap,
            tiers,
            block_flops,
            block_flops_step,
        } = settings;
        let policy = Policy::new(policy, parameters)?;
        let tiers = TiersConfig::new(tiers, swap.kv_block_bytes, block_flops, block_flops_step)?;
        let swap = Swap::new(swap)?;
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
