"""Replays through the radix cache: native == reference, the workload generator, Mooncake."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from strategies import radix_cases

import osbench as ob
from osbench.radix import Requests, Vocabulary, conversations, curve, replay

ENGINES = ["native", "reference"]


def small_workload(seed=0, n=40):
    return conversations(
        n,
        n_apps=3,
        system_len=12,
        fewshot_len=(4, 10),
        question_len=(2, 6),
        answer_len=(2, 8),
        vocab_size=50,
        seed=seed,
    )


# --- native == reference ----------------------------------------------------------------------


@settings(max_examples=100, deadline=None)
@given(case=radix_cases(), mode=st.sampled_from(["prefix", "whole"]), outputs=st.booleans())
def test_replay_engines_agree_on_shared_prefixes(case, mode, outputs):
    reqs = Requests.from_sequences(case.prompts, [p[-2:] for p in case.prompts])
    a = replay(reqs, case.capacity, mode=mode, page_size=case.page_size, outputs=outputs, per_request=True)
    b = replay(
        reqs, case.capacity, mode=mode, page_size=case.page_size, outputs=outputs, per_request=True, engine="reference"
    )
    assert a.to_dict() == b.to_dict()
    event("evicted" if a.evicted_nodes else "nothing evicted")
    assert a.hit_tokens <= a.total_tokens
    if case.capacity is not None:
        assert a.stored_tokens <= case.capacity


@settings(max_examples=60, deadline=None)
@given(
    prompts=st.lists(st.lists(st.integers(0, 4), max_size=12), max_size=25),
    capacity=st.one_of(st.none(), st.integers(0, 40)),
    page_size=st.sampled_from([1, 2, 3]),
)
def test_replay_engines_agree_on_any_prompts(prompts, capacity, page_size):
    """Any lists, empty ones and capacity 0 included."""
    for mode in ("prefix", "whole"):
        a = replay(prompts, capacity, mode=mode, page_size=page_size, per_request=True)
        b = replay(prompts, capacity, mode=mode, page_size=page_size, per_request=True, engine="reference")
        assert a.to_dict() == b.to_dict()


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    capacity=st.one_of(st.none(), st.integers(0, 400)),
    outputs=st.booleans(),
    page_size=st.sampled_from([1, 4]),
)
def test_replay_engines_agree_conversations(seed, capacity, outputs, page_size):
    w = small_workload(seed)
    for mode in ("prefix", "whole"):
        a = replay(w, capacity, mode=mode, outputs=outputs, page_size=page_size, per_request=True)
        b = replay(w, capacity, mode=mode, outputs=outputs, page_size=page_size, per_request=True, engine="reference")
        assert a.to_dict() == b.to_dict()


def test_replay_equals_driving_the_tree_by_hand():
    """The prefix replay is exactly match, lock, evict, insert, unlock, trim on a RadixCache."""
    w = small_workload(3)
    cap = 120
    t = ob.radix.RadixCache()
    hits = []
    for i in range(len(w)):
        prompt, stored = w.prompt(i), np.concatenate([w.prompt(i), w.output(i)])
        m = t.match_prefix(prompt)
        t.lock(m)
        need = len(stored) - m.length
        if t.total_size + need > cap:
            t.evict(t.total_size + need - cap)
        t.insert(stored)
        t.unlock(m)
        if t.total_size > cap:
            t.evict(t.total_size - cap)
        hits.append(m.length)
    r = replay(w, cap, outputs=True, per_request=True)
    assert r.per_request.tolist() == hits
    assert (r.stored_tokens, r.nodes, r.evicted_tokens) == (t.total_size, t.num_nodes, t.evicted_tokens)


def test_curve_equals_the_reference_engines_replays():
    """The curve is one replay per capacity: compared with the other engine's replays."""
    w = small_workload(5)
    caps = [0, 10, 50, 200, None]
    for mode in ("prefix", "whole"):
        want = [replay(w, c, mode=mode, outputs=True, engine="reference").hit_ratio for c in caps]
        assert curve(w, caps, mode=mode, outputs=True, threads=2).tolist() == want, mode


# --- facts ----------------------------------------------------------------------------------


@pytest.mark.parametrize("engine", ENGINES)
def test_unlimited_prefix_stores_each_distinct_token_once(engine):
    w = small_workload(1)
    r = replay(w, None, engine=engine)
    t = ob.radix.RadixCache(engine=engine)
    for p in w.prompts():
        t.insert(p)
    assert (r.stored_tokens, r.nodes) == (t.total_size, t.num_nodes)
    assert r.hit_tokens == r.total_tokens - r.stored_tokens  # every token is missed exactly once
    assert r.evicted_tokens == 0


@pytest.mark.parametrize("engine", ENGINES)
def test_whole_match_never_hits_multi_turn_prompts(engine):
    w = small_workload(2)
    assert replay(w, None, mode="whole", engine=engine).hit_tokens == 0
    same = Requests.from_sequences([[1, 2, 3], [1, 2, 3], [1, 2], [1, 2, 3]])
    r = replay(same, None, mode="whole", engine=engine, per_request=True)
    assert r.per_request.tolist() == [0, 3, 0, 3]
    # Capacity 3: [1, 2] evicts [1, 2, 3], so the last request misses.
    assert replay(same, 3, mode="whole", engine=engine, per_request=True).per_request.tolist() == [0, 3, 0, 0]


def test_zero_capacity_caches_nothing():
    w = small_workload(4)
    for mode in ("prefix", "whole"):
        r = replay(w, 0, mode=mode)
        assert r.hit_tokens == 0 and r.stored_tokens == 0


def test_empty_requests():
    r = replay([], 10)
    assert (r.requests, r.hit_tokens, r.total_tokens, r.hit_ratio) == (0, 0, 0, 0.0)
    assert replay([[], []], None).hit_ratio == 0.0


# --- the generator ----------------------------------------------------------------------------


def test_conversations_shape_and_determinism():
    w = conversations(60, seed=7)
    assert np.array_equal(w.tokens, conversations(60, seed=7).tokens)
    assert not np.array_equal(w.tokens, conversations(60, seed=8).tokens)
    system = w.prompt(0)[:48]
    by_conv: dict[int, list[int]] = {}
    for i in range(len(w)):
        assert np.array_equal(w.prompt(i)[:48], system), "every prompt starts with the system prompt"
        by_conv.setdefault(int(w.conversation[i]), []).append(i)
    assert set(by_conv) == set(range(60))
    for reqs in by_conv.values():
        assert 1 <= len(reqs) <= 3
        assert [int(w.turn[i]) for i in reqs] == list(range(len(reqs))), "turns come in order"
        for a, b in zip(reqs, reqs[1:]):
            history = np.concatenate([w.prompt(a), w.output(a)])
            assert np.array_equal(w.prompt(b)[: len(history)], history), "a turn extends the whole history"
    apps = {tuple(w.prompt(i)[48:96]) for i in range(len(w))}
    assert len(apps) <= 4


def test_conversations_bad_input():
    with pytest.raises(ValueError, match="n_conversations"):
        conversations(0)
    with pytest.raises(ValueError, match="question_len"):
        conversations(5, question_len=(5, 2))
    with pytest.raises(TypeError, match="system_len"):
        conversations(5, system_len=1.5)
    with pytest.raises(ValueError, match="think_time"):
        conversations(5, think_time=-1)


def test_conversations_too_large_to_hold_is_refused_before_drawing():
    from osbench.radix.workloads import MAX_GENERATED_TOKENS

    # A billion-token system prompt: refused at once, not after gigabytes of draws.
    with pytest.raises(ValueError, match=r"system_len=1000000000.*at most"):
        conversations(1, system_len=10**9, max_turns=1)
    # One token past the bound is refused (one conversation of one turn: its prompt is the workload);
    # holding the bound itself would take 2 GiB, so the accepted side is shown small.
    with pytest.raises(ValueError, match="at most"):
        conversations(1, system_len=MAX_GENERATED_TOKENS + 1, fewshot_len=0, question_len=0, answer_len=0, max_turns=1)
    w = conversations(1, system_len=100, fewshot_len=0, question_len=0, answer_len=0, max_turns=1)
    assert w.total_tokens == 100


def test_words_through_a_vocabulary():
    vocab = Vocabulary()
    texts = ["you are a helpful assistant . hi", "you are a helpful assistant . hi there"]
    w = Requests.from_texts(texts, vocab)
    assert vocab.decode(w.prompt(1)) == texts[1].split()
    assert replay(w, None).hit_tokens == 7
    assert vocab.decode([999]) == ["<999>"]
    with pytest.raises(TypeError, match="word"):
        vocab.id(3)


def test_replay_bad_input():
    w = small_workload()
    with pytest.raises(ValueError, match="capacity"):
        replay(w, -1)
    with pytest.raises(TypeError, match="capacity"):
        replay(w, 1.5)
    with pytest.raises(ValueError, match="mode"):
        replay(w, 10, mode="lru")
    with pytest.raises(ValueError, match="page_size"):
        replay(w, 10, page_size=0)
    with pytest.raises(ValueError, match="engine"):
        replay(w, 10, engine="gpu")
    with pytest.raises(TypeError, match="requests"):
        replay([["a", "b"]], 10)
    with pytest.raises(TypeError, match="requests"):
        replay("abc", 10)
    with pytest.raises(ValueError, match="capacities"):
        curve(w, [10, -5])
    with pytest.raises(ValueError, match="offsets"):
        ob._native.radix_replay("prefix", np.arange(3, dtype=np.int64), np.array([0, 5], dtype=np.int64))
    with pytest.raises(ValueError, match="mode"):
        ob._native.radix_replay("nope", np.arange(3, dtype=np.int64), np.array([0, 3], dtype=np.int64))


# --- Mooncake -----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["mooncake-conversation", "mooncake-synthetic"])
def test_mooncake_block_curve(name, dataset):
    dataset(name)
    w = ob.radix.mooncake(name)
    assert len(w) > 1000
    caps = [0, 1_000, 10_000, None]
    ratios = curve(w, caps)
    assert ratios[0] == 0.0 and 0.0 < ratios[-1] < 1.0
    # Unlimited capacity: every block after its first sighting is a hit (prefix-closed ids).
    full = replay(w, None)
    assert full.hit_tokens == full.total_tokens - full.stored_tokens
    # The engines agree on a slice of the real trace with a tight capacity.
    head = w.head(400)
    assert replay(head, 500).to_dict() == replay(head, 500, engine="reference").to_dict()


def test_mooncake_limit_and_bad_file(tmp_path, dataset):
    w = ob.radix.mooncake(dataset("mooncake-conversation"), limit=10)
    assert len(w) == 10
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"timestamp": 0}\n')
    with pytest.raises(ValueError, match="hash_ids"):
        ob.radix.mooncake(bad)


def test_requests_are_packed_in_steps_as_one_concatenation():
    # More than one step of tokens (osbench._steps.CHUNK), a sequence longer than a step, empty ones.
    from osbench import _steps
    from osbench.radix.workloads import _pack

    rng = np.random.default_rng(4)
    lengths = [0, 3, _steps.CHUNK + 5, 0, *rng.integers(0, 50, 60_000).tolist(), 0]
    seqs = [rng.integers(0, 1000, n) for n in lengths]
    tokens, offsets = _pack(seqs)
    np.testing.assert_array_equal(tokens, np.concatenate(seqs))
    np.testing.assert_array_equal(offsets, np.concatenate([[0], np.cumsum(lengths)]))
    assert tokens.dtype == offsets.dtype == np.int64
    empty_tokens, empty_offsets = _pack([])
    assert len(empty_tokens) == 0 and empty_offsets.tolist() == [0]


def test_conversations_are_the_requests_they_were_when_prompts_were_copied_whole():
    # Digest recorded from the generation that copied each turn's whole history into its prompt.
    import hashlib

    r = ob.radix.conversations(3000, seed=5, max_turns=4, think_time=2.0)
    h = hashlib.sha256()
    for name in ["app", "conversation", "offsets", "output_offsets", "output_tokens", "tokens", "turn"]:
        h.update(name.encode())
        h.update(np.ascontiguousarray(getattr(r, name)).tobytes())
    assert h.hexdigest() == "e510a0d75a0f557ea0e060e4fde237cc9047c5815449e9cbeedcc9c615ca8e69"
