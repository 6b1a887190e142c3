//! Streaming replay: a trace larger than memory goes through one policy chunk by chunk.
//!
//! A [`Stream`] keeps what must outlive a chunk, the key -> dense id map and the policy, so
//! feeding a trace in pieces gives exactly the hits of one replay of the whole. Memory is the
//! chunk plus state proportional to the distinct keys and the capacity, not to the trace.

use super::accesses::Accesses;
use super::keys::KeyMap;
use super::{AnyPolicy, Options, NEVER};
use crate::error::{check_len, invalid, Result};
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

    /// True when the policy needs each access's next use (an offline policy).
    pub fn needs_future(&self) -> bool {
        self.policy.info().offline
    }

    /// Replay the next chunk of the trace (keys as 64-bit patterns); returns its hits.
    /// `next_access[i]` is the time (any increasing clock, e.g. the access index) of the next
    /// access to `keys[i]`, negative for never; offline policies need it. `sizes` gives each
    /// access's object size (capacity in bytes); a stream is fed sizes always or never.
    pub fn feed(
        &mut self,
        keys: &[u64],
        next_access: Option<&[i64]>,
        sizes: Option<&[u64]>,
        cancel: &AtomicBool,
    ) -> Result<u64> {
        if !keys.is_empty() {
            let sized = sizes.is_some();
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
        self.next.clear();
        if self.needs_future() {
            let next = next_access.unwrap_or(&[]);
            check_len("next_access", next.len(), keys.len(), "key (the policy needs each access's next use)")?;
            self.next.extend(next.iter().map(|&t| if t < 0 { NEVER } else { t as u64 }));
        }
        self.ids.clear();
        self.ids.reserve(keys.len());
        for &k in keys {
            self.ids.push(self.map.id_of(k)?);
        }
        let mut accesses = Accesses::new(&self.ids, self.map.len())?;
        if let Some(sizes) = sizes {
            accesses = accesses.with_sizes(sizes)?;
        }
        if self.needs_future() {
            accesses = accesses.with_next_use(&self.next)?;
        }
        let hits = self.policy.replay(&accesses, &mut [], cancel)?;
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
