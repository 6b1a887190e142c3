"""Radix cache benchmarks: one group per workload, one row per engine.

- match+insert: a multi-turn workload of 10,000 requests averaging about 2,000 tokens
  (a long shared system prompt, few-shot blocks, conversations of 1-3 turns), served in
  order: the native replay in one call; the native tree driven from Python per request;
  the reference engine (on the first requests only: it is slow). Requests/s and tokens/s
  are in ``extra_info``.
- replay with eviction: the same stream through a cache of 100k tokens.
- repeated evict: the full tree of the whole stream emptied 2,000 tokens at a time.

Under ``--benchmark-disable`` (``make test``) everything runs once on a small stream.
"""

from __future__ import annotations

import time

import numpy as np
import pytest

import osbench as ob
from osbench import _native
from osbench.radix import RadixCache, conversations, replay

FULL_CONVERSATIONS = 5_000  # about 10,000 requests
QUICK_CONVERSATIONS = 60
REFERENCE_REQUESTS = 1_000  # the reference serves this many (full size): it is ~100x slower
EVICT_STEP = 2_000
CAPACITY = 100_000


def _full(request: pytest.FixtureRequest) -> bool:
    full = not request.config.getoption("benchmark_disable", default=False)
    if full and _native.BUILD_PROFILE != "release":
        pytest.exit("refusing to benchmark a debug build of osbench._native", returncode=2)
    return full


@pytest.fixture(scope="module")
def stream(request: pytest.FixtureRequest) -> ob.radix.Requests:
    n = FULL_CONVERSATIONS if _full(request) else QUICK_CONVERSATIONS
    return conversations(
        n, system_len=1_200, fewshot_len=(400, 600), question_len=(50, 150), answer_len=(100, 300), max_turns=3, seed=0
    )


def _rates(benchmark, requests: ob.radix.Requests) -> None:
    t = benchmark.stats.stats.mean if benchmark.stats else None
    benchmark.extra_info["requests"] = len(requests)
    benchmark.extra_info["tokens"] = requests.total_tokens
    if t:
        benchmark.extra_info["requests_per_s"] = len(requests) / t
        benchmark.extra_info["tokens_per_s"] = requests.total_tokens / t


def _serve_online(reqs: ob.radix.Requests, engine: str) -> int:
    """Match, lock, insert, unlock per request, from Python (what a serving loop does)."""
    t = RadixCache(engine=engine)
    hits = 0
    for i in range(len(reqs)):
        prompt = reqs.prompt(i)
        m = t.match_prefix(prompt)
        t.lock(m)
        t.insert(prompt)
        t.unlock(m)
        hits += m.length
    return hits


def test_match_insert_native_replay(benchmark, stream):
    benchmark.group = "radix match+insert (10k requests, ~2k tokens)"
    r = benchmark.pedantic(replay, args=(stream, None), rounds=3, iterations=1)
    assert r.hit_tokens == r.total_tokens - r.stored_tokens
    _rates(benchmark, stream)
    benchmark.extra_info["hit_ratio"] = r.hit_ratio


def test_match_insert_native_replay_head(benchmark, stream, request, reference_head):
    """The native replay on exactly the requests the reference serves: the like-for-like ratio."""
    benchmark.group = "radix match+insert (10k requests, ~2k tokens)"
    head = stream.head(REFERENCE_REQUESTS if _full(request) else len(stream))
    r = benchmark.pedantic(replay, args=(head, None), rounds=5, iterations=1)
    assert r.to_dict() == reference_head.to_dict()
    _rates(benchmark, head)


def test_match_insert_native_online(benchmark, stream):
    benchmark.group = "radix match+insert (10k requests, ~2k tokens)"
    hits = benchmark.pedantic(_serve_online, args=(stream, "native"), rounds=2, iterations=1)
    assert hits == replay(stream, None).hit_tokens
    _rates(benchmark, stream)


def test_match_insert_reference(benchmark, stream, request, reference_head):
    benchmark.group = "radix match+insert (10k requests, ~2k tokens)"
    head = stream.head(REFERENCE_REQUESTS if _full(request) else len(stream))
    r = benchmark.pedantic(replay, args=(head, None), kwargs={"engine": "reference"}, rounds=1, iterations=1)
    assert r.to_dict() == reference_head.to_dict() == replay(head, None).to_dict()
    _rates(benchmark, head)


@pytest.fixture(scope="module")
def reference_head(stream, request) -> ob.radix.ReplayResult:
    """The reference engine's replay of the requests it serves in the benchmark."""
    head = stream.head(REFERENCE_REQUESTS if _full(request) else len(stream))
    return replay(head, None, engine="reference")


def _serve_with_capacity(reqs: ob.radix.Requests, capacity: int) -> tuple[int, int]:
    """The eviction replay driven from Python on the native tree (match, lock, make room,
    insert, unlock, trim): (hit tokens, tokens stored at the end), a second computation of
    what the replay does in one call."""
    t = RadixCache()
    hits = 0
    for i in range(len(reqs)):
        prompt, stored = reqs.prompt(i), np.concatenate([reqs.prompt(i), reqs.output(i)])
        m = t.match_prefix(prompt)
        t.lock(m)
        need = len(stored) - m.length
        if t.total_size + need > capacity:
            t.evict(t.total_size + need - capacity)
        t.insert(stored)
        t.unlock(m)
        if t.total_size > capacity:
            t.evict(t.total_size - capacity)
        hits += m.length
    return hits, t.total_size


@pytest.mark.parametrize("engine", ["native", "reference"])
def test_replay_with_eviction(benchmark, stream, request, engine):
    benchmark.group = "radix replay, capacity 100k tokens, outputs stored"
    reqs = stream if engine == "native" or not _full(request) else stream.head(REFERENCE_REQUESTS)
    capacity = CAPACITY if _full(request) else 20_000
    r = benchmark.pedantic(
        replay,
        args=(reqs, capacity),
        kwargs={"engine": engine, "outputs": True},
        rounds=3 if engine == "native" else 1,
        iterations=1,
    )
    assert r.stored_tokens <= capacity
    assert (r.hit_tokens, r.stored_tokens) == _serve_with_capacity(reqs, capacity)
    _rates(benchmark, reqs)
    benchmark.extra_info["evicted_nodes"] = r.evicted_nodes


def _full_tree(reqs: ob.radix.Requests, engine: str) -> RadixCache:
    t = RadixCache(engine=engine)
    for i in range(len(reqs)):
        t.insert(reqs.prompt(i) if engine == "native" else reqs.prompt(i).tolist())
    return t


@pytest.mark.parametrize("engine", ["native", "reference"])
def test_repeated_evict(benchmark, stream, request, engine):
    benchmark.group = f"radix repeated evict({EVICT_STEP:,}) until empty"
    reqs = stream
    calls = []

    def setup():
        return (_full_tree(reqs, engine),), {}

    def drain(t: RadixCache) -> int:
        n = 0
        while t.evict(EVICT_STEP):
            n += 1
        calls.append(n)
        return n

    started = time.perf_counter()
    benchmark.pedantic(drain, setup=setup, rounds=3 if engine == "native" else 1, iterations=1)
    # Every row empties the same tree in the same number of calls.
    native = _full_tree(reqs, "native")
    assert calls and calls[-1] == drain(native) > 0 and native.total_size == 0
    benchmark.extra_info["evict_calls"] = calls[-1]
    if benchmark.stats:
        benchmark.extra_info["evicts_per_s"] = calls[-1] / benchmark.stats.stats.mean
    benchmark.extra_info["wall_s_with_setup"] = time.perf_counter() - started


# --- per request from Python: the key conversion -------------------------------------------------


def _serve_tokens(prompts: list, engine: str = "native") -> int:
    """match_prefix, lock, insert, unlock per request, the prompts as given."""
    t = RadixCache(engine=engine)
    hits = 0
    for prompt in prompts:
        m = t.match_prefix(prompt)
        t.lock(m)
        t.insert(prompt)
        t.unlock(m)
        hits += m.length
    return hits


def _serve_sglang(prompts: list) -> int:
    """The same loop through SGLang's own RadixCache (no KV pools: keys only)."""
    from sglang.srt.mem_cache.radix_cache import RadixCache as SGLangRadixCache

    t = SGLangRadixCache(None, None, page_size=1, disable=False)
    hits = 0
    for prompt in prompts:
        matched, node = t.match_prefix(prompt)[:2]
        t.inc_lock_ref(node)
        t.insert(prompt)
        t.dec_lock_ref(node)
        hits += len(matched)
    return hits


@pytest.mark.parametrize("row", ["native-list", "native-numpy", "native-array-q", "reference-list", "sglang-list"])
def test_per_request_keys(benchmark, stream, request, row):
    """Per-request match_prefix + insert driven from Python on the first requests of the
    stream, with the prompts as lists (what SGLang's callers pass), numpy arrays and
    array('q'). SGLang's RadixCache is the peer when the sglang package is installed (it needs
    torch); the reference engine (a pure-Python tree of the same design) stands in for it."""
    import array

    benchmark.group = "radix per request from Python (match+insert, first 1,000 requests)"
    head = stream.head(REFERENCE_REQUESTS if _full(request) else len(stream))
    numpy_prompts = [head.prompt(i) for i in range(len(head))]
    want = replay(head, None).hit_tokens
    if row == "sglang-list":
        pytest.importorskip("sglang.srt.mem_cache.radix_cache", reason="the sglang package is not installed")
        lists = [p.tolist() for p in numpy_prompts]
        hits = benchmark.pedantic(_serve_sglang, args=(lists,), rounds=1, iterations=1)
    else:
        engine, form = row.split("-", 1)
        prompts = {
            "list": lambda: [p.tolist() for p in numpy_prompts],
            "numpy": lambda: numpy_prompts,
            "array-q": lambda: [array.array("q", p.tolist()) for p in numpy_prompts],
        }[form]()
        rounds = 5 if engine == "native" else 1
        hits = benchmark.pedantic(_serve_tokens, args=(prompts, engine), rounds=rounds, iterations=1)
    assert hits == want
    _rates(benchmark, head)
