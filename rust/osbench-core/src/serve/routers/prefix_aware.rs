//! `prefix-aware` (`prefix_aware.py`, which states and cites SGLang's rules: its cache-aware
//! routing, `sgl-router/src/policies/cache_aware.rs: select_worker`): the router's own record
//! of the prompts it routed where, over the prompts' chained block keys; the least loaded
//! replica when the load is imbalanced past both thresholds, else the replica holding the
//! longest recorded prefix when its match rate passes `cache_threshold`, else the replica of
//! the smallest record.

use super::{Arrival, Router, View};
use crate::error::{invalid, Result};
use crate::serve::hash::{block_hash, ROOT_HASH};
use std::collections::HashMap;

pub const NAME: &str = "prefix-aware";

/// SGLang's parameters (its defaults in `prefix_aware.py`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Params {
    pub cache_threshold: f64,
    pub balance_abs_threshold: u64,
    pub balance_rel_threshold: f64,
    /// Tokens per block of the record (the keys' granularity).
    pub block_size: u64,
}

impl Params {
    pub fn checked(self) -> Result<Params> {
        if !(0.0..=1.0).contains(&self.cache_threshold) {
            return Err(invalid("cache_threshold", self.cache_threshold, "a number in [0, 1]"));
        }
        if !(self.balance_rel_threshold.is_finite() && self.balance_rel_threshold >= 0.0) {
            return Err(invalid("balance_rel_threshold", self.balance_rel_threshold, "a finite number >= 0"));
        }
        if self.block_size == 0 {
            return Err(invalid("block_size", 0, "a positive number of tokens"));
        }
        Ok(self)
    }
}

pub struct PrefixAware {
    p: Params,
    /// Chained block hash -> (replica, the last request routed there with that prefix).
    record: HashMap<u64, Vec<(usize, usize)>>,
    /// Blocks in each replica's record.
    sizes: Vec<u64>,
    hashes: Vec<u64>,
}

impl PrefixAware {
    pub fn new(p: Params, replicas: usize) -> Self {
        PrefixAware { p, record: HashMap::new(), sizes: vec![0; replicas], hashes: Vec::new() }
    }

    /// SGLang's test: both thresholds passed.
    pub fn imbalanced(&self, hi: u64, lo: u64) -> bool {
        hi - lo > self.p.balance_abs_threshold && hi as f64 > lo as f64 * self.p.balance_rel_threshold
    }
}

impl Router for PrefixAware {
    fn route(&mut self, request: &Arrival<'_>, replicas: &[View]) -> usize {
        self.hashes.clear();
        let mut parent = ROOT_HASH;
        for &key in request.keys {
            parent = block_hash(parent, key);
            self.hashes.push(parent);
        }
        let hi = replicas.iter().map(|v| v.outstanding).max().unwrap_or(0);
        let lo = replicas.iter().map(|v| v.outstanding).min().unwrap_or(0);
        let chosen = if self.imbalanced(hi, lo) {
            super::least(replicas, |v| v.outstanding)
        } else {
            let mut matched = 0u64;
            let mut holders: &[(usize, usize)] = &[];
            for h in &self.hashes {
                match self.record.get(h) {
                    Some(found) => {
                        matched += 1;
                        holders = found;
                    }
                    None => break,
                }
            }
            let rate = (matched * self.p.block_size) as f64 / request.prompt_len as f64;
            if rate > self.p.cache_threshold {
                // The replica routed that prefix last (the lowest index on ties, which cannot occur).
                let mut best = holders[0];
                for &(k, last) in holders {
                    if last > best.1 || (last == best.1 && k < best.0) {
                        best = (k, last);
                    }
                }
                best.0
            } else {
                let mut best = 0;
                for k in 1..self.sizes.len() {
                    if self.sizes[k] < self.sizes[best] {
                        best = k;
                    }
                }
                best
            }
        };
        for &h in &self.hashes {
            let holders = self.record.entry(h).or_default();
            match holders.iter_mut().find(|(k, _)| *k == chosen) {
                Some(entry) => entry.1 = request.index,
                None => {
                    holders.push((chosen, request.index));
                    self.sizes[chosen] += 1;
                }
            }
        }
        chosen
    }
}
