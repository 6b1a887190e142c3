"""SGLang's semantics on the native engine (``osbench.serve.sglang.native``) against the
reference (``osbench.serve.sglang.stepper``), step for step, on random small workloads that
make every rule act: shared prefixes, KV pressure with retractions, chunked prefill, mixed
chunks, every queue policy, pages, closed-loop clients; its errors; Ctrl-C and the GIL."""

from __future__ import annotations

import threading
import time
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from interrupts import assert_stops
from runs import assert_same_runs

import osbench as ob
from osbench import _native
from osbench.errors import ArgumentError, ArgumentTypeError
from osbench.serve.requests import Requests
from osbench.serve.sglang import POLICIES, EngineConfig, native, stepper
from osbench.serve.sglang.policy import WAITING_QUEUE_PREFIX_MATCH_MAX
from osbench.serve.steptime import StepTime

# Coefficients that are not binary fractions: the times are equal only if the arithmetic is.
LINEAR = StepTime.linear(0.0037, 1.3e-5, 7.1e-4, 3.3e-7)


def both(reqs: Requests, cfg: EngineConfig, **kw: object) -> tuple:
    """The reference's run and the native one, or the reference's error and the native one's."""
    try:
        ref = stepper.run(reqs, cfg, LINEAR, record=True, **kw)  # type: ignore[arg-type]
    except ArgumentError as exc:
        with pytest.raises(ArgumentError) as caught:
            native.run(reqs, cfg, LINEAR, record=True, **kw)  # type: ignore[arg-type]
        assert str(caught.value) == str(exc)
        return None, None
    return ref, native.run(reqs, cfg, LINEAR, record=True, **kw)  # type: ignore[arg-type]


@st.composite
def workloads(draw):  # type: ignore[no-untyped-def]
    """Small workloads and configurations that make things happen: pools a few requests fill
    (retractions, evictions), small chunks, few distinct prompt blocks (shared prefixes)."""
    n = draw(st.integers(1, 40))
    page = draw(st.sampled_from([1, 1, 2, 4, 16]))
    prompt = draw(st.lists(st.integers(1, 120), min_size=n, max_size=n))
    output = draw(st.lists(st.integers(1, 60), min_size=n, max_size=n))
    gaps = draw(st.lists(st.sampled_from([0.0, 0.0, 0.003, 0.05, 1.0]), min_size=n, max_size=n))
    source_block = draw(st.sampled_from([4, 16, 32]))
    blocks = None
    if draw(st.booleans()):
        alphabet = draw(st.integers(1, 3))
        blocks = [[draw(st.integers(0, alphabet - 1)) for _ in range(-(-p // source_block))] for p in prompt]
    reqs = Requests(np.cumsum(gaps), prompt, output, blocks=blocks, source_block=source_block)
    need = max(p + o for p, o in zip(prompt, output)) + page + 1
    tokens = -(-(need + draw(st.integers(0, 600))) // page) * page
    chunk = draw(st.sampled_from([-1, 8, 16, 64, 8192]))
    cfg = EngineConfig(
        max_total_tokens=tokens,
        page_size=page,
        schedule_policy=draw(st.sampled_from(POLICIES)),
        max_running_requests=draw(st.sampled_from([None, 1, 3, 8, 32])),
        max_prefill_tokens=draw(st.sampled_from([64, 256, 16384])),
        chunked_prefill_size=chunk if chunk < 0 else max(chunk, page),
        schedule_conservativeness=draw(st.sampled_from([0.1, 0.3, 1.0, 2.0])),
        enable_mixed_chunk=draw(st.booleans()),
        random_seed=draw(st.sampled_from([0, 7, 2**40 + 3, 2**70 + 11])),
    )
    return reqs, cfg


@settings(max_examples=400, deadline=None)
@given(case=workloads(), concurrency=st.sampled_from([None, None, 1, 4]))
def test_native_equals_the_reference_step_for_step(case: tuple, concurrency: object) -> None:
    reqs, cfg = case
    ref, nat = both(reqs, cfg, concurrency=concurrency)
    if ref is not None:
        assert_same_runs(ref, nat)


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize(
    ("tokens", "chunk", "mixed", "page"),
    [(1 << 40, -1, False, 1), (700, -1, False, 1), (700, 16, False, 1), (800, 64, True, 4), (1200, 16, True, 2)],
)
def test_native_equals_the_reference_under_pressure(
    policy: str, tokens: int, chunk: int, mixed: bool, page: int
) -> None:
    """Golden regimes, each policy: no pressure, decode pressure (retractions), chunks, mixed."""
    rng = np.random.default_rng(3)
    n = 80
    prompt = np.clip(rng.lognormal(np.log(60), 0.6, n), 1, 240).astype(np.int64)
    output = np.clip(rng.lognormal(np.log(30), 0.6, n), 1, 120).astype(np.int64)
    blocks = [[int(rng.integers(0, 3)), *rng.integers(100, 1 << 40, -(-int(p) // 64) - 1).tolist()] for p in prompt]
    reqs = Requests(np.cumsum(rng.exponential(1 / 300, n)), prompt, output, blocks=blocks, source_block=64)
    cfg = EngineConfig(
        max_total_tokens=tokens,
        schedule_policy=policy,
        chunked_prefill_size=chunk,
        enable_mixed_chunk=mixed,
        page_size=page,
        max_prefill_tokens=256,
        max_running_requests=16,
        schedule_conservativeness=0.1,  # admits eagerly: decodes then run short and retract
    )
    ref, nat = both(reqs, cfg)
    assert ref is not None
    assert_same_runs(ref, nat)
    if tokens == 700 and chunk == -1:
        assert ref.preemptions.sum() > 0  # the regime retracts


def test_lpm_keeps_the_deprioritized_in_queue_order() -> None:
    """``_sort_by_longest_prefix`` gives every deprioritized request one key (infinity): they
    keep their order whatever prefix each matched. Here the last three share their first 32
    tokens with the one before them (deprioritized) and match 31 and 32 tokens of the tree: a
    sort by matched length among them admits the 33-token request first."""
    prompts = [1] * 21 + [32, 32, 32, 33]
    reqs = Requests([0.0] * 25, prompts, [1] * 25, blocks=[[0]] * 24 + [[0, 0]], source_block=32)
    cfg = EngineConfig(max_total_tokens=36, page_size=1, schedule_policy="lpm", max_prefill_tokens=64)
    ref, nat = both(reqs, cfg)
    assert_same_runs(ref, nat)
    assert ref.record.step(3)["admitted"] == [(23, 31)]


def test_native_equals_the_reference_above_the_lpm_fallback() -> None:
    """More than 128 waiting: lpm and hrrn fall back to the queue's order, and the cache-agnostic
    refresh of the waiting prefixes runs."""
    n = WAITING_QUEUE_PREFIX_MATCH_MAX + 72
    rng = np.random.default_rng(5)
    blocks = [[int(rng.integers(0, 4)), int(rng.integers(0, 1 << 30))] for _ in range(n)]
    reqs = Requests(np.zeros(n), np.full(n, 64), rng.integers(1, 40, n), blocks=blocks, source_block=32)
    for policy in ("lpm", "hrrn", "random"):
        ref, nat = both(reqs, EngineConfig(max_total_tokens=3000, schedule_policy=policy, max_running_requests=8))
        assert_same_runs(ref, nat)


def test_simulate_runs_sglang_natively() -> None:
    reqs = Requests(
        [0.0, 0.01, 0.02], [100, 200, 50], [20, 10, 30], blocks=[[1, 2], [1, 3, 4, 5], [1]], source_block=64
    )
    row = ob.serve.ENGINES["sglang"]
    assert "native" in row.engines and row.engines[0] == "native"
    kw = {"semantics": "sglang", "step_time": LINEAR, "max_total_tokens": 5000, "schedule_policy": "lpm"}
    a = ob.serve.simulate(reqs, engine="native", **kw)
    b = ob.serve.simulate(reqs, engine="reference", **kw)
    np.testing.assert_array_equal(a.finish, b.finish)
    np.testing.assert_array_equal(ob.serve.simulate(reqs, **kw).finish, a.finish)  # the default


OPTIONS = {"record": False, "jump": False}


def _arrays(reqs: Requests, keys: Any, offsets: Any) -> dict[str, Any]:
    """The binding's ``requests`` argument."""
    return {
        "arrival": reqs.arrival,
        "prompt_len": reqs.prompt_len,
        "output_len": reqs.output_len,
        "keys": keys,
        "key_offsets": offsets,
    }


def test_the_binding_takes_exactly_the_rows_fields() -> None:
    reqs = Requests([0.0], [10], [5])
    cfg = EngineConfig(max_total_tokens=100)
    keys, offsets = reqs.prompt_block_keys(1)
    base = {name: getattr(cfg, name) for name in ob.serve.ENGINES["sglang"].config_fields}
    kind, coefficients = LINEAR.spec()
    engine = {"settings": base, "step_kind": kind, "step_coefficients": list(coefficients)}
    columns, _, _ = _native.serve_simulate_sglang(_arrays(reqs, keys, offsets), engine, OPTIONS)
    assert len(columns["start"]) == 5
    # Prompts without content go keyless: the keys the core makes serve as those Python makes.
    many = Requests(np.zeros(30), np.arange(1, 31) * 7, np.full(30, 9))
    k, o = many.prompt_block_keys(1)
    wide = {**engine, "settings": {**base, "max_total_tokens": 2000}}
    keyed, _, _ = _native.serve_simulate_sglang(_arrays(many, k, o), wide, OPTIONS)
    keyless, _, _ = _native.serve_simulate_sglang(_arrays(many, None, None), wide, OPTIONS)
    for name, column in keyed.items():
        np.testing.assert_array_equal(column, keyless[name], err_msg=name)
    with pytest.raises(ArgumentTypeError, match=r'settings\["block_size"\] is not accepted: settings takes'):
        _native.serve_simulate_sglang(
            _arrays(reqs, keys, offsets), {**engine, "settings": {**base, "block_size": 4}}, OPTIONS
        )
    with pytest.raises(ArgumentError, match=r"schedule_policy=\"priority\" is not accepted: one of fcfs, lpm"):
        bad = {**base, "schedule_policy": "priority"}
        _native.serve_simulate_sglang(_arrays(reqs, keys, offsets), {**engine, "settings": bad}, OPTIONS)
    with pytest.raises(ArgumentError, match=r"key_offsets=.* is not accepted: prompt_len\[i\] keys"):
        _native.serve_simulate_sglang(_arrays(reqs, keys[:5], np.array([0, 5])), engine, OPTIONS)
    with pytest.raises(ArgumentError, match=r"requests=0 is not accepted: prompt_len \+ output_len \+ page_size"):
        small = {**base, "max_total_tokens": 16}
        _native.serve_simulate_sglang(_arrays(reqs, keys, offsets), {**engine, "settings": small}, OPTIONS)


def test_bad_input_is_refused_as_the_reference_refuses_it() -> None:
    reqs = Requests([0.0], [500], [100])
    cfg = EngineConfig(max_total_tokens=550)
    for run in (stepper.run, native.run):
        with pytest.raises(ArgumentError, match=r"requests=0 is not accepted: prompt_len \+ output_len \+ page_size=1"):
            run(reqs, cfg, LINEAR)
    with pytest.raises(ArgumentTypeError, match=r"step_time=.* is not accepted by the native engine"):
        native.run(reqs, EngineConfig(max_total_tokens=5000), lambda batch: 0.01)
    with pytest.raises(ArgumentError, match=r"concurrency=0 is not accepted"):
        native.run(reqs, EngineConfig(max_total_tokens=5000), LINEAR, concurrency=0)


def test_ctrl_c_stops_a_long_native_run() -> None:
    assert_stops(
        """
        import numpy as np
        from osbench.serve.requests import Requests
        from osbench.serve.sglang import EngineConfig, native
        from osbench.serve.steptime import StepTime
        rng = np.random.default_rng(0)
        reqs = Requests(np.zeros(3000), rng.integers(100, 2000, 3000), rng.integers(500, 2000, 3000))
        cfg = EngineConfig(max_total_tokens=80000, max_running_requests=256)
        for _ in range(1000):  # minutes of work if nothing stops it
            native.run(reqs, cfg, StepTime.linear(0.01, 1e-5, 1e-4, 1e-7))
        """
    )


def test_a_long_native_run_releases_the_gil() -> None:
    rng = np.random.default_rng(0)
    reqs = Requests(np.zeros(2000), rng.integers(100, 2000, 2000), rng.integers(200, 800, 2000))
    ticks = 0
    done = threading.Event()

    def count() -> None:
        nonlocal ticks
        while not done.is_set():
            ticks += 1
            time.sleep(0)

    worker = threading.Thread(target=count)
    worker.start()
    try:
        before = ticks
        native.run(reqs, EngineConfig(max_total_tokens=60000, max_running_requests=64), LINEAR)
        during = ticks - before
    finally:
        done.set()
        worker.join()
    assert during > 10  # holding the GIL, the counter would move only at the call's edges
