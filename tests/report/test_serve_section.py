"""The report's serving section: its tables, figures and raw numbers are the engine's, its findings
quote them, and it stands without the traces."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

import osbench as ob
from osbench import datasets
from osbench._format import duration, number, percent
from osbench.report.findings import compute
from osbench.serve import lecture
from osbench.serve.slo import highest_within_slo


@pytest.fixture(scope="module")
def results(quick_report: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((quick_report / "results.json").read_text())
    return data


@pytest.fixture(scope="module")
def section(results: dict[str, Any]) -> dict[str, Any]:
    s: dict[str, Any] = results["sections"]["06-serve"]
    return s


def table(section: dict[str, Any], key: str) -> dict[str, Any]:
    return next(t for t in section["tables"] if t["key"] == key)


def records(section: dict[str, Any], key: str) -> list[dict[str, Any]]:
    t = table(section, key)
    return [dict(zip(t["columns"], row)) for row in t["rows"]]


def by_key(results: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f["key"]: f for f in results["findings"]}


def test_the_section_has_its_tables_figures_and_numbers(section: dict[str, Any], quick_report: Path) -> None:
    assert [t["key"] for t in section["tables"]] == [
        "rate_sweep",
        "06-1",
        "06-2",
        "06-3",
        "06-4",
        "06-5",
        "06-6",
        "06-7",
        "06-8",
        "06-9",
        "06-disagg",
        "routers",
    ]
    assert section["figures"] == [
        "serve-latency-vs-rate",
        "serve-goodput-vs-rate",
        "serve-kv-over-time",
        "serve-capacity-vs-rate",
    ] + (["serve-routers-imbalance"] if table(section, "routers")["rows"] else [])
    for name in section["figures"]:
        assert (quick_report / "figures" / f"{name}.png").read_bytes()[:4] == b"\x89PNG"
    raw = section["rate_sweep"]
    assert raw["rows"] == table(section, "rate_sweep")["rows"] and raw["columns"] == lecture.RATE_COLUMNS
    assert (raw["slo_ttft"], raw["slo_tpot"]) == (lecture.SLO_TTFT, lecture.SLO_TPOT)


def test_the_rate_sweep_is_the_engine_run(section: dict[str, Any]) -> None:
    """One row recomputed through simulate() itself: the same numbers, exactly."""
    reqs, workload, _ = lecture.rate_workload(quick=True, seed=1)
    assert workload == section["rate_sweep"]["workload"]
    row = records(section, "rate_sweep")[2]
    r = ob.serve.simulate(reqs.at_rate(row["requests/s"]), **lecture.RATE_PRESET)
    s = r.summary(slo_ttft=lecture.SLO_TTFT, slo_tpot=lecture.SLO_TPOT)
    assert [row["TTFT p99"], row["TPOT p99"], row["goodput"], row["preemptions"]] == [
        s.ttft.p99,
        s.tpot.p99,
        s.goodput,
        s.preemptions,
    ]
    rates = [r["requests/s"] for r in records(section, "rate_sweep")]
    assert rates == sorted(rates)
    ttft = [r["TTFT p99"] for r in records(section, "rate_sweep")]
    assert ttft[-1] > 10 * ttft[0]  # the knee is in the sweep


def test_the_serving_findings_quote_the_tables(results: dict[str, Any], section: dict[str, Any]) -> None:
    found = by_key(results)
    rows = records(section, "rate_sweep")
    best = highest_within_slo(rows, lecture.SLO_TTFT, lecture.SLO_TPOT)
    assert best is not None
    assert (
        f"up to {number(best['requests/s'])} requests/s (p99 TTFT {duration(best['TTFT p99'])}"
        in found["serve.rate"]["text"]
    )
    peak = max(rows, key=lambda r: r["goodput"])
    assert f"peaks at {number(peak['goodput'])} requests/s" in found["serve.goodput"]["text"]
    chunk = records(section, "06-4")
    assert f"to {duration(chunk[-1]['TPOT p99'])}" in found["serve.chunked_prefill"]["text"]
    quarter = min(records(section, "06-2"), key=lambda r: abs(r["share of the pool"] - 0.25))
    assert f"preempted {number(quarter['preemptions'])} times" in found["serve.preemption"]["text"]
    capacity = [r for r in records(section, "06-6") if r["GPUs"] is not None]
    assert f"and {number(capacity[-1]['GPUs'])} ({capacity[-1]['deployment']}) at" in found["serve.capacity"]["text"]
    if table(section, "routers")["rows"]:
        aware = next(r for r in records(section, "routers") if r["router"] == "prefix-aware")
        assert f"serves {percent(aware['prompt tokens from the cache'])} of prompt" in found["serve.routers"]["text"]
    assert found["serve.kv_bound"]["agrees"] is True and "lecture 2.8" in found["serve.kv_bound"]["text"]
    if table(section, "06-3")["rows"]:
        on = records(section, "06-3")[1]
        assert f"serves {percent(on['prompt tokens from the cache'])}" in found["serve.prefix_caching"]["text"]
        assert "mooncake-conversation" in results["manifest"]["datasets"]


def test_a_full_cache_that_does_not_bound_the_batch_is_said(results: dict[str, Any]) -> None:
    damaged = copy.deepcopy(results)
    t = table(damaged["sections"]["06-serve"], "06-1")
    for row in t["rows"]:
        row[t["columns"].index("waiting at the end")] = 0  # nobody ever waits
    f = {x.key: x for x in compute(damaged)}["serve.kv_bound"]
    assert f.agrees is False and "as lecture 2.8 says" not in f.text
    for row in t["rows"]:
        row[t["columns"].index("KV blocks in use")] = 0.5  # the cache never fills
    f = {x.key: x for x in compute(damaged)}["serve.kv_bound"]
    assert f.agrees is False and "never fills" in f.text


def test_without_the_traces_the_section_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(datasets, "try_fetch", lambda name: (None, "no network"))
    reqs, workload, missing = lecture.rate_workload(quick=True, seed=1)
    assert missing is not None and "azure-conv-2023" in missing
    assert "generated chat requests" in workload and len(reqs) == 4_000
    assert lecture.prefix_caching_mooncake(quick=True).rows == []
