//! A request as the engine sees it (`vllm/v1/request.py: Request`): its progress, its status
//! and the hashes of its full blocks.

use crate::error::{try_grow, Result};
use crate::serve::hash::{block_hash, private_content, ROOT_HASH};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Waiting,
    Running,
    Preempted,
    Finished,
}

#[derive(Debug, Clone)]
pub struct Request {
    pub index: u32,
    pub arrival: f64,
    /// Smaller is more urgent (vLLM's convention).
    pub priority: i64,
    pub prompt_len: u64,
    pub output_len: u64,
    /// Its predicted output length (`sjf`, `srpt`; `python/osbench/serve/vllm/prediction.py`).
    pub predicted: u64,
    /// Output tokens it had at `mlfq`'s last boost: its attained service counts from there.
    pub service_base: u64,
    pub status: Status,
    /// Tokens whose KV is in the cache (or being computed in the current step).
    pub num_computed_tokens: u64,
    pub num_output_tokens: u64,
    /// The most tokens its KV has held: a token scheduled below this is computed again.
    pub computed_high: u64,
    /// Host blocks holding its KV while it waits, swapped out (0: none).
    pub swapped_blocks: u64,
    /// One hash per full block of the known tokens (prompt, then outputs), chained
    /// (`Request.update_block_hashes`); empty and never extended without prefix caching, or
    /// for a request without content.
    pub block_hashes: Vec<u64>,
    hashed: bool,
    /// With prefix caching, a prompt without content: every block of it is unique to this
    /// request and position, so no other request can hit it. Its blocks are cached under
    /// their position alone (`BlockPool::cache_private_block`), never hashed: the same cache,
    /// as vLLM's with the hashes `Requests.prompt_block_keys` gives such a prompt, which equal
    /// no other hash (up to 64-bit collisions).
    pub private: bool,
    /// Prompt tokens whose KV a prefill instance sent, taken as computed at its first
    /// admission (`request.py: Request.external`).
    pub external: u64,
}

impl Request {
    /// A new arrival. `keys`: the content keys of its prompt's full blocks
    /// (`Requests.prompt_block_keys`), or None for a prompt without content; `caching`: prefix
    /// caching is on (else the keys are ignored).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        index: u32,
        arrival: f64,
        priority: i64,
        prompt_len: u64,
        output_len: u64,
        predicted: u64,
        caching: bool,
        keys: Option<&[u64]>,
    ) -> Self {
        let keys = if caching { keys } else { None };
        let mut block_hashes = Vec::new();
        if let Some(keys) = keys {
            block_hashes.reserve_exact(keys.len());
            let mut parent = ROOT_HASH;
            for &key in keys {
                parent = block_hash(parent, key);
                block_hashes.push(parent);
            }
        }
        Request {
            index,
            arrival,
            priority,
            prompt_len,
            output_len,
            predicted,
            service_base: 0,
            status: Status::Waiting,
            num_computed_tokens: 0,
            num_output_tokens: 0,
            computed_high: 0,
            swapped_blocks: 0,
            block_hashes,
            hashed: keys.is_some(),
            private: caching && keys.is_none(),
            external: 0,
        }
    }

    /// Prompt and output tokens so far.
    #[inline]
    pub fn num_tokens(&self) -> u64 {
        self.prompt_len + self.num_output_tokens
    }

    /// `count` more output tokens (`append_output_token_ids`), and the hash of every block
    /// they fill: the content of those blocks is the request's own.
    pub fn append_output_tokens(&mut self, count: u64, block_size: u64) -> Result<()> {
        self.num_output_tokens += count;
        if self.hashed {
            let full = self.num_tokens() / block_size;
            let more = full.saturating_sub(self.block_hashes.len() as u64);
            try_grow(&mut self.block_hashes, more as usize, "a request's block hashes")?;
            while (self.block_hashes.len() as u64) < full {
                let k = self.block_hashes.len() as u64;
                let parent = self.block_hashes.last().copied().unwrap_or(ROOT_HASH);
                self.block_hashes.push(block_hash(parent, private_content(u64::from(self.index), k)));
            }
        }
        Ok(())
    }

    /// Its full blocks so far that have a prefix-cache key: as many as its hashes, or for a
    /// private request every full block of its tokens.
    pub fn num_keyed_blocks(&self, block_size: u64) -> u64 {
        if self.private {
            self.num_tokens() / block_size
        } else {
            self.block_hashes.len() as u64
        }
    }

    /// A finished request keeps only its counts.
    pub fn release(&mut self) {
        self.block_hashes = Vec::new();
    }
}
