//! Routers: which replica serves each request (`python/osbench/serve/routers/`, one file per
//! rule, equal to these decision for decision). What a router sees, and when, is
//! `python/osbench/serve/routers/base.py`'s docstring: its own book (outstanding requests and
//! their tokens), each replica's last reported step, the prompt blocks routed since, and, for
//! the prefix-aware rule, its own record of the prompts it routed.

pub mod kv_aware;
pub mod least_requests;
pub mod least_tokens;
pub mod prefix_aware;
pub mod random;
pub mod round_robin;

use crate::error::{invalid, Result};

/// Every router by name, in order (`osbench.serve.routers.ROUTERS`).
pub const ROUTERS: [&str; 6] =
    [round_robin::NAME, random::NAME, least_requests::NAME, least_tokens::NAME, prefix_aware::NAME, kv_aware::NAME];

/// The request being routed (`base.py: Request`), with its prompt's block keys at the
/// router's granularity (empty unless the router keeps a prefix record).
#[derive(Debug, Clone, Copy)]
pub struct Arrival<'a> {
    pub index: usize,
    pub arrival: f64,
    pub prompt_len: u64,
    pub output_len: u64,
    pub keys: &'a [u64],
}

/// One replica as the router sees it (`base.py: Replica`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct View {
    pub outstanding: u64,
    pub tokens: u64,
    pub blocks_used: u64,
    pub num_waiting: u64,
    pub num_running: u64,
    pub unreported_blocks: u64,
    pub usable_blocks: u64,
    pub block_size: u64,
}

impl View {
    /// Blocks free at the last report.
    pub fn free_blocks(&self) -> u64 {
        self.usable_blocks.saturating_sub(self.blocks_used)
    }
}

/// A routing rule, started afresh for each run.
pub trait Router {
    /// The index of the replica that serves `request` (below `replicas.len()`).
    fn route(&mut self, request: &Arrival<'_>, replicas: &[View]) -> usize;
}

/// A router and its parameters, as `router=` names it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Spec {
    RoundRobin,
    Random { seed: u64 },
    LeastRequests,
    LeastTokens,
    PrefixAware(prefix_aware::Params),
    KvAware,
}

impl Spec {
    /// The router `name` with its parameters (those it does not take are ignored).
    pub fn new(name: &str, seed: u64, prefix: prefix_aware::Params) -> Result<Spec> {
        Ok(match name {
            round_robin::NAME => Spec::RoundRobin,
            random::NAME => Spec::Random { seed },
            least_requests::NAME => Spec::LeastRequests,
            least_tokens::NAME => Spec::LeastTokens,
            prefix_aware::NAME => Spec::PrefixAware(prefix.checked()?),
            kv_aware::NAME => Spec::KvAware,
            _ => return Err(invalid("router", format!("{name:?}"), format!("one of {}", ROUTERS.join(", ")))),
        })
    }

    /// Whether the router reads the prompts' block keys.
    pub fn needs_keys(&self) -> bool {
        matches!(self, Spec::PrefixAware(_))
    }

    /// A fresh router for `replicas` replicas.
    pub fn build(&self, replicas: usize) -> Box<dyn Router> {
        match *self {
            Spec::RoundRobin => Box::new(round_robin::RoundRobin::default()),
            Spec::Random { seed } => Box::new(random::Random::new(seed)),
            Spec::LeastRequests => Box::new(least_requests::LeastRequests),
            Spec::LeastTokens => Box::new(least_tokens::LeastTokens),
            Spec::PrefixAware(p) => Box::new(prefix_aware::PrefixAware::new(p, replicas)),
            Spec::KvAware => Box::new(kv_aware::KvAware::default()),
        }
    }
}

/// The replica of the smallest `key`, the lowest index on ties (`base.py: least`).
pub fn least(replicas: &[View], key: impl Fn(&View) -> u64) -> usize {
    let mut best = 0;
    for (k, v) in replicas.iter().enumerate() {
        if key(v) < key(&replicas[best]) {
            best = k;
        }
    }
    best
}
