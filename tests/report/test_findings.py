"""The findings: computed from results.json, one sentence each with its number and a link, first
in both pages; where the lecture or theory disagrees, they say so."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest

from osbench._format import DIGITS, number
from osbench._table import first_sentence
from osbench.report.findings import FINDINGS, compute

# What a quick run on any machine finds (the datasets' findings need the traces).
ALWAYS = {
    "host.thread_hop",
    "host.process_hop",
    "host.gil",
    "host.page_faults",
    "host.memory_latency",
    "sched.srpt_vs_fcfs",
    "sched.lecture_figures",
    "sched.quantum",
    "mem.reserve_vs_paging",
    "mem.thrashing",
    "cache.best_vs_lru",
    "cache.lecture_zipf",
    "cache.wins_where",
    "radix.sharing",
    "radix.prefix_vs_whole",
    "serve.rate",
    "serve.goodput",
    "serve.kv_bound",
    "serve.preemption",
    "serve.chunked_prefill",
    "serve.capacity",
    "serve.swap",
    "engines.speedup",
}
NEEDS_DATA = {
    "cache.cloudphysics": "cloudphysics",
    "radix.mooncake": "mooncake-conversation",
    "serve.prefix_caching": "mooncake-conversation",
    "serve.routers": "mooncake-conversation",
    "serve.semantics": "mooncake-conversation",
    "serve.kv_tiers": "mooncake-conversation",
    "serve.disaggregation": "azure-code-2023",
}


@pytest.fixture(scope="module")
def results(quick_report: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((quick_report / "results.json").read_text())
    return data


def by_key(results: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f["key"]: f for f in results["findings"]}


def test_every_finding_a_run_supports_is_there(results: dict[str, Any]) -> None:
    keys = set(by_key(results))
    assert keys >= ALWAYS
    for key, dataset in NEEDS_DATA.items():
        assert (key in keys) == (dataset in results["manifest"]["datasets"]), key
    assert len(FINDINGS) == len(ALWAYS) + len(NEEDS_DATA)


def test_findings_are_recomputed_from_results_json_alone(results: dict[str, Any]) -> None:
    stored = results["findings"]
    assert [f.to_dict() for f in compute(results)] == stored


def test_each_finding_is_one_sentence_with_its_numbers(results: dict[str, Any]) -> None:
    for f in results["findings"]:
        assert f["text"].endswith(".") and first_sentence(f["text"])[1] == "", f["text"]
        assert re.search(r"\d", f["text"]), f["text"]
        assert not re.search(r"\d{5,}", f["text"]), f["text"]  # thousands grouped
        assert all(significant(x) <= DIGITS + 1 for x in re.findall(r"\d[\d,]*\.\d+", f["text"])), f["text"]


def significant(decimal: str) -> int:
    """The significant digits of a decimal as written (``0.0655`` has 3, ``1,234.5`` has 5)."""
    return len(decimal.replace(",", "").replace(".", "").lstrip("0"))


def test_significant_digits_are_counted_as_written() -> None:
    assert [significant(x) for x in ("0.0655", "6.555", "1,234.5", "0.123456", "10.5")] == [3, 4, 5, 6, 3]


def test_the_numbers_are_the_results(results: dict[str, Any]) -> None:
    """The SRPT finding quotes the distributions table; the Zipf one the lecture's table."""
    sched = {t["key"]: t for t in results["sections"]["02-sched"]["tables"]}["distributions"]
    rows = {(r[0].split()[0], r[1]): r for r in sched["rows"]}
    text = by_key(results)["sched.srpt_vs_fcfs"]["text"]
    assert f"SRPT's mean response is {number(rows[('lognormal', 'srpt')][2])}" in text
    assert f"FCFS's {number(rows[('lognormal', 'fcfs')][2])}" in text
    zipf = {t["key"]: t for t in results["sections"]["04-cache"]["tables"]}["zipf"]
    lru = next(r for r in zipf["rows"] if r[0] == "lru")
    assert f"LRU {number(lru[1])}%" in by_key(results)["cache.lecture_zipf"]["text"]


def test_golden_facts_agree_with_the_lecture(results: dict[str, Any]) -> None:
    """Simulations fixed by their seeds: the lecture's figures are reproduced (the host's are not
    fixed, so they are not asserted)."""
    found = by_key(results)
    for key in (
        "cache.lecture_zipf",
        "mem.reserve_vs_paging",
        "radix.sharing",
        "radix.prefix_vs_whole",
        "serve.kv_bound",
    ):
        assert found[key]["agrees"] is True and found[key]["against"] == "the lecture", found[key]
    assert found["sched.srpt_vs_fcfs"]["agrees"] is True and "(theory agrees)" in found["sched.srpt_vs_fcfs"]["text"]
    # The lecture's MLFQ near SRPT is not reproduced, and the finding says so.
    assert found["sched.lecture_figures"]["agrees"] is False
    assert "MLFQ" in found["sched.lecture_figures"]["text"]


def _table(results: dict[str, Any], section: str, key: str) -> dict[str, Any]:
    return next(t for t in results["sections"][section]["tables"] if t["key"] == key)


def test_a_disagreement_is_said(results: dict[str, Any]) -> None:
    damaged = copy.deepcopy(results)
    zipf = _table(damaged, "04-cache", "zipf")
    next(r for r in zipf["rows"] if r[0] == "lru")[1] = 50.0  # now far from the lecture's 37.9
    dist = _table(damaged, "02-sched", "distributions")
    srpt = next(r for r in dist["rows"] if r[0].startswith("lognormal") and r[1] == "srpt")
    srpt[3] = 3.0  # theory far from the simulation
    found = {f.key: f for f in compute(damaged)}
    assert found["cache.lecture_zipf"].agrees is False and "differs" in found["cache.lecture_zipf"].text
    assert found["sched.srpt_vs_fcfs"].agrees is False and "outside" in found["sched.srpt_vs_fcfs"].text


def test_missing_or_damaged_data_leaves_only_its_finding_out(results: dict[str, Any]) -> None:
    damaged = copy.deepcopy(results)
    del damaged["sections"]["02-sched"]
    for row in _table(damaged, "03-mem", "thrashing")["rows"]:
        row[1] = "garbage"  # the fault rates
    damaged["sections"]["01-host"]["report"]["gil"] = None
    _table(damaged, "06-serve", "06-3")["rows"] = []  # as the table is without its dataset
    keys = {f.key for f in compute(damaged)}
    assert not any(k.startswith("sched.") for k in keys)
    assert "mem.thrashing" not in keys and "host.gil" not in keys and "serve.prefix_caching" not in keys
    assert {"mem.reserve_vs_paging", "cache.lecture_zipf", "host.thread_hop"} <= keys
    for garbage in ({}, {"sections": 5}, {"sections": {"01-host": []}}, [], None):
        assert compute(garbage) == []  # type: ignore[arg-type]


def test_the_pages_open_with_the_findings_and_link_each_to_its_table(
    quick_report: Path, results: dict[str, Any]
) -> None:
    html = (quick_report / "index.html").read_text()
    md = (quick_report / "report.md").read_text()
    assert html.index('id="findings"') < html.index('id="contents"') < html.index('id="01-host"')
    assert md.index("## What this run found") < md.index("## Contents") < md.index("## 01 ")
    titles = {t["title"] for s in results["sections"].values() for t in s["tables"]}
    for f in results["findings"]:
        assert f'id="{f["target"]}"' in html and f'<a id="{f["target"]}"></a>' in md, f["target"]
        assert f'href="#{f["target"]}"' in html and f"](#{f['target']})" in md
        if f["target"].startswith("figure-"):
            assert f["target"].removeprefix("figure-") in {
                n for s in results["sections"].values() for n in s["figures"]
            }
        else:
            assert f["target_title"] in titles
    disagreeing = [f for f in results["findings"] if f["agrees"] is False]
    assert disagreeing and html.count("differs from") >= len(disagreeing)


def _finding(data: dict[str, Any], key: str) -> Any:
    return {f.key: f for f in compute(data)}[key]


def _round_trip(data: dict[str, Any], mechanism: str) -> dict[str, Any]:
    rt: dict[str, Any] = next(
        r
        for r in data["sections"]["01-host"]["report"]["round_trips"]
        if r["mechanism"] == mechanism and r["placement"] == "same CPU"
    )
    return rt


def test_a_finding_knows_its_noise(results: dict[str, Any]) -> None:
    """An effect the spread does not resolve is said to be unresolved, with the load; a ratio
    that cannot be is flagged as a measurement problem; ties are ties."""
    data = copy.deepcopy(results)
    data["sections"]["01-host"]["report"]["load_average"] = [3.5, 4.25]
    py, rust = _round_trip(data, "process-pipe")["spread"], _round_trip(data, "native-process-pipe")["spread"]
    rust.update(median=py["median"] * 1.2, p25=py["median"] * 1.1, p75=py["median"] * 1.3)  # Rust "slower"
    text = _finding(data, "host.process_hop").text
    assert "cannot be: a measurement problem on this machine (load 4.25" in text and "share of it is -" not in text
    rust.update(median=py["median"] * 0.99, p25=py["p25"], p75=py["p75"])  # inside Python's spread
    assert "not resolved on this machine (load 4.25" in _finding(data, "host.process_hop").text
    rust.update(median=py["median"] / 2, p25=py["median"] / 2.2, p75=py["median"] / 1.8)
    py.update(p25=py["median"] * 0.99, p75=py["median"] * 1.01)
    assert "so Python's share of it is 50%" in _finding(data, "host.process_hop").text

    gil = data["sections"]["01-host"]["report"]["gil"]
    for row in gil["rows"]:
        if (row["workload"], row["way"]) == ("python", "threads"):
            row["speedup"] = 1.28
    found = _finding(data, "host.gil")
    assert found.agrees is False and "cannot be under the GIL: a measurement problem" in found.text

    z = data["sections"]["04-cache"]["zipf_curves"]
    for curve in z["hit_ratio"].values():
        curve[:] = [0.5] * len(curve)
    assert "LRU is the best online policy (tied with" in _finding(data, "cache.best_vs_lru").text
