"""A prompt already in the prefix cache, whole: vLLM never serves the last prompt token from
the cache (``kv_cache_manager.py: get_computed_blocks`` caps a hit at ``num_tokens - 1``, so
that the step computes the logits of the next token), and a hit is a number of whole blocks. A
fully cached prompt that fills its last block therefore hits one block less than it holds; one
whose last block is partial (never cached) hits all its full blocks. Fixed cases, each telling
the cap apart from its neighbours (no cap, a cap of one token rather than one block)."""

from __future__ import annotations

import pytest

import osbench as ob

CONFIG = {"num_blocks": 64, "max_num_batched_tokens": 64, "max_num_seqs": 4, "max_model_len": 64}
STEP = ob.serve.StepTime.linear(0.01, 0.0, 0.0, 0.0)


def cached_tokens(prompt_len: int, block_size: int, shared_blocks: int, engine: str) -> int:
    """The cache hit of a second request whose prompt starts with ``shared_blocks`` blocks of
    the first's (of ``block_size`` tokens each), arriving after the first has finished."""
    blocks = -(-prompt_len // block_size)
    first = list(range(1, blocks + 1))
    second = first[:shared_blocks] + [100 + i for i in range(blocks - shared_blocks)]
    reqs = ob.serve.Requests(
        [0.0, 100.0], [prompt_len, prompt_len], [2, 2], blocks=[first, second], source_block=block_size
    )
    run = ob.serve.simulate(reqs, engine=engine, step_time=STEP, block_size=block_size, **CONFIG)
    assert int(run.cached_tokens[0]) == 0, "the first request finds nothing cached"
    return int(run.cached_tokens[1])


@pytest.mark.parametrize("engine", ["native", "reference"])
@pytest.mark.parametrize(
    ("prompt_len", "block_size", "shared", "hit"),
    [
        (8, 4, 2, 4),  # fully cached and block-aligned: the last block is recomputed
        (10, 4, 3, 8),  # fully cached, last block partial: both full blocks hit
        (12, 4, 2, 8),  # a prefix of two blocks of three, aligned: no cap reached
        (8, 1, 8, 7),  # one-token blocks: the cap is the prompt less one token
        (4, 4, 1, 0),  # one block, fully cached: nothing hits
    ],
)
def test_a_fully_cached_prompt_recomputes_its_last_token(
    engine: str, prompt_len: int, block_size: int, shared: int, hit: int
) -> None:
    assert cached_tokens(prompt_len, block_size, shared, engine) == hit
