"""Serving inputs: building requests and their prompt block keys.

- generate: 100,000 requests of about 10,000 prompt tokens, Poisson arrivals; plain, with
  shared system prompts (content in 16-token blocks), and as multi-turn conversations.
- block keys: the 16-token keys of those prompts (62.5M blocks) with content (one source
  block per engine block, and 32-token engine blocks spanning two) and without.
- generate large: 10M requests (Poisson arrivals with lognormal lengths; gamma arrivals with
  shared system prompts; about 8.75M turns of 2.5M conversations), generated in bounded steps.
- read: the real traces, when ``OSBENCH_DATA_DIR`` holds them.

Under ``--benchmark-disable`` (``make test``) everything runs once on 1,000 requests of
about 1,000 tokens.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pytest

from osbench.serve import Lognormal, Requests, SystemPrompts


def sizes(full: bool) -> tuple[int, int]:
    """(requests, mean prompt tokens)."""
    return (100_000, 10_000) if full else (1_000, 1_000)


def once(benchmark: Any, fn: Any) -> Any:
    return benchmark.pedantic(fn, rounds=3, iterations=1, warmup_rounds=0)


def generate(kind: str, n: int, tokens: int) -> Requests:
    if kind == "plain":
        return Requests.poisson(n, 10.0, prompt_len=tokens, output_len=Lognormal(200, 1.0), seed=1)
    if kind == "system-prompts":
        sp = SystemPrompts(count=8, length=tokens // 5, fraction=0.5)
        return Requests.poisson(n, 10.0, prompt_len=tokens - tokens // 5, output_len=200, system_prompts=sp, seed=1)
    # about 4 turns of 2 * tokens / 8 tokens each: prompts average about tokens
    return Requests.conversations(n // 4, 2.5, turns=(3, 5), message_len=tokens // 8, answer_len=tokens // 8, seed=1)


@pytest.mark.benchmark(group="serve-generate")
@pytest.mark.parametrize("row", ["plain", "system-prompts", "conversations"])
def test_generate(benchmark: Any, full_size: bool, row: str) -> None:
    n, tokens = sizes(full_size)
    r = once(benchmark, lambda: generate(row, n, tokens))
    assert abs(len(r) / n - 1) < 0.1 and (r.blocks is None) == (row == "plain")


def generate_large(kind: str, n: int) -> Requests:
    short = Lognormal(128, 1.0)
    if kind == "poisson":
        return Requests.poisson(n, 100.0, prompt_len=short, output_len=Lognormal(64, 1.0), seed=1)
    if kind == "gamma-system-prompts":
        sp = SystemPrompts(count=8, length=64, fraction=0.5)
        return Requests.gamma(n, 100.0, 2.0, prompt_len=short, output_len=64, system_prompts=sp, seed=1)
    return Requests.conversations(n // 4, 100.0, turns=(1, 6), message_len=64, answer_len=short, seed=1)


@pytest.mark.benchmark(group="serve-generate-large")
@pytest.mark.parametrize("row", ["poisson", "gamma-system-prompts", "conversations"])
def test_generate_large(benchmark: Any, full_size: bool, row: str) -> None:
    n = 10_000_000 if full_size else 1_000
    r = once(benchmark, lambda: generate_large(row, n))
    assert abs(len(r) / n - 1) < 0.2 and (r.block_ids is None) == (row == "poisson")
    benchmark.extra_info["requests"] = len(r)


@pytest.fixture(scope="module")
def with_content(full_size: bool) -> Requests:
    n, tokens = sizes(full_size)
    return generate("system-prompts", n, tokens)


@pytest.mark.benchmark(group="serve-block-keys")
@pytest.mark.parametrize("row", ["content-16", "content-32", "no-content-16"])
def test_block_keys(benchmark: Any, full_size: bool, with_content: Requests, row: str) -> None:
    r = (
        with_content
        if row.startswith("content")
        else Requests(with_content.arrival, with_content.prompt_len, with_content.output_len)
    )
    block_size = int(row.rsplit("-", 1)[1])
    keys, offsets = once(benchmark, lambda: r.prompt_block_keys(block_size))
    assert len(keys) == int((r.prompt_len // block_size).sum()) == offsets[-1]
    benchmark.extra_info["blocks"] = len(keys)
    if row == "content-16":  # requests with the same system prompt share its blocks
        first = keys[offsets[:-1]]
        assert len(np.unique(first)) < len(r)


@pytest.mark.benchmark(group="serve-read")
@pytest.mark.parametrize("row", ["azure-conv-2023", "azure-code-2023", "mooncake-conversation", "mooncake-synthetic"])
def test_read(benchmark: Any, row: str) -> None:
    if not os.environ.get("OSBENCH_DATA_DIR"):
        pytest.skip("OSBENCH_DATA_DIR is not set: the real traces are not available")
    r = once(benchmark, lambda: Requests.read(row))
    assert len(r) > 1000
