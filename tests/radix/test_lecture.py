"""Lecture demo 05 and exercise 6: the tables and the facts they must show."""

from __future__ import annotations

import pytest

from osbench.radix import lecture


@pytest.fixture(scope="module")
def tables():
    return {t.key: t for t in lecture.tables(quick=True)}


def test_tables_are_complete(tables):
    assert list(tables) == ["05-1", "05-2", "05-3", "05-4", "05-5"]
    for t in tables.values():
        assert t.rows and all(len(r) == len(t.columns) for r in t.rows)
        assert t.to_text() and t.to_markdown() and t.to_html()


def test_demo1_matches_the_lecture(tables):
    t = tables["05-1"]
    assert (t.extra["total_tokens"], t.extra["stored_tokens"], t.extra["nodes"], t.extra["query_match"]) == (
        42,
        25,
        7,
        8,
    )
    assert t.extra["drawing"].splitlines()[1] == "  └ [careful reviewer . check this code .]  length 7"


@pytest.mark.parametrize("engine", ["native", "reference"])
def test_demos_agree_across_engines(engine):
    assert lecture.demo1_tree(engine).rows == lecture.demo1_tree("native").rows
    assert lecture.demo3_locks(engine).rows == lecture.demo3_locks("native").rows
    assert lecture.exercise6(engine).rows == lecture.exercise6("native").rows


def test_demo2_shares_prefixes(tables):
    ours, _lec = tables["05-2"].rows
    requests, _per_request, _shared, saving, nodes = ours[1:6]
    assert 350 <= requests <= 450
    assert saving > 3  # the lecture: 4.1x
    assert nodes == requests + 5  # one leaf per request, the system prompt and 4 few-shot blocks


def test_demo3_locks_keep_running_prefixes(tables):
    t = tables["05-3"]
    assert t.extra["intact"] == 5
    after_lock_evict = t.rows[2]
    assert after_lock_evict[2] == 0 and after_lock_evict[1] == after_lock_evict[3] > 0  # only protected tokens left
    assert t.rows[-1][1] == 0 and t.extra["freed_locked"] + t.extra["freed_after"] == t.rows[0][1]


def test_demo4_prefix_beats_whole(tables):
    rows = tables["05-4"].rows
    assert all(r[1] == 0 for r in rows)  # whole-prompt matching never hits
    by_cap = {r[0]: r for r in rows}
    assert 0.5 < by_cap[500][2] < 0.8
    assert 0.8 < by_cap["unlimited"][3] < 0.95
    assert by_cap["unlimited"][3] >= by_cap["unlimited"][2]


def test_exercise6(tables):
    assert tables["05-5"].extra["match"] == 6
    texts = [r[0].strip() for r in tables["05-5"].rows]
    after = texts[texts.index("tree after inserting it") :]
    assert "└ [helpful assistant .]" in after and "└ [explain paging .]" in after
