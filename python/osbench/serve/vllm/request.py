"""A request as vLLM's scheduler sees it (``vllm/v1/request.py: Request``)."""

from __future__ import annotations

from typing import Optional

import numpy as np

from osbench.serve.hashing import ROOT_HASH, block_hash, private_content

WAITING, RUNNING, PREEMPTED, FINISHED = "waiting", "running", "preempted", "finished"


def private_tag(index: int, k: int) -> int:
    """The prefix-cache key of block ``k`` of request ``index`` when its prompt has no content:
    below 0, so equal to no block hash (64-bit, from 0), and to no other tag. It stands for the
    hash such a block would have (:meth:`Requests.prompt_block_keys` without ``blocks``, then
    :func:`private_content`), which equals no other hash either (up to 64-bit collisions): the
    cache sees the same equalities, without a hash computed."""
    return -1 - ((index << 32) | k)


class Request:
    """A request as the engine sees it (``request.py: Request``): its progress, its status and
    the hashes of its full blocks."""

    __slots__ = (
        "arrival",
        "block_hashes",
        "computed_high",
        "external",
        "hashed",
        "index",
        "num_computed_tokens",
        "num_output_tokens",
        "num_preemptions",
        "output_len",
        "predicted",
        "priority",
        "private",
        "prompt_len",
        "service_base",
        "status",
        "swapped_blocks",
    )

    def __init__(
        self,
        index: int,
        arrival: float,
        priority: int,
        prompt_len: int,
        output_len: int,
        keys: Optional[np.ndarray],
        predicted: Optional[int] = None,
        private: bool = False,
        external: int = 0,
    ) -> None:
        self.index = index
        self.arrival = arrival
        self.priority = priority
        self.prompt_len = prompt_len
        self.output_len = output_len
        self.predicted = output_len if predicted is None else predicted
        """Its predicted output length (``sjf``, ``srpt``: :mod:`osbench.serve.vllm.prediction`)."""
        self.service_base = 0
        """Output tokens it had at the last ``mlfq`` boost: its attained service counts from there."""
        self.status = WAITING
        self.num_computed_tokens = 0
        """Tokens whose KV is in the cache (or being computed in the current step)."""
        self.num_output_tokens = 0
        self.num_preemptions = 0
        self.computed_high = 0
        """The most tokens its KV has held: a token scheduled below this is computed again."""
        self.swapped_blocks = 0
        """Host blocks holding its KV while it waits, swapped out (0: none)."""
        self.external = external
        """Prompt tokens whose KV another instance computed and sent (a disaggregated prefill:
        the KV connector's remote prefill), taken as computed at its first admission."""
        self.block_hashes: list[int] = []
        """One hash per full block of the known tokens (prompt, then outputs):
        ``request.py: Request.update_block_hashes``. Empty without prefix caching, and for a
        private request."""
        self.private = private and keys is None
        """Prefix caching on, a prompt without content: its blocks are keyed by :func:`private_tag`,
        not hashed (only the request itself can hit them, after a preemption)."""
        self.hashed = keys is not None
        if keys is not None:
            parent = ROOT_HASH
            for key in keys.tolist():
                parent = block_hash(parent, key)
                self.block_hashes.append(parent)

    @property
    def num_tokens(self) -> int:
        """Prompt and output tokens so far (``request.py: Request.num_tokens``)."""
        return self.prompt_len + self.num_output_tokens

    def num_keyed_blocks(self, block_size: int) -> int:
        """Its full blocks so far that have a prefix-cache key (:meth:`block_key`)."""
        return self.num_tokens // block_size if self.private else len(self.block_hashes)

    def block_key(self, k: int) -> int:
        """The prefix-cache key of its block ``k``: the block's hash, or its private tag."""
        return private_tag(self.index, k) if self.private else self.block_hashes[k]

    def append_output_token(self, block_size: int) -> None:
        """``request.py: Request.append_output_token_ids``: one more token, and the hash of
        any block it fills."""
        self.num_output_tokens += 1
        if self.hashed:
            hashes = self.block_hashes
            while (len(hashes) + 1) * block_size <= self.num_tokens:
                parent = hashes[-1] if hashes else ROOT_HASH
                hashes.append(block_hash(parent, private_content(self.index, len(hashes))))
