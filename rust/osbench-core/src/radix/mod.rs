//! Radix-tree prefix caching (lecture section 5): the tree with reference counts and LRU leaf
//! eviction (`tree`), and the replay of a request stream through a cache of a given capacity,
//! one file per mode behind the [`Mode`] trait: `prefix` (the radix tree, RadixAttention) and
//! `whole` (an exact-match cache of whole prompts, what the lecture compares against).

mod prefix;
pub mod tree;
mod whole;

pub use prefix::PrefixMode;
pub use tree::{Handle, NodeView, RadixTree};
pub use whole::WholeMode;

use crate::cancel::Cancel;
use crate::error::{invalid, Result};
use crate::par;

/// The parameters a mode may read, as users name them.
pub const PAGE_SIZE: &str = "page_size";

/// One row of the mode table: a replay mode as users see it, and how to build it.
#[derive(Clone, Copy)]
pub struct ModeInfo {
    /// Lower case, as users name it.
    pub name: &'static str,
    /// The parameters it reads ([`PAGE_SIZE`]); it ignores the others.
    pub reads: &'static [&'static str],
    /// A fresh cache: (capacity in tokens or None for unlimited, page size).
    build: fn(Option<u64>, usize) -> Result<Box<dyn Mode + Send>>,
}

/// Every replay mode, in the order users see them. The one list of modes: the binding exports
/// it, and Python derives its names and the CLI's choices from it.
pub const MODES: [ModeInfo; 2] = [
    ModeInfo { name: "prefix", reads: &[PAGE_SIZE], build: |c, page| Ok(Box::new(PrefixMode::new(c, page)?)) },
    ModeInfo { name: "whole", reads: &[], build: |c, _| Ok(Box::new(WholeMode::new(c))) },
];

/// Requests served between two looks at the cancel flag.
const CHUNK: usize = 256;

/// A cache that serves one request at a time.
pub trait Mode {
    /// Serve one request: `prompt` is looked up, `stored` (the prompt, maybe followed by the
    /// output) is what the request leaves in the cache. Returns the prompt tokens that hit.
    fn serve(&mut self, prompt: &[i64], stored: &[i64]) -> u64;
    /// (tokens stored, entries or nodes, entries or nodes evicted, tokens evicted).
    fn counters(&self) -> (u64, u64, u64, u64);
}

/// Totals of one replay.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Stats {
    pub requests: u64,
    pub hit_tokens: u64,
    pub total_tokens: u64,
    /// Tokens held at the end.
    pub stored_tokens: u64,
    /// Nodes (prefix) or entries (whole) held at the end.
    pub nodes: u64,
    pub evicted_nodes: u64,
    pub evicted_tokens: u64,
}

/// A batch of token sequences in compressed form: sequence `i` is `tokens[offsets[i]..offsets[i+1]]`.
#[derive(Debug, Clone, Copy)]
pub struct Sequences<'a> {
    pub tokens: &'a [i64],
    pub offsets: &'a [i64],
}

impl<'a> Sequences<'a> {
    /// Check the offsets: they start at 0, never decrease, and end at `tokens.len()`.
    pub fn new(name: &'static str, tokens: &'a [i64], offsets: &'a [i64]) -> Result<Sequences<'a>> {
        if offsets.first().copied().unwrap_or(-1) != 0 {
            return Err(invalid(name, "offsets", "offsets starting at 0 (one more offset than sequences)"));
        }
        if offsets.windows(2).any(|w| w[1] < w[0]) {
            return Err(invalid(name, "offsets", "non-decreasing offsets"));
        }
        if offsets.last().copied() != Some(tokens.len() as i64) {
            return Err(invalid(name, "offsets", format!("offsets ending at the number of tokens, {}", tokens.len())));
        }
        Ok(Sequences { tokens, offsets })
    }
    pub fn len(&self) -> usize {
        self.offsets.len() - 1
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Sequence `i` (checked offsets make the slice valid).
    pub fn get(&self, i: usize) -> &'a [i64] {
        let a = self.offsets[i] as usize;
        let b = self.offsets[i + 1] as usize;
        &self.tokens[a..b]
    }
}

/// Serve `prompts` in order through `mode`; `outputs`, if given (one per prompt), are stored
/// after their prompt. `hits`, if not empty, receives each request's hit tokens.
pub fn replay(
    mode: &mut dyn Mode,
    prompts: Sequences<'_>,
    outputs: Option<Sequences<'_>>,
    hits: &mut [u64],
    cancel: &Cancel,
) -> Result<Stats> {
    let n = prompts.len();
    if let Some(o) = &outputs {
        if o.len() != n {
            return Err(invalid("outputs", format!("{} sequences", o.len()), format!("{n} sequences, one per prompt")));
        }
    }
    if !hits.is_empty() && hits.len() != n {
        return Err(invalid("hits", format!("{} entries", hits.len()), format!("{n} entries")));
    }
    let mut stats = Stats { requests: n as u64, ..Stats::default() };
    let mut buffer: Vec<i64> = Vec::new();
    // Progress: one unit a request.
    cancel.plan(n as u64);
    let mut reported = 0;
    for i in 0..n {
        if i % CHUNK == 0 {
            cancel.advance((i - reported) as u64)?;
            reported = i;
        }
        let prompt = prompts.get(i);
        let hit = match &outputs {
            Some(o) => {
                buffer.clear();
                buffer.extend_from_slice(prompt);
                buffer.extend_from_slice(o.get(i));
                mode.serve(prompt, &buffer)
            }
            None => mode.serve(prompt, prompt),
        };
        stats.hit_tokens += hit;
        stats.total_tokens += prompt.len() as u64;
        if let Some(h) = hits.get_mut(i) {
            *h = hit;
        }
    }
    cancel.progress((n - reported) as u64);
    let (stored, nodes, evicted_nodes, evicted_tokens) = mode.counters();
    stats.stored_tokens = stored;
    stats.nodes = nodes;
    stats.evicted_nodes = evicted_nodes;
    stats.evicted_tokens = evicted_tokens;
    Ok(stats)
}

/// Build a mode by name. `capacity` in tokens (None: unlimited); `page_size` for the tree.
pub fn new_mode(name: &str, capacity: Option<u64>, page_size: usize) -> Result<Box<dyn Mode + Send>> {
    let Some(info) = MODES.iter().find(|m| m.name == name) else {
        let names: Vec<&str> = MODES.iter().map(|m| m.name).collect();
        return Err(invalid("mode", format!("{name:?}"), format!("one of {}", names.join(", "))));
    };
    (info.build)(capacity, page_size)
}

#[cfg(test)]
mod golden;
#[cfg(test)]
mod tests;

/// Hit tokens at each capacity (same order as `capacities`; `None` = unlimited): one
/// independent replay per capacity, spread over `threads` threads.
pub fn curve(
    mode: &str,
    prompts: Sequences<'_>,
    outputs: Option<Sequences<'_>>,
    capacities: &[Option<u64>],
    page_size: usize,
    threads: usize,
    cancel: &Cancel,
) -> Result<Vec<Stats>> {
    // Build every mode first so a bad name or page size fails before any work.
    let modes = capacities.iter().map(|&c| new_mode(mode, c, page_size)).collect::<Result<Vec<_>>>()?;
    par::map(modes, threads, |mut m| replay(m.as_mut(), prompts, outputs, &mut [], cancel))
}
