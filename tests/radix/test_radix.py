"""The radix tree (lecture section 5): golden facts, native == reference, invariants, bad input."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from osbench.radix import RadixCache, Vocabulary

ENGINES = ["native", "reference"]

SENTENCES = [
    "you are a helpful assistant . what is paging ?",
    "you are a helpful assistant . what is a radix tree ?",
    "you are a helpful assistant . explain lru caching .",
    "you are a careful reviewer . check this code .",
]


# --- golden facts ---------------------------------------------------------------------------


@pytest.mark.parametrize("engine", ENGINES)
def test_sglang_insert_returns(engine):
    t = RadixCache(engine=engine)
    seqs = [[1, 2, 3], [1, 2, 3], [1, 2, 4, 5], [1, 2, 4, 5, 6, 7], [8, 9, 10, 11, 12]]
    assert [t.insert(s) for s in seqs] == [0, 3, 2, 4, 0]
    assert t.total_size == 12 and t.evictable_size == 12 and t.protected_size == 0
    assert [n.tokens for n in t] == [(1, 2), (3,), (4, 5), (6, 7), (8, 9, 10, 11, 12)]


@pytest.mark.parametrize("engine", ENGINES)
def test_lecture_tree_of_four_sentences(engine):
    vocab = Vocabulary(sorted({w for s in SENTENCES for w in s.split()}))
    t = RadixCache(engine=engine, vocab=vocab)
    for s in SENTENCES:
        t.insert(s)
    assert sum(len(s.split()) for s in SENTENCES) == 42
    assert (t.num_nodes, t.total_size) == (7, 25)
    assert t.pretty().splitlines() == [
        "└ [you are a]  length 3",
        "  └ [careful reviewer . check this code .]  length 7",
        "  └ [helpful assistant .]  length 3",
        "    └ [explain lru caching .]  length 4",
        "    └ [what is]  length 2",
        "      └ [a radix tree ?]  length 4",
        "      └ [paging ?]  length 2",
    ]
    m = t.match_prefix("you are a helpful assistant . what is caching ?")
    assert m.length == 8
    assert vocab.decode(t.prefix_of(m.node)) == "you are a helpful assistant . what is".split()


@pytest.mark.parametrize("engine", ENGINES)
def test_exercise_6(engine):
    vocab = Vocabulary()
    t = RadixCache(engine=engine, vocab=vocab)
    t.insert("you are a helpful assistant . what is paging ?")
    t.insert("you are a careful reviewer .")
    request = "you are a helpful assistant . explain paging ."
    assert t.match_prefix(request).length == 6
    # The match split "helpful assistant . what is paging ?" after "." ...
    text = lambda n: " ".join(vocab.decode(n.tokens))  # noqa: E731
    assert sorted(text(n) for n in t) == sorted(
        ["you are a", "helpful assistant .", "what is paging ?", "careful reviewer ."]
    )
    assert t.insert(request) == 6
    # ... and "explain paging ." became the second child of "helpful assistant .".
    nodes = t.nodes()
    helpful = next(n for n in nodes if text(n) == "helpful assistant .")
    assert sorted(text(n) for n in nodes if n.parent == helpful.index) == ["explain paging .", "what is paging ?"]
    assert t.num_nodes == 5 and t.total_size == 16


@pytest.mark.parametrize("engine", ENGINES)
def test_lock_protects_path_and_evict_goes_lru_leaf_first(engine):
    t = RadixCache(engine=engine)
    t.insert([1, 2, 3])
    t.insert([1, 2, 4, 5])
    t.insert([7, 8])
    m = t.match_prefix([1, 2, 4, 5])
    t.lock(m.node)
    assert (t.protected_size, t.evictable_size) == (4, 3)
    assert t.evict(1) == 1  # [3] is the least recently used leaf
    assert t.evict(100) == 2  # then [7, 8]; the locked path stays
    assert t.evict(100) == 0 and t.total_size == 4
    assert t.match_prefix([1, 2, 4, 5, 9]).length == 4
    t.unlock(m.node)
    assert (t.protected_size, t.evictable_size) == (0, 4)
    assert t.evict(1) == 2  # the leaf [4, 5] goes whole
    assert t.evict(1) == 2  # then its parent [1, 2], now a leaf
    assert t.num_nodes == 0
    with pytest.raises(ValueError, match="evicted"):
        t.lock(m.node)


@pytest.mark.parametrize("engine", ENGINES)
def test_match_splits_and_handles_survive_splits(engine):
    t = RadixCache(engine=engine)
    t.insert([1, 2, 3, 4, 5])
    whole = t.match_prefix([1, 2, 3, 4, 5]).node
    t.lock(whole)
    m = t.match_prefix([1, 2, 3, 9])
    assert m.length == 3 and t.node_info(m.node).tokens == (1, 2, 3)
    assert t.node_info(m.node).lock_ref == 1, "the upper part inherits the lock count"
    assert t.node_info(whole).tokens == (4, 5)
    assert t.prefix_of(whole) == (1, 2, 3, 4, 5)
    t.unlock(whole)
    assert t.protected_size == 0 and t.evictable_size == 5


@pytest.mark.parametrize("engine", ENGINES)
def test_pages(engine):
    t = RadixCache(page_size=2, engine=engine)
    assert t.insert([1, 2, 3, 4, 5]) == 0 and t.total_size == 4  # cut to whole pages
    assert t.insert([1, 9, 3, 4]) == 0 and t.num_nodes == 2  # same first token, other page
    assert t.match_prefix([1, 2, 3, 7]).length == 2
    assert t.match_prefix([1]).length == 0  # shorter than a page: nothing
    assert t.insert([1, 9, 3, 4, 6, 6]) == 4
    assert all(len(n.tokens) % 2 == 0 for n in t)


@pytest.mark.parametrize("engine", ENGINES)
def test_empty_queries(engine):
    t = RadixCache(engine=engine)
    assert t.insert([]) == 0 and t.num_nodes == 0
    m = t.match_prefix([])
    assert m.length == 0
    t.lock(m.node)  # the root: no-op
    t.unlock(m.node)
    assert t.evict(10) == 0
    assert t.pretty() == ""


def test_tokens_forms_agree():
    """Lists, tuples and arrays of any integer dtype give the same tree."""
    a, b = RadixCache(), RadixCache(engine="reference")
    for tokens in (
        [1, 2, 3],
        (1, 2, 4),
        np.array([1, 2, 5], dtype=np.int32),
        np.array([1, 7], dtype=np.uint64),
        np.arange(10, dtype=np.int64)[::2],
    ):
        assert a.insert(tokens) == b.insert(tokens)
    assert a.nodes() == b.nodes()


def test_reference_takes_hashable_tokens():
    t = RadixCache(engine="reference")
    assert t.insert(["a", "b", "c"]) == 0 and t.insert(("a", "b", "x")) == 2


# --- bad input ------------------------------------------------------------------------------


@pytest.mark.parametrize("engine", ENGINES)
def test_bad_input(engine):
    t = RadixCache(engine=engine)
    t.insert([1, 2, 3])
    m = t.match_prefix([1, 2, 3])
    with pytest.raises(ValueError, match=r"not locked|lock count is 0"):
        t.unlock(m.node)
    other = RadixCache(engine=engine)
    other.insert([1, 2, 3])
    with pytest.raises(ValueError, match="another tree"):
        t.lock(other.match_prefix([1, 2, 3]).node)
    with pytest.raises(TypeError, match="node"):
        t.lock("not a node")
    foreign = RadixCache(engine="reference" if engine == "native" else "native")
    with pytest.raises(TypeError, match="node"):
        t.lock(foreign.match_prefix([1]).node)
    with pytest.raises(ValueError, match="num_tokens"):
        t.evict(-1)
    with pytest.raises(TypeError, match="num_tokens"):
        t.evict(1.5)
    with pytest.raises(ValueError, match="page_size"):
        RadixCache(page_size=0, engine=engine)
    with pytest.raises(ValueError, match="engine"):
        RadixCache(engine="fast")
    with pytest.raises(TypeError, match="tokens"):
        t.insert("you are")  # text without a vocabulary
    with pytest.raises(ValueError, match="1-D"):
        t.insert(np.zeros((2, 2), dtype=np.int64))
    with pytest.raises(TypeError, match="tokens"):
        t.insert(np.array([1.0, 2.0]))
    assert t.total_size == 3, "failed calls change nothing"


def test_native_refuses_non_integer_tokens():
    t = RadixCache()
    for bad in (["a", "b"], [1.5, 2.0], [1, None], [2**63], 5):
        with pytest.raises(TypeError, match=r"integer tokens|tokens"):
            t.insert(bad)
        with pytest.raises(TypeError, match=r"integer tokens|tokens"):
            t.match_prefix(bad)
    with pytest.raises(ValueError, match=r"int64|2\*\*63"):
        t.insert(np.array([2**63], dtype=np.uint64))
    assert t.num_nodes == 0


# --- native == reference, stateful -------------------------------------------------------------


class TwoEngines(RuleBasedStateMachine):
    """Random interleavings of insert, match, lock, unlock and evict on both engines."""

    @initialize(page_size=st.sampled_from([1, 1, 2, 3]))
    def make(self, page_size):
        self.native = RadixCache(page_size, engine="native")
        self.ref = RadixCache(page_size, engine="reference")
        self.matches: list[tuple] = []  # (native handle, reference handle)
        self.locks: list[tuple] = []  # pairs locked and not yet unlocked (with repeats)

    seqs = st.lists(st.integers(0, 3), max_size=14)

    @rule(tokens=seqs)
    def insert(self, tokens):
        assert self.native.insert(tokens) == self.ref.insert(tokens)

    @rule(tokens=seqs)
    def match(self, tokens):
        a, b = self.native.match_prefix(tokens), self.ref.match_prefix(tokens)
        assert a.length == b.length
        assert self.native.node_info(a.node).tokens == self.ref.node_info(b.node).tokens
        self.matches.append((a.node, b.node))

    @precondition(lambda self: self.matches)
    @rule(data=st.data())
    def lock(self, data):
        pair = data.draw(st.sampled_from(self.matches))
        outcomes = []
        for tree, node in ((self.native, pair[0]), (self.ref, pair[1])):
            try:
                tree.lock(node)
                outcomes.append("ok")
            except ValueError:
                outcomes.append("refused")  # the node was evicted
        assert outcomes[0] == outcomes[1]
        if outcomes[0] == "ok":
            self.locks.append(pair)

    @precondition(lambda self: self.locks)
    @rule(data=st.data())
    def unlock(self, data):
        k = data.draw(st.integers(0, len(self.locks) - 1))
        a, b = self.locks.pop(k)
        self.native.unlock(a)
        self.ref.unlock(b)

    @precondition(lambda self: self.matches)
    @rule(data=st.data())
    def unlock_unlocked(self, data):
        a, b = data.draw(st.sampled_from(self.matches))
        results = []
        for tree, node in ((self.native, a), (self.ref, b)):
            try:
                info = tree.node_info(node)
                if info.tokens and info.lock_ref == 0:  # (the root takes no locks: a no-op)
                    with pytest.raises(ValueError):
                        tree.unlock(node)
                results.append(tree.node_info(node).lock_ref)
            except ValueError:
                results.append(None)  # evicted
        assert results[0] == results[1]

    @rule(n=st.integers(0, 20))
    def evict(self, n):
        assert self.native.evict(n) == self.ref.evict(n)

    @invariant()
    def same_tree(self):
        if not hasattr(self, "native"):
            return
        for attr in (
            "total_size",
            "evictable_size",
            "protected_size",
            "num_nodes",
            "clock",
            "evicted_nodes",
            "evicted_tokens",
        ):
            assert getattr(self.native, attr) == getattr(self.ref, attr), attr
        assert self.native.nodes() == self.ref.nodes()
        assert self.native.pretty() == self.ref.pretty()

    @invariant()
    def sizes_and_structure(self):
        if not hasattr(self, "native"):
            return
        t = self.native
        nodes = t.nodes()
        assert t.evictable_size + t.protected_size == t.total_size == sum(len(n.tokens) for n in nodes)
        assert t.protected_size == sum(len(n.tokens) for n in nodes if n.lock_ref > 0)
        first_pages = set()
        for n in nodes:
            assert n.tokens and len(n.tokens) % t.page_size == 0
            key = (n.parent, n.tokens[: t.page_size])
            assert key not in first_pages, "two children share a first page"
            first_pages.add(key)
            if n.parent >= 0:
                assert nodes[n.parent].lock_ref >= n.lock_ref
        # Every lock still held is on a live node: locked paths are never evicted.
        for a, b in self.locks:
            if not self.native.node_info(a).tokens:
                continue  # the root: locking it is a no-op
            assert self.native.node_info(a).lock_ref > 0
            assert self.ref.node_info(b).lock_ref > 0


TwoEngines.TestCase.settings = settings(
    max_examples=150, stateful_step_count=40, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
test_two_engines = TwoEngines.TestCase


@settings(max_examples=60, deadline=None)
@given(seqs=st.lists(st.lists(st.integers(-(2**63), 2**63 - 1), max_size=6), max_size=8))
def test_full_int64_range(seqs):
    a, b = RadixCache(), RadixCache(engine="reference")
    for s in seqs:
        assert a.insert(s) == b.insert(s)
        assert a.match_prefix(s[:3]).length == b.match_prefix(s[:3]).length
    assert a.nodes() == b.nodes()
