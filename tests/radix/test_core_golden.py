"""The core's golden radix replays (``rust/osbench-core/src/radix/golden.rs``) held to the
reference engine: the same seeded request stream, regenerated here, replayed through
``osbench.radix.reference``; a changed total in the core's table, or a generator that drifted
from its twin below, fails here."""

from __future__ import annotations

import re
from typing import Callable

from osbench.host.reference import SplitMix64
from osbench.radix import Requests, replay


def golden_requests(seed: int, n: int) -> Requests:
    """The twin of the core's ``golden_requests``: retries, multi-turn conversations, four
    system prompts, tokens from 50 values."""
    rng = SplitMix64(seed)
    systems = [[s * 100 + i for i in range(16)] for s in range(4)]
    conversations: list[list[int]] = []
    prompts: list[list[int]] = []
    outputs: list[list[int]] = []

    def tokens(count: int) -> list[int]:
        return [1000 + rng.below(50) for _ in range(count)]

    for _ in range(n):
        if prompts and rng.below(8) == 0:
            prompt = prompts[len(prompts) - 1 - rng.below(min(len(prompts), 4))]
            outputs.append(tokens(1 + rng.below(8)))
            prompts.append(prompt)
            continue
        if conversations and rng.below(2) == 0:
            prompt = conversations.pop(rng.below(len(conversations)))
        else:
            a, b = rng.below(4), rng.below(4)
            prompt = list(systems[min(a, b)])
        prompt = prompt + tokens(2 + rng.below(16))
        output = tokens(1 + rng.below(8))
        conversations.append(prompt + output)
        if len(conversations) > 8:
            conversations.pop(0)
        prompts.append(prompt)
        outputs.append(output)
    return Requests.from_sequences(prompts, outputs)


def test_core_golden_replays_are_the_reference_engines(core_table: Callable[[str, str], str]) -> None:
    rows = re.findall(
        r'\("(\w+)", (None|Some\(\d+\)), (\d+), (true|false), \[([\d, ]+)\]\)',
        core_table("radix/golden.rs", "GOLDEN_REPLAYS"),
    )
    assert len(rows) == 7
    reqs = golden_requests(3, 300)
    assert reqs.total_tokens == 12_335
    for mode, capacity, page, outputs, totals in rows:
        cap = None if capacity == "None" else int(capacity[5:-1])
        r = replay(
            reqs, cap, mode=mode, page_size=int(page), outputs=outputs == "true", per_request=True, engine="reference"
        )
        assert r.per_request is not None
        weighted = sum((i + 1) * int(h) for i, h in enumerate(r.per_request))
        got = [r.hit_tokens, r.stored_tokens, r.nodes, r.evicted_nodes, r.evicted_tokens, weighted]
        assert got == [int(x) for x in totals.split(", ")], (mode, capacity, page, outputs)
