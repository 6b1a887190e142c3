//! What SGLang's scheduler reads (`python/osbench/serve/sglang/config.py: EngineConfig`, under
//! SGLang 0.5.23's option names; the Python class checks the values and states where each
//! default comes from). [`Config::new`] checks again what would break the engine.

use super::policy::Policy;
use crate::error::{invalid, Result};
use crate::serve::fields::settings;

settings! {
    /// The settings as the binding passes them: one field a field of `EngineConfig`, in its
    /// order, by SGLang's option names, with its defaults ([`super::CONFIG_FIELDS`]).
    pub struct Settings {
        /// Tokens in the KV pool (`EngineConfig` has no default: 0 here, which is refused).
        max_total_tokens: u64,
        page_size: u64 = 1,
        /// One of [`super::POLICIES`].
        schedule_policy: String = String::from("fcfs"),
        /// None: SGLang's own choice ([`Config::running_cap`]).
        max_running_requests: Option<u64>,
        max_prefill_tokens: u64 = 16384,
        /// -1: no chunking (8192: SGLang's for an 80 GiB GPU).
        chunked_prefill_size: i64 = 8192,
        schedule_conservativeness: f64 = 1.0,
        enable_mixed_chunk: bool,
        context_len: u64 = 8192,
        /// The `random` policy's seed as Python's `random.seed` reads an int: its 32-bit words,
        /// least significant first (`[0]` for 0).
        random_seed: Vec<u32> = vec![0],
    }
}

/// A checked configuration.
#[derive(Debug, Clone)]
pub struct Config {
    pub max_total_tokens: u64,
    pub page_size: u64,
    pub policy: Policy,
    pub max_prefill_tokens: u64,
    /// The chunk budget, None without chunking (`managers/scheduler.py: init_chunked_prefill`).
    pub chunk_tokens: Option<u64>,
    /// Mixed chunks need chunking (`init_chunked_prefill`).
    pub mixed_chunk: bool,
    /// Requests that may run at once (`config.py: EngineConfig.running_cap`).
    pub running_cap: u64,
    /// `min(0.7 x schedule_conservativeness, 1)` (`NewTokenRatioTracker.from_config`).
    pub init_new_token_ratio: f64,
    pub random_seed_words: Vec<u32>,
    pub compensated_sum: bool,
}

impl Config {
    /// The configuration of `s`, checked. `compensated_sum`: whether the reference's Python sums
    /// floats with compensation (CPython 3.12 on), which the admission's sum of expected
    /// outputs repeats ([`super::adder::python_sum`]); not an SGLang option but how the
    /// interpreter the reference runs on adds.
    pub fn new(s: Settings, compensated_sum: bool) -> Result<Config> {
        const MAX: u64 = 1 << 62;
        for (name, v) in [
            ("max_total_tokens", s.max_total_tokens),
            ("page_size", s.page_size),
            ("max_prefill_tokens", s.max_prefill_tokens),
            ("context_len", s.context_len),
        ] {
            if !(1..=MAX).contains(&v) {
                return Err(invalid(name, v, "a positive integer up to 2**62"));
            }
        }
        let page = s.page_size;
        if s.max_total_tokens % page != 0 || s.max_total_tokens < 2 * page {
            return Err(invalid(
                "max_total_tokens",
                s.max_total_tokens,
                format!("a whole number of pages of page_size={page} tokens, at least two"),
            ));
        }
        let policy = Policy::from_name(&s.schedule_policy)?;
        let chunk_tokens = match s.chunked_prefill_size {
            -1 => None,
            c if c > 0 => Some(c as u64),
            c => return Err(invalid("chunked_prefill_size", c, "a positive integer, or -1 for no chunking")),
        };
        let ratio = s.schedule_conservativeness;
        if !(ratio.is_finite() && ratio > 0.0) {
            return Err(invalid("schedule_conservativeness", ratio, "a positive number"));
        }
        if s.random_seed.is_empty() {
            return Err(invalid("random_seed", "no words", "the seed's 32-bit words, least significant first"));
        }
        let tokens = s.max_total_tokens;
        // resolve_max_num_reqs: the option capped at half the pool; unset, from the context length.
        let running_cap = match s.max_running_requests {
            Some(0) => return Err(invalid("max_running_requests", 0, "a positive integer, or None")),
            Some(m) => m.min(tokens / 2).max(1),
            None => {
                let estimated = ((tokens as f64 / s.context_len as f64 * 512.0) as u64).clamp(2048, 4096);
                estimated.min(tokens / 2).max(1)
            }
        };
        Ok(Config {
            max_total_tokens: tokens,
            page_size: page,
            policy,
            max_prefill_tokens: s.max_prefill_tokens,
            chunk_tokens,
            mixed_chunk: chunk_tokens.is_some() && s.enable_mixed_chunk,
            running_cap,
            init_new_token_ratio: (0.7 * ratio).min(1.0),
            random_seed_words: s.random_seed,
            compensated_sum,
        })
    }

    pub fn num_pages(&self) -> u64 {
        self.max_total_tokens / self.page_size
    }
}
