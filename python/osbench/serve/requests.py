"""Requests for the serving engine: arrival times, prompt and output lengths, prompt content.

A request's prompt content is optional: ``blocks`` gives one content id per ``source_block``
tokens of the prompt (equal ids mean equal content, prefix-chained as Mooncake's
``hash_ids``), so that requests sharing a prefix share KV blocks in the engine's prefix
cache. Without it every prompt is unique.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from osbench import _checks

_MASK64 = (1 << 64) - 1


def mix64(x: int) -> int:
    """splitmix64's finaliser: a bijection on 64-bit integers that spreads every input bit."""
    x = (x + 0x9E3779B97F4A7C15) & _MASK64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK64
    return x ^ (x >> 31)


class Requests:
    """The requests of one run, in arrival order.

    ``arrival``: seconds (finite, >= 0, non-decreasing). ``prompt_len``, ``output_len``:
    tokens (>= 1). ``blocks``: optional prompt content, one sequence of integer ids per
    request, one id per ``source_block`` tokens (the last id may cover a partial block), e.g.
    Mooncake's ``hash_ids`` with ``source_block=512``. ``priority``: optional integers, smaller
    is more urgent (vLLM's convention), used by ``policy="priority"``.
    """

    def __init__(
        self,
        arrival: Any,
        prompt_len: Any,
        output_len: Any,
        blocks: Any = None,
        priority: Any = None,
        source_block: int = 512,
        name: str = "",
    ) -> None:
        self.arrival = np.ascontiguousarray(arrival, dtype=np.float64)
        self.prompt_len = np.ascontiguousarray(prompt_len, dtype=np.int64)
        self.output_len = np.ascontiguousarray(output_len, dtype=np.int64)
        n = len(self.arrival)
        if len(self.prompt_len) != n or len(self.output_len) != n:
            raise ValueError("prompt_len and output_len are not accepted: they need one entry per arrival")
        self.source_block = _checks.positive_int("source_block", source_block)
        self.blocks: Optional[list[np.ndarray]] = None
        if blocks is not None:
            self.blocks = [np.ascontiguousarray(b, dtype=np.int64) for b in blocks]
            if len(self.blocks) != n:
                raise ValueError(f"blocks is not accepted: it needs one sequence per request ({n})")
        self.priority = None if priority is None else np.ascontiguousarray(priority, dtype=np.int64)
        self.name = name

    def __len__(self) -> int:
        return len(self.arrival)

    def prompt_block_keys(self, block_size: int) -> tuple[np.ndarray, np.ndarray]:
        """The content key of every full ``block_size``-token block of each prompt:
        ``(keys, offsets)``, request ``i``'s keys being ``keys[offsets[i]:offsets[i + 1]]``
        (``prompt_len[i] // block_size`` of them; a trailing partial block has none, as it is
        never cached). Two blocks at the same position of two prompts have equal keys when
        their tokens are equal as far as ``blocks`` tells; the engine chains keys along the
        prompt, so a hit also needs the whole prefix before it to match. Without ``blocks``
        every key is unique to its request and position."""
        block_size = _checks.positive_int("block_size", block_size)
        counts = self.prompt_len // block_size
        offsets = np.zeros(len(self) + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        keys = np.empty(int(offsets[-1]), dtype=np.uint64)
        for i in range(len(self)):
            for k in range(int(counts[i])):
                keys[offsets[i] + k] = self._block_key(i, k, block_size)
        return keys, offsets

    def _block_key(self, i: int, k: int, block_size: int) -> int:
        """The key of block ``k`` of prompt ``i``: a hash of the source ids and token ranges
        it covers (or of the request and position when the content is not given)."""
        if self.blocks is None:
            return mix64((i << 32) ^ k ^ (1 << 63))
        start, end = k * block_size, (k + 1) * block_size
        key = 0
        src = self.blocks[i]
        for s in range(start // self.source_block, (end - 1) // self.source_block + 1):
            lo = max(start, s * self.source_block) - s * self.source_block
            hi = min(end, (s + 1) * self.source_block) - s * self.source_block
            content = int(src[s]) if s < len(src) else mix64((i << 32) ^ s ^ (1 << 62))
            key = mix64(key ^ mix64(content & _MASK64) ^ (lo << 40) ^ (hi << 20))
        return key
