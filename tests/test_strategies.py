"""The strategies of ``tests/strategies.py`` reach the behaviour they are meant to exercise.
Each test draws a fixed sample (derandomized: the same cases every run) and asserts how often
the behaviour happens; the README's testing section quotes these figures."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
from hypothesis import Phase, given, settings
from hypothesis import strategies as st
from strategies import cache_cases, evictions, preemptions, radix_cases, sized_cases, workloads

import osbench as ob

SAMPLE = 200


def sample(strategy: st.SearchStrategy[Any], measure: Callable[[Any], Any], n: int = SAMPLE) -> list[Any]:
    """``measure`` of ``n`` cases drawn by ``strategy`` (generation only: no shrinking, no
    replay of stored failures), the same cases on every run."""
    seen: list[Any] = []

    @settings(max_examples=n, derandomize=True, database=None, deadline=None, phases=[Phase.generate])
    @given(strategy)
    def draw(case: Any) -> None:
        seen.append(measure(case))

    draw()
    return seen


def share(flags: list[bool]) -> float:
    return sum(flags) / len(flags)


def test_cache_cases_evict_many_times() -> None:
    counts = sample(cache_cases(), lambda c: (evictions(c, "lru"), evictions(c, "arc"), len(c.keys)))
    assert share([lru >= 5 for lru, _, _ in counts]) >= 0.95
    assert share([lru >= 20 for lru, _, _ in counts]) >= 0.9
    assert share([arc >= 5 for _, arc, _ in counts]) >= 0.95
    assert np.median([n for _, _, n in counts]) >= 150


def test_sized_cases_evict_and_refuse_objects_near_the_capacity() -> None:
    def measure(c: Any) -> tuple[int, bool]:
        return evictions(c, "lru"), bool((c.sizes > c.capacity).any())

    counts = sample(sized_cases(), measure)
    assert share([e >= 5 for e, _ in counts]) >= 0.9
    assert share([too_big for _, too_big in counts]) >= 0.5


def test_workloads_preempt_tie_and_burst() -> None:
    def measure(w: ob.sched.Workload) -> tuple[int, bool]:
        return preemptions(w), bool(len(np.unique(w.arrival)) < len(w.arrival))

    counts = sample(workloads(), measure)
    assert share([p >= 1 for p, _ in counts]) >= 0.85
    assert share([p >= 5 for p, _ in counts]) >= 0.4
    assert share([burst for _, burst in counts]) >= 0.85


def test_radix_cases_share_prefixes_and_evict() -> None:
    def measure(c: Any) -> tuple[float, int, bool]:
        shared = ob.radix.replay(c.prompts, None, page_size=c.page_size).hit_ratio
        return shared, ob.radix.replay(c.prompts, c.capacity, page_size=c.page_size).evicted_nodes, c.capacity is None

    counts = sample(radix_cases(), measure)
    assert share([shared >= 0.2 for shared, _, _ in counts]) >= 0.9
    limited = [evicted for _, evicted, unlimited in counts if not unlimited]
    assert share([e >= 3 for e in limited]) >= 0.9
