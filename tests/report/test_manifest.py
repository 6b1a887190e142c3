"""The run manifest: machine, software, seeds, wall times and datasets, in results.json and at
the end of both pages; a fact that could not be read says unknown."""

from __future__ import annotations

import datetime
import json
from pathlib import Path

import numpy as np

import osbench
from osbench._table import Table
from osbench.host.tables import fact_rows
from osbench.report import manifest
from osbench.report.model import Section


def test_results_json_holds_the_manifest(quick_report: Path) -> None:
    data = json.loads((quick_report / "results.json").read_text())
    m = data["manifest"]
    assert m["osbench"] == {"version": osbench.__version__, "build_profile": osbench.BUILD_PROFILE}
    assert m["run"]["quick"] is True and m["run"]["seed"] == 1
    datetime.datetime.fromisoformat(m["run"]["started"])
    assert m["machine"]["python"] and m["machine"]["page_size"] > 0 and m["machine"]["usable_cpus"]
    assert m["packages"]["numpy"] == np.__version__ and set(m["packages"]) == set(manifest.PACKAGES)
    assert list(m["sections"]) == list(data["sections"])
    assert all(s["seconds"] > 0 for s in m["sections"].values())
    assert m["run"]["seconds"] == round(sum(s["seconds"] for s in m["sections"].values()), 3)
    seeds = m["seeds"]["tables"]
    assert seeds["02-sched/distributions"] == 1 and seeds["02-sched/predictions"] == 2 and seeds["05-radix/05-2"] == 0
    assert m["seeds"]["report"] == 1
    for name, d in m["datasets"].items():  # whatever this machine had, with its checksum
        assert len(d["sha256"]) == 64 and d["sections"], name


def test_the_pages_end_with_the_manifest(quick_report: Path) -> None:
    md = (quick_report / "report.md").read_text()
    html = (quick_report / "index.html").read_text()
    tail = md[md.index("## Run manifest") :]
    assert "## " not in tail[3:] and "**Machine**" in tail and "**Seeds**" in tail and "**Datasets**" in tail
    assert html.index('<section id="manifest">') > html.index('<section id="engines">')
    assert 'href="#manifest"' in html


def test_datasets_are_gathered_from_the_sections() -> None:
    sections = [
        Section("04-cache", "cache", "", results={"datasets": {"cloudphysics": "a" * 64}, "seconds": 1.0}),
        Section("05-radix", "radix", "", results={"datasets": {"cloudphysics": "a" * 64, "m": "b" * 64}}),
        Section("engines", "engines", "", tables=[Table("t", ["a"], [[1]], key="k", seed=5)]),
    ]
    m = manifest.collect(sections, quick=False, seed=3, started=datetime.datetime(2026, 1, 2, 3, 4, 5))
    assert m["datasets"] == {
        "cloudphysics": {"sha256": "a" * 64, "sections": ["04-cache", "05-radix"]},
        "m": {"sha256": "b" * 64, "sections": ["05-radix"]},
    }
    assert m["seeds"] == {"report": 3, "tables": {"engines/k": 5}}
    assert m["run"]["started"] == "2026-01-02T03:04:05" and m["run"]["seconds"] == 1.0
    rows = {r[0]: r[1] for r in manifest.tables(m)[3].rows}
    assert rows == {"engines/k": 5}


def test_facts_that_could_not_be_read_say_unknown_never_zero() -> None:
    info = {
        "cpu_model": None,
        "logical_cpus": 2,
        "physical_cores": None,
        "usable_cpus": [0, 1],
        "freq_mhz": {"current": 2696.0, "min": 0.0, "max": 0.0},  # what psutil gives in a VM
        "caches": [{"name": "L1d", "size_bytes": 49152}],
        "memory_total": 25_269_338_112,
        "memory_available": None,
        "page_size": 4096,
    }
    rows = dict(fact_rows(info))
    assert rows["CPU"] == "unknown"
    assert rows["frequency"] == "2,696 MHz (max unknown)"
    assert rows["cores"].startswith("2 logical, unknown physical")
    assert rows["memory"] == "23.5 GiB total, unknown available; page 4 KiB"
    assert rows["caches (cpu0)"] == "L1d 48 KiB"
    assert "unknown" in rows["kernel"] and " 0 " not in " ".join(rows.values())


def test_a_damaged_manifest_still_renders() -> None:
    for m in ({}, {"machine": None, "run": 5, "sections": {"x": None}, "seeds": {"tables": None}}):
        tables = manifest.tables(m)  # type: ignore[arg-type]
        assert [t.key for t in tables] == ["machine", "software", "run", "seeds", "datasets"]
        assert all(t.to_text() and t.to_html() for t in tables)
