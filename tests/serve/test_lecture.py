"""Lecture demo 06 (section 2.8 in action): the tables, and the facts each must show."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest

import osbench as ob
from osbench import datasets
from osbench._format import number
from osbench._table import Table
from osbench.serve import lecture
from osbench.serve.source import fit


@pytest.fixture(scope="module")
def tables() -> dict[str, Table]:
    return {t.key: t for t in lecture.tables(quick=True)}


def rows_by(t: Table) -> list[dict[str, Any]]:
    return [dict(zip(t.columns, row)) for row in t.rows]


def test_tables_are_complete(tables: dict[str, Table]) -> None:
    assert list(tables) == ["06-1", "06-2", "06-3", "06-4", "06-5", "06-6", "06-7", "06-8", "06-9"]
    for key, t in tables.items():
        assert all(len(r) == len(t.columns) for r in t.rows)
        assert t.to_text() and t.to_markdown() and t.to_html() and t.takeaway
        if t.rows:
            assert t.setup_line, key
    assert all(tables[k].seed == lecture.SEED for k in ("06-1", "06-2", "06-4"))


def test_06_1_the_batch_is_bounded_by_the_kv_cache(tables: dict[str, Table]) -> None:
    """Section 2.8's claim: once the KV cache is full, requests wait although the scheduler would
    take more of them."""
    t = tables["06-1"]
    rows = rows_by(t)
    max_seqs = t.extra["max_num_seqs"]
    full = [r for r in rows if r["KV blocks in use"] >= 0.95]
    assert full and any(r["waiting at the end"] > 0 for r in full)
    assert all(r["largest batch"] < max_seqs for r in rows)
    assert t.extra["plateau_batch"] < max_seqs and t.extra["kv_full_from"] == full[0]["from (s)"]
    # Every arrival and every step is counted once.
    assert sum(r["arrivals"] for r in rows) == 600
    reqs = lecture._chat(600, 8.0)
    run = ob.serve.simulate(reqs, **lecture.SMALL_GPU)
    assert sum(r["steps"] for r in rows) == len(run.steps)
    assert sum(r["preemptions"] for r in rows) == int(run.preemptions.sum())
    series = t.extra["series"]
    assert np.all(np.diff(series["time"]) > 0) and len(series["time"]) <= lecture.SERIES_POINTS
    assert max(series["blocks_used"]) <= t.extra["num_blocks"] and max(series["batch"]) <= max_seqs
    # The takeaway states the numbers of the table.
    assert f"up to {t.extra['peak_waiting']} requests wait" in t.note


def test_06_2_preemptions_grow_as_the_pool_shrinks(tables: dict[str, Table]) -> None:
    rows = rows_by(tables["06-2"])
    assert rows[0]["share of the pool"] == 1.0 and rows[0]["preemptions"] == 0
    shares = [r["share of the pool"] for r in rows]
    assert shares == sorted(shares, reverse=True)
    assert rows[-1]["preemptions"] > 0
    for r in rows:
        assert (r["tokens recomputed"] == 0) == (r["preemptions"] == 0), r
    ttft = [r["TTFT p99"] for r in rows]
    assert ttft[-1] > 10 * ttft[0]


def test_recomputed_share_counts_the_work_preemption_throws_away() -> None:
    """Computed tokens are the steps' own counts, on either engine; without preemption nothing
    is recomputed, with it the excess is what the preempted requests redo."""
    reqs = ob.serve.Requests.poisson(60, 20.0, prompt_len=ob.serve.Lognormal(300, 0.5, 900), output_len=80, seed=4)
    step = ob.serve.StepTime.linear(0.01, 1e-5, 1e-4, 0.0)
    calm = ob.serve.simulate(reqs, step_time=step, num_blocks=4000)
    assert calm.preemptions.sum() == 0 and lecture.recomputed_share(calm) == 0
    tight = [ob.serve.simulate(reqs, engine=e, step_time=step, num_blocks=120) for e in ("native", "reference")]
    assert tight[0].preemptions.sum() > 0
    assert lecture.recomputed_share(tight[0]) == lecture.recomputed_share(tight[1]) > 0


def test_06_3_prefix_caching_on_mooncake(tables: dict[str, Table], dataset: Callable[[str], Path]) -> None:
    dataset(lecture.MOONCAKE)
    rows = rows_by(tables["06-3"])
    assert [(r["prefix caching"]) for r in rows] == ["off", "on", "off", "on"]
    for off, on in (rows[0:2], rows[2:4]):
        assert off["requests/s"] == on["requests/s"] and off["prompt tokens from the cache"] == 0
        assert on["prompt tokens from the cache"] > 0.05
        assert on["prefill tokens computed"] < off["prefill tokens computed"]
        assert on["TTFT p50"] < off["TTFT p50"]
    assert rows[2]["requests/s"] == pytest.approx(rows[0]["requests/s"] / 2)
    assert tables["06-3"].extra["sha256"] == datasets.REGISTRY[lecture.MOONCAKE].sha256


def test_06_3_without_the_trace_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(datasets, "try_fetch", lambda name: (None, "no network"))
    t = lecture.prefix_caching_mooncake(quick=True)
    assert t.rows == [] and t.note.startswith("Not shown:") and lecture.MOONCAKE in t.note


def test_06_4_chunked_prefill_trades_ttft_for_tpot(tables: dict[str, Table]) -> None:
    rows = rows_by(tables["06-4"])
    whole, small = rows[0], rows[-1]
    assert whole["chunked prefill"] == "off" and small["tokens a step"] == 512
    longest = [r["longest step"] for r in rows[1:]]
    assert longest == sorted(longest, reverse=True)
    assert small["TPOT p99"] < 0.75 * whole["TPOT p99"]
    assert small["TTFT p99"] > whole["TTFT p99"]
    # The row is the run: the same numbers from simulate() itself.
    reqs = ob.serve.Requests.poisson(
        800, 8.0, prompt_len=lecture.CHUNK_PROMPT, output_len=lecture.CHUNK_OUTPUT, seed=lecture.SEED
    )
    r = ob.serve.simulate(reqs, **lecture.CHUNK_GPU, max_num_batched_tokens=512, max_num_seqs=256)
    s = r.summary(slo_ttft=lecture.SLO_TTFT, slo_tpot=lecture.SLO_TPOT)
    assert [small["TTFT p99"], small["TPOT p99"], small["goodput"]] == [s.ttft.p99, s.tpot.p99, s.goodput]


def test_06_5_srpt_beats_fcfs_once_a_queue_forms_and_degrades_with_noise(
    tables: dict[str, Table], dataset: Callable[[str], Path]
) -> None:
    """Section 2.6 in a batch server, on Azure's conversation trace: at 1.5x its rate, SRPT on
    exact lengths has the lowest mean E2E, and the error's sigma costs it; short requests'
    tail slowdown is far lower than under FCFS."""
    dataset(lecture.POLICY_TRACE)
    rows = rows_by(tables["06-5"])
    loaded = {r["policy"]: r for r in rows if r["requests/s"] == max(x["requests/s"] for x in rows)}
    assert list(loaded) == [label for label, _, _ in lecture.POLICY_RUNS]
    e2e = {k: r["E2E mean"] for k, r in loaded.items()}
    assert min(e2e, key=e2e.__getitem__) == "SRPT, exact lengths"
    assert e2e["SRPT, exact lengths"] < e2e["SRPT, sigma 1"] < e2e["SRPT, sigma 2"] < e2e["FCFS"]
    short = {k: r["short: slowdown p99"] for k, r in loaded.items()}
    assert short["SRPT, exact lengths"] < short["SRPT, sigma 2"] < short["FCFS"]
    assert tables["06-5"].takeaway.startswith(
        f"At {ob._format.number(max(r['requests/s'] for r in rows))} requests/s SRPT, exact lengths"
    )


def test_06_6_the_fewest_gpus_grow_with_the_rate_and_meet_the_slo(tables: dict[str, Table]) -> None:
    rows = rows_by(tables["06-6"])
    assert [r["requests/s"] for r in rows] == [float(q) for q in lecture.CAPACITY_RATES[::2]]
    gpus = [r["GPUs"] for r in rows]
    assert gpus == sorted(gpus) and gpus[0] < gpus[-1]
    for r in rows:
        replicas, tp = (int(x) for x in r["deployment"].split(" x TP"))
        assert replicas * tp == r["GPUs"] and r["knee"] >= r["requests/s"]
        assert r["TTFT p99"] <= lecture.SLO_TTFT and r["TPOT p99"] <= lecture.SLO_TPOT
        assert r["knee per GPU"] == r["knee"] / r["GPUs"]
    last = rows[-1]
    replicas, tp = (int(x) for x in last["deployment"].split(" x TP"))
    reqs, _, _ = lecture.rate_workload(True, lecture.SEED)
    run = ob.serve.simulate_cluster(
        reqs.at_rate(last["requests/s"]), replicas=replicas, tp=tp, router="least-tokens", **lecture.RATE_PRESET
    ).merged
    assert float(np.percentile(run.ttft, 99)) == last["TTFT p99"]
    assert f"at {number(last['requests/s'])} requests/s {number(last['GPUs'])} do" in tables["06-6"].note


def test_06_8_vllm_against_sglang(tables: dict[str, Table], dataset: Callable[[str], Path]) -> None:
    """Both schedulers on the same requests and memory: SGLang's prefill-first batches stall the
    decodes (a higher p99 TPOT than vLLM's mixed steps), and its mixed chunk mixes as vLLM does;
    every row is a real run of its engine (the trace's request count, a prefix hit on Mooncake)."""
    for trace in lecture.SEMANTICS_TRACES:
        dataset(trace)
    t = tables["06-8"]
    rows = rows_by(t)
    assert {r["trace"] for r in rows} == set(lecture.SEMANTICS_TRACES)
    for trace in lecture.SEMANTICS_TRACES:
        by = {r["engine"]: r for r in rows if r["trace"] == trace}
        vllm, sglang = by["vLLM 0.33.0"], by["SGLang 0.5.23, fcfs"]
        mixed = by["SGLang 0.5.23, fcfs, mixed chunk"]
        assert sglang["TPOT p99"] > vllm["TPOT p99"]
        assert abs(mixed["TPOT p99"] - vllm["TPOT p99"]) <= lecture.MIXED_AGREES * vllm["TPOT p99"]
        assert ("SGLang 0.5.23, lpm" in by) == (trace == lecture.MOONCAKE)
    assert all(r["prompt tokens from the cache"] > 0 for r in rows if r["trace"] == lecture.MOONCAKE)
    assert t.takeaway.startswith(f"On {lecture.MOONCAKE} SGLang's prefill-first steps")


def test_06_6_swap_against_recompute_as_the_pool_shrinks(
    tables: dict[str, Table], dataset: Callable[[str], Path]
) -> None:
    """Section 3.6: with a host pool that never fills, swap recomputes nothing and copies what
    it preempts; recompute copies nothing; a pool that preempts nothing runs alike either way;
    the smaller pools preempt more; the finding states the table's numbers."""
    for name, *_ in lecture.SWAP_TRACES:
        dataset(name)
    t = tables["06-7"]
    rows = rows_by(t)
    assert len(rows) == 2 * len(lecture.SWAP_TRACES) * len(lecture.SWAP_SHARES)
    for again, swap in zip(rows[0::2], rows[1::2]):
        assert again["preemption"] == "recompute" and swap["preemption"] == f"swap over {lecture.SWAP_LINK}"
        assert again["KV blocks"] == swap["KV blocks"] and again["swapped GiB"] == again["copy time"] == 0
        assert swap["tokens recomputed"] == 0 and (swap["swapped GiB"] > 0) == (swap["preemptions"] > 0)
        if again["preemptions"] == swap["preemptions"] == 0:
            assert {k: v for k, v in again.items() if k != "preemption"} == {
                k: v for k, v in swap.items() if k != "preemption"
            }
        else:
            assert again["tokens recomputed"] > 0
    conversation = [r for r in rows if r["trace"] == "conversation" and r["preemption"] == "recompute"]
    assert conversation[-1]["preemptions"] > conversation[0]["preemptions"]
    smallest = rows[-2:]
    assert ob._format.percent(smallest[1]["E2E mean"] / smallest[0]["E2E mean"] - 1) in t.note
    assert "On the code trace" in t.takeaway


def test_06_9_kv_tiers(tables: dict[str, Table], dataset: Callable[[str], Path]) -> None:
    """A host tier below the GPU's prefix cache: no tier serves nothing from it; every run serves
    the GPU's hits plus the tier's, never more than an unbounded cache; a larger LRU tier never
    serves less (on this trace); the tier's loads take time only when it is hit; a row is the
    engine's run; the finding says which policies tie."""
    dataset(lecture.MOONCAKE)
    t = tables["06-9"]
    rows = rows_by(t)
    assert len(rows) == 1 + len(lecture.TIER_SIZES) * len(lecture.TIER_POLICIES)
    none = rows[0]
    assert (none["host tier"], none["policy"], none["from the tier"], none["tier time"]) == (0, "none", 0, 0)
    assert none["from either"] == none["from the GPU cache"] > 0.1
    bound = t.extra["unbounded"]
    gpu_bytes = t.extra["gpu_kv_bytes"]
    for r in rows:
        assert r["unbounded cache"] == bound and r["tier size"] == r["host tier"] * gpu_bytes
        assert r["from either"] == pytest.approx(r["from the GPU cache"] + r["from the tier"])
        assert r["from either"] <= bound
        assert np.isfinite([r["TTFT mean"], r["TTFT p99"]]).all() and 0 < r["TTFT mean"] <= r["TTFT p99"]
        assert (r["tier time"] > 0) == (r["from the tier"] > 0)
    assert {(r["host tier"], r["policy"]) for r in rows[1:]} == {
        (float(x), p) for x in lecture.TIER_SIZES for p in lecture.TIER_POLICIES
    }
    lru = [none] + [r for r in rows if r["policy"] == "lru"]
    totals = [r["from either"] for r in lru]
    assert totals == sorted(totals) and totals[1] > totals[0]
    assert all(r["from the tier"] > 0 for r in rows[1:])
    # The bound is what the trace allows: the table's, and the prefix cache's own when nothing is evicted.
    reqs, _ = fit(
        ob.serve.Requests.read(lecture.MOONCAKE)[: lecture.TIER_REQUESTS], ob.serve.MODELS["qwen2.5-7b"].max_model_len
    )
    assert lecture.unbounded_hit_rate(reqs, 16) == bound
    # A row is the engine's run.
    tier = ob.serve.KvTier(gpu_bytes / 2**30, lecture.TIER_MEDIUM, "arc")
    s = ob.serve.simulate(reqs, **lecture.TIER_GPU, kv_tiers=(tier,)).summary()
    arc = next(r for r in rows if (r["host tier"], r["policy"]) == (1, "arc"))
    assert [arc["from the tier"], arc["TTFT p99"], arc["tier time"]] == [s.tier_hit_rate, s.ttft.p99, s.tier_time]
    assert t.takeaway.startswith("With a host tier the size of the GPU's KV cache, ")
    # Ties are said, not a winner named from them.
    same = [dict(r, **({"from the tier": 0.05} if r["host tier"] == 1 else {})) for r in t.records()]
    assert "serves about the same share (5% of the prompt tokens)" in lecture._tier_finding(same)
    two = [dict(r, **({"from the tier": 0.1} if r["policy"] in ("arc", "gdsf") else {})) for r in same]
    assert "ARC and GDSF tie for the most (10% of the prompt tokens, against 5% for the others)" in (
        lecture._tier_finding(two)
    )


def test_the_unbounded_cache_counts_prefixes_seen_before() -> None:
    """Block k of a prompt is a hit when an earlier prompt has the same first k + 1 blocks, up to
    one token short of the prompt; with a pool that evicts nothing and requests one at a time, the
    engine's prefix cache serves exactly that."""
    blocks = [[1, 2], [1, 3], [1], [4, 2]]
    reqs = ob.serve.Requests([0.0, 10.0, 20.0, 30.0], [64, 64, 32, 64], [1, 1, 1, 1], blocks=blocks, source_block=32)
    # Request 1 shares the first 32 tokens (2 blocks), request 2 all of its 32 but the last token
    # (1 block), request 3 no prefix (its second block's content alone is not a prefix).
    assert lecture.unbounded_hit_rate(reqs, 16) == (2 + 1) * 16 / 224
    step = ob.serve.StepTime.linear(0.01, 1e-5, 1e-4, 0.0)
    run = ob.serve.simulate(reqs, step_time=step, num_blocks=1000)
    assert run.summary().prefix_hit_rate == lecture.unbounded_hit_rate(reqs, 16)
    assert lecture.unbounded_hit_rate(reqs, 32) == (1 + 0) * 32 / 224


def test_osbench_lecture_06() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "osbench", "lecture", "06", "--quick", "--json"], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    keys = [t["key"] for t in json.loads(out.stdout)["06"]]
    assert keys == ["06-1", "06-2", "06-3", "06-4", "06-5", "06-6", "06-7", "06-8", "06-9"]
