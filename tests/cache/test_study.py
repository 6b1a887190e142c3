"""Which policy wins where (:mod:`osbench.cache.study`): the table's facts, and the rule that
names the winners."""

from __future__ import annotations

import pytest

from osbench import cache
from osbench.cache import study


@pytest.fixture(scope="module")
def table() -> object:
    return study.wins_table(quick=True)


def _column(table: object, workload: str) -> dict[str, float]:
    (column,) = [c for c in table.columns if c.startswith(workload + " (")]
    return {
        r["policy"].removesuffix(" (offline)"): r[column]
        for r in table.records()
        if r["policy"] in cache.POLICIES or r["policy"].endswith(" (offline)")
    }


def test_every_policy_is_in_the_table_and_opt_is_the_ceiling(table: object) -> None:
    for w in table.extra["workloads"]:
        hits = _column(table, w["name"])
        assert set(hits) == set(cache.POLICIES)
        assert all(0.0 <= h <= hits["opt"] + 1e-12 for h in hits.values()), w["name"]


def test_a_loop_just_larger_than_the_cache_defeats_the_recency_policies(table: object) -> None:
    # Section 4.3: a cyclic scan of 1,100 keys through 1,000 slots: LRU, FIFO and CLOCK evict each
    # key just before its next use and never hit; OPT keeps all but a few.
    hits = _column(table, "loop of 1,100")
    assert hits["lru"] == hits["fifo"] == hits["clock"] == 0.0
    assert hits["opt"] > 0.85
    assert "lru" not in table.extra["winners"]["loop of 1,100"]


def test_the_winners_row_matches_the_cells(table: object) -> None:
    wins = next(r for r in table.rows if r[0] == "wins")
    for i, w in enumerate(table.extra["workloads"], start=1):
        names = table.extra["winners"][w["name"]]
        assert wins[i] == ", ".join(names)
        hits = _column(table, w["name"])
        online = {p: h for p, h in hits.items() if p not in cache.OFFLINE and p not in cache.RANDOMISED}
        if not set(names) & set(cache.RANDOMISED):
            assert all(hits[p] == max(online.values()) for p in names)


def test_a_randomised_policy_wins_when_its_best_seed_reaches_the_top() -> None:
    randomised = cache.RANDOMISED[0]
    ratios = {"lru": [0.50], "fifo": [0.40], randomised: [0.45, 0.50, 0.46], "opt": [0.9]}
    assert study.winners(ratios) == ["lru", randomised]
    assert study.runner_up(ratios) == ("fifo", pytest.approx(10.0))
    ratios[randomised] = [0.45, 0.49, 0.46]
    assert study.winners(ratios) == ["lru"]
    # The mean decides the top: one lucky seed does not make a randomised policy the only winner.
    assert study.winners({"lru": [0.5], randomised: [0.2, 0.6, 0.4]}) == ["lru", randomised]
    assert study.runner_up({"lru": [0.5], "fifo": [0.5]}) == ("", 0.0)
