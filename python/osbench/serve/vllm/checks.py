"""What vLLM's scheduler cannot serve, refused before a run starts (both engines of the vLLM
semantics and the vLLM peer read it)."""

from __future__ import annotations

import numpy as np

from osbench.errors import ArgumentError
from osbench.serve.requests import Requests
from osbench.serve.run import check_types, refused
from osbench.serve.vllm.config import EngineConfig


def check_requests(requests: Requests, config: EngineConfig) -> np.ndarray:
    """Refuse what no engine can serve, before it starts; return the priorities (zeros when
    ``requests`` has none). :class:`Requests` has checked its own arrays (lengths of at least one
    token, arrivals finite and in order, one priority per request); this checks them against
    the configuration.

    A request is refused when its prompt and output do not fit in ``max_model_len`` (vLLM would
    cut its output short), or when it needs more KV blocks than the whole pool even alone (it
    would preempt itself forever): its last step computes ``prompt_len + output_len - 1`` tokens.
    """
    check_types(requests, config, EngineConfig, "osbench.serve.EngineConfig")
    total = requests.prompt_len + requests.output_len
    too_long = np.flatnonzero(total > config.max_model_len)
    if len(too_long):
        raise ArgumentError(
            f"{refused(too_long)}: prompt_len + output_len exceeds max_model_len={config.max_model_len} "
            "(leave such requests out first: osbench.serve.source.fit, or the command line's --fit)"
        )
    blocks_needed = -(-(total - 1) // config.block_size)
    too_big = np.flatnonzero(blocks_needed > config.usable_blocks)
    if len(too_big):
        raise ArgumentError(
            f"{refused(too_big)}: prompt_len + output_len - 1 tokens need more KV blocks of "
            f"block_size={config.block_size} tokens than the {config.usable_blocks} the pool has "
            f"(num_blocks={config.num_blocks}, one is the null block)"
        )
    if requests.priority is None:
        return np.zeros(len(requests), dtype=np.int64)
    return requests.priority


__all__ = ["check_requests"]
