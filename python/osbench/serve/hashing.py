"""Block hashes: the content of a KV block, chained over its prefix, as 64 bits; the same
functions as ``rust/osbench-core/src/serve/hash.rs``, bit for bit (equal hashes in both engines,
hence equal prefix-cache hits). Every engine semantics hashes blocks with these, and the prompts'
content keys (:meth:`Requests.prompt_block_keys <osbench.serve.Requests.prompt_block_keys>`)
are mixed with :func:`mix64_array`."""

from __future__ import annotations

import numpy as np

__all__ = ["ROOT_HASH", "block_hash", "mix64", "mix64_array", "private_content"]

_MASK64 = (1 << 64) - 1


def mix64(x: int) -> int:
    """splitmix64's finaliser: a bijection on 64-bit integers that spreads every input bit."""
    x = (x + 0x9E3779B97F4A7C15) & _MASK64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK64
    return x ^ (x >> 31)


def mix64_array(x: np.ndarray) -> np.ndarray:
    """:func:`mix64` of every element of a uint64 array (a new array; arithmetic wraps mod 2**64)."""
    x = x + np.uint64(0x9E3779B97F4A7C15)
    x ^= x >> np.uint64(30)
    x *= np.uint64(0xBF58476D1CE4E5B9)
    x ^= x >> np.uint64(27)
    x *= np.uint64(0x94D049BB133111EB)
    x ^= x >> np.uint64(31)
    return x


ROOT_HASH = 0
"""The parent hash of a prompt's first block (vLLM's ``NONE_HASH``)."""


def block_hash(parent: int, content: int) -> int:
    """The hash of a block: of its parent's hash and its own content, so that equal hashes mean
    equal prefixes (``core/kv_cache_utils.py: hash_block_tokens`` hashes the parent hash and the
    block's tokens with SHA-256; a 64-bit mix of 64-bit content keys stands for it here)."""
    return mix64(parent ^ mix64(content))


def private_content(index: int, k: int) -> int:
    """The content key of block ``k`` of request ``index`` once it reaches past the prompt's full
    blocks: the trailing partial prompt block and the output tokens belong to the request alone
    (equal only to themselves, which is how a request recomputed after a preemption finds its
    own blocks still cached)."""
    return mix64((index << 32) ^ k ^ (1 << 61))
