//! Whole mode: an exact-match cache of whole prompts with LRU replacement, capacity in tokens.
//!
//! A prompt hits (all its tokens) only if the very same prompt is cached. On a miss the prompt is
//! stored if it fits at all, after evicting least recently used prompts until it fits. Outputs
//! are not part of the key and are not stored.

use super::tree::MixBuild;
use super::Mode;
use std::collections::{BTreeMap, HashMap};

pub struct WholeMode {
    capacity: Option<u64>,
    /// Prompt -> its last-use tick.
    entries: HashMap<Vec<i64>, u64, MixBuild>,
    /// Last-use tick -> prompt length and prompt, in LRU order.
    order: BTreeMap<u64, Vec<i64>>,
    clock: u64,
    used: u64,
    evicted_entries: u64,
    evicted_tokens: u64,
}

impl WholeMode {
    pub fn new(capacity: Option<u64>) -> WholeMode {
        WholeMode {
            capacity,
            entries: HashMap::default(),
            order: BTreeMap::new(),
            clock: 0,
            used: 0,
            evicted_entries: 0,
            evicted_tokens: 0,
        }
    }
}

impl Mode for WholeMode {
    fn serve(&mut self, prompt: &[i64], _stored: &[i64]) -> u64 {
        self.clock += 1;
        let now = self.clock;
        if let Some(t) = self.entries.get_mut(prompt) {
            let old = std::mem::replace(t, now);
            if let Some(key) = self.order.remove(&old) {
                self.order.insert(now, key);
            }
            return prompt.len() as u64;
        }
        let len = prompt.len() as u64;
        let cap = self.capacity.unwrap_or(u64::MAX);
        if len > cap {
            return 0;
        }
        while self.used + len > cap {
            let Some((_, key)) = self.order.pop_first() else { break };
            self.entries.remove(&key);
            self.used -= key.len() as u64;
            self.evicted_entries += 1;
            self.evicted_tokens += key.len() as u64;
        }
        self.entries.insert(prompt.to_vec(), now);
        self.order.insert(now, prompt.to_vec());
        self.used += len;
        0
    }
    fn counters(&self) -> (u64, u64, u64, u64) {
        (self.used, self.entries.len() as u64, self.evicted_entries, self.evicted_tokens)
    }
}
