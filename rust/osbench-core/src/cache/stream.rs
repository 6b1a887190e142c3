//! Streaming replay: a trace larger than memory goes through one policy chunk by chunk.
//!
//! A [`Stream`] keeps what must outlive a chunk, the key -> dense id map and the policy, so
//! feeding a trace in pieces gives exactly the hits of one replay of the whole. Memory is the
//! chunk plus state proportional to the distinct keys and the capacity, not to the trace.

use super::curve::replay_cancellable;
use super::keys::{Key, KeyMap};
use super::{AnyPolicy, Options, NEVER};
use crate::error::{invalid, Result};
use std::sync::atomic::AtomicBool;

pub struct Stream {
    map: KeyMap,
    policy: AnyPolicy,
    /// Per-chunk buffers, kept to avoid reallocating for every chunk.
    ids: Vec<u32>,
    next: Vec<u64>,
    accesses: u64,
    hits: u64,
    /// Whether chunks come with sizes (set by the first non-empty chunk).
    sized: Option<bool>,
}

impl Stream {
    pub fn new(name: &str, capacity: u64, options: Options) -> Result<Stream> {
        let policy = AnyPolicy::new(name, capacity, 0, options)?;
        Ok(Stream {
            map: KeyMap::with_capacity(1 << 16),
            policy,
            ids: Vec::new(),
            next: Vec::new(),
            accesses: 0,
            hits: 0,
            sized: None,
        })
    }

    /// True when the policy needs each access's next use (OPT).
    pub fn needs_future(&self) -> bool {
        self.policy.needs_future()
    }

    /// Replay the next chunk of the trace; returns its hits. `next_access[i]` is the time
    /// (any increasing clock, e.g. the access index) of the next access to `keys[i]`, negative
    /// for never; only offline policies need it (pass an empty slice otherwise). `sizes`, if
    /// not empty, gives each access's object size (capacity in bytes); a stream must be fed
    /// sizes always or never.
    pub fn feed<K: Key>(&mut self, keys: &[K], next_access: &[i64], sizes: &[u64], cancel: &AtomicBool) -> Result<u64> {
        let sized = !sizes.is_empty() || keys.is_empty() && self.sized == Some(true);
        if !keys.is_empty() {
            match self.sized {
                Some(s) if s != sized => {
                    return Err(invalid(
                        "sizes",
                        if sized { "given" } else { "missing" },
                        "sizes on every chunk or on none",
                    ))
                }
                _ => self.sized = Some(sized),
            }
        }
        if self.needs_future() && next_access.len() != keys.len() {
            return Err(invalid(
                "next_access",
                format!("{} entries", next_access.len()),
                format!("{} entries, one per access (the policy needs each access's next use)", keys.len()),
            ));
        }
        self.ids.clear();
        self.ids.reserve(keys.len());
        for &k in keys {
            self.ids.push(self.map.id_of(k.bits())?);
        }
        self.next.clear();
        if self.needs_future() {
            self.next.extend(next_access.iter().map(|&t| if t < 0 { NEVER } else { t as u64 }));
        }
        let hits = replay_cancellable(&mut self.policy, &self.ids, sizes, &[], &self.next, &mut [], cancel)?;
        self.accesses += keys.len() as u64;
        self.hits += hits;
        Ok(hits)
    }

    pub fn accesses(&self) -> u64 {
        self.accesses
    }
    pub fn hits(&self) -> u64 {
        self.hits
    }
    /// Distinct keys seen so far.
    pub fn n_distinct(&self) -> usize {
        self.map.len()
    }
}
