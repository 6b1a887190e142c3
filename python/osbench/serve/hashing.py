"""Block hashes: the content of a KV block, chained over its prefix, as 64 bits; the same
functions as ``rust/osbench-core/src/serve/hash.rs``, bit for bit (equal hashes in both engines,
hence equal prefix-cache hits). Every engine semantics hashes blocks with these."""

from __future__ import annotations

from osbench.serve.requests import mix64

__all__ = ["ROOT_HASH", "block_hash", "mix64", "private_content"]

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
