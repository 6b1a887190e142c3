//! SGLang 0.5.23's scheduler (non-overlapped loop, one GPU, radix cache on), one file per
//! component, mirroring `python/osbench/serve/sglang/`, which states every rule and cites the
//! SGLang source it follows: [`config`], [`request`], [`kv`] (the token pool over the core's
//! radix tree, [`crate::radix::RadixTree`], the tree `osbench.radix` runs), [`policy`] (the
//! queue orders; [`random`] is Python's seeded `random` that `random` shuffles with),
//! [`adder`] (prefill admission) and [`scheduler`], which implements the engine's
//! [`crate::serve::Scheduler`].

pub mod adder;
pub mod config;
pub mod kv;
pub mod policy;
pub mod random;
pub mod request;
pub mod scheduler;

pub use config::{Config, Settings};
pub use scheduler::Scheduler;

use super::EngineInfo;

/// The queue policies reproduced, by SGLang's `--schedule-policy` names
/// (`managers/schedule_policy.py`), in the order `osbench.serve.sglang.POLICIES` lists them.
pub const POLICIES: [&str; 7] = ["fcfs", "lpm", "lof", "random", "dfs-weight", "hrrn", "shortest-prefill-first"];

/// The configuration's fields, in the order of `osbench.serve.sglang.EngineConfig`'s, by
/// SGLang's option names (declared once, by [`Settings`]).
pub const CONFIG_FIELDS: &[&str] = <Settings as super::fields::Fields>::NAMES;

/// This semantics' row of [`super::ENGINES`].
pub const ENGINE: EngineInfo = EngineInfo {
    name: "sglang",
    follows: "SGLang 0.5.23 (non-overlapped scheduler, radix cache)",
    policies: &POLICIES,
    config_fields: CONFIG_FIELDS,
    engines: &["native", "reference"],
};
