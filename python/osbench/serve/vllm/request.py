"""A request as vLLM's scheduler sees it (``vllm/v1/request.py: Request``)."""

from __future__ import annotations

from typing import Optional

import numpy as np

from osbench.serve.hashing import ROOT_HASH, block_hash, private_content

WAITING, RUNNING, PREEMPTED, FINISHED = "waiting", "running", "preempted", "finished"


class Request:
    """A request as the engine sees it (``request.py: Request``): its progress, its status and
    the hashes of its full blocks."""

    __slots__ = (
        "arrival",
        "block_hashes",
        "hashed",
        "index",
        "num_computed_tokens",
        "num_output_tokens",
        "num_preemptions",
        "output_len",
        "predicted",
        "priority",
        "prompt_len",
        "service_base",
        "status",
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
        self.block_hashes: list[int] = []
        """One hash per full block of the known tokens (prompt, then outputs):
        ``request.py: Request.update_block_hashes``. Empty without prefix caching."""
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

    def append_output_token(self, block_size: int) -> None:
        """``request.py: Request.append_output_token_ids``: one more token, and the hash of
        any block it fills."""
        self.num_output_tokens += 1
        if self.hashed:
            hashes = self.block_hashes
            while (len(hashes) + 1) * block_size <= self.num_tokens:
                parent = hashes[-1] if hashes else ROOT_HASH
                hashes.append(block_hash(parent, private_content(self.index, len(hashes))))
