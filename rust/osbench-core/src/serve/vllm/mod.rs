//! vLLM 0.33.0's v1 scheduler (synchronous scheduling), one file per component, mirroring
//! `python/osbench/serve/vllm/`, which states every rule and cites the vLLM source it follows:
//! [`block_pool`] (free queue, prefix-cache map, reference counts), [`kv_cache_manager`]
//! (per-request blocks, prefix lookup, slot allocation, tail-first free), [`queue`] (fcfs deque,
//! keyed heap), [`policy`] (one file per policy: the waiting order and the preemption victim),
//! [`request`] and [`scheduler`] (running first, preemption by recompute, admission), which
//! implements the engine's [`crate::serve::Scheduler`]; [`swap`] (preemption by swap, vLLM
//! v0's, and the host links); [`tiers`] (host and SSD tiers below the prefix cache, each an
//! `osbench.cache` policy); [`config`] is what it reads.

pub mod block_pool;
pub mod config;
pub mod kv_cache_manager;
pub mod policy;
pub mod queue;
pub mod request;
pub mod scheduler;
pub mod swap;
pub mod tiers;

pub use config::{Config, Settings, CONFIG_FIELDS};
pub use policy::{Policy, POLICIES};
pub use scheduler::Scheduler;
pub use swap::{Swap, LINKS, PREEMPTIONS};

use super::EngineInfo;

/// This semantics' row of [`super::ENGINES`].
pub const ENGINE: EngineInfo = EngineInfo {
    name: "vllm",
    follows: "vLLM 0.33.0 (v1 scheduler, synchronous scheduling)",
    policies: &POLICIES,
    config_fields: CONFIG_FIELDS,
    engines: &["native", "reference"],
};
