//! Block hashes: the content of a KV block, chained over its prefix, as 64 bits.
//!
//! The same functions as `python/osbench/serve/requests.py: mix64` (the core's [`splitmix64`]) and
//! `python/osbench/serve/reference.py: block_hash, private_content`, bit for bit: equal
//! hashes in both engines, hence equal prefix-cache hits.

use crate::hash::splitmix64;

/// The parent hash of a prompt's first block (vLLM's `NONE_HASH`).
pub const ROOT_HASH: u64 = 0;

/// The hash of a block from its parent's hash and its own content key: equal hashes mean
/// equal prefixes (vLLM's `hash_block_tokens`, with a 64-bit mix standing for SHA-256).
#[inline]
pub fn block_hash(parent: u64, content: u64) -> u64 {
    splitmix64(parent ^ splitmix64(content))
}

/// The content key of block `k` of request `index` past the prompt's full blocks (the
/// trailing partial prompt block and the outputs): content of that request alone. The
/// shift wraps as Python's `& (2**64 - 1)` inside `mix64` does.
#[inline]
pub fn private_content(index: u64, k: u64) -> u64 {
    splitmix64((index << 32) ^ k ^ (1 << 61))
}
