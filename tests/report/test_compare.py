"""``osbench report --compare A B``: two reports made on this machine, one of them damaged."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from osbench._format import quantity
from osbench.report import NotResultsError, compare
from osbench.report.compare import check_section, load, measured
from osbench.report.model import SIMULATED


def osbench(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "osbench", *args], capture_output=True, text=True, timeout=300)


def results_of(folder: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((folder / "results.json").read_text())
    return data


def test_two_runs_side_by_side(quick_report: Path, second_report: Path) -> None:
    c = compare(quick_report, second_report)
    assert [s.status for s in c.sections] == ["identical"] * len(SIMULATED)
    assert (
        "identical in 02-sched, 03-mem, 04-cache, 05-radix, 06-serve." in c.summary[1] and "FLAGGED" not in c.summary[1]
    )
    a, b = measured(results_of(quick_report)), measured(results_of(second_report))
    assert a.keys() == b.keys() and len(a) > 50
    for kind in (
        "round trip: ",
        "GIL: ",
        "page faults: ",
        "copy-on-write: ",
        "memory latency: ",
        "engine: ",
        "wall time: ",
    ):
        assert any(name.startswith(kind) for name in a), kind
    rows = {r[0]: r for r in c.host.rows}
    name = "round trip: os.pipe pair, same CPU"
    (x, unit), (y, _) = a[name], b[name]
    assert rows[name] == [name, quantity(x, unit), quantity(y, unit), y / x]
    machines = {r[0]: r for r in c.machines.rows}
    assert machines["CPU"][3] == "same" and machines["scale"][1:3] == ["quick", "quick"]


def test_a_run_compared_with_itself_changes_nothing(quick_report: Path) -> None:
    c = compare(quick_report, quick_report / "results.json")
    assert all(s.identical for s in c.sections) and all(r[3] == 1.0 for r in c.host.rows)
    assert c.findings.rows == [] and c.unchanged_findings == len(results_of(quick_report)["findings"])


@pytest.fixture
def damaged(second_report: Path, tmp_path: Path) -> Path:
    """The second report with faults injected into its results.json: a simulated value changed, a
    section deleted, the host measurements and the machine facts broken."""
    folder = tmp_path / "damaged"
    shutil.copytree(second_report, folder)
    data = results_of(folder)
    alloc = next(t for t in data["sections"]["03-mem"]["tables"] if t["key"] == "allocation")
    alloc["rows"][0][1] = 99.0  # first fit's rejected %
    data["sections"]["04-cache"]["zipf_curves"]["hit_ratio"]["lru"][2] += 1e-6
    del data["sections"]["05-radix"]
    data["sections"]["01-host"]["report"]["round_trips"] = "garbage"
    data["manifest"]["machine"] = None
    (folder / "results.json").write_text(json.dumps(data))
    return folder


def test_a_damaged_run_is_flagged_never_a_crash(quick_report: Path, damaged: Path) -> None:
    c = compare(quick_report, damaged)
    status = {s.key: s for s in c.sections}
    assert status["02-sched"].identical
    mem = status["03-mem"]
    assert mem.status == "1 values differ" and mem.differences == [
        (
            "Demo 2: capacity 20,000, 5,000 requests, lognormal sizes (mean 50, cap 400), offered load 0.9, sizes known "
            "/ row 1 (first fit) / rejected %",
            quantity(results_of(quick_report)["sections"]["03-mem"]["tables"][4]["rows"][0][1]),
            "99",
        )
    ]
    assert [d[0] for d in status["04-cache"].differences] == ["zipf_curves / hit_ratio / lru"]
    assert status["05-radix"].status == "missing in B"
    assert "FLAGGED: 03-mem 1 values differ; 04-cache 1 values differ; 05-radix missing in B." in c.summary[1]
    rows = {r[0]: r for r in c.host.rows}
    trip = rows["round trip: os.pipe pair, same CPU"]
    assert trip[2] == "missing" and trip[3] == "-"
    assert rows["GIL: python threads, speedup"][2] != "missing"  # the rest of the host is still compared
    assert {r[0]: r for r in c.machines.rows}["CPU"][2] == "unknown"
    changed = {r[0] for r in c.findings.rows}
    assert {"A thread hop", "Prefix sharing", "Paging vs reserving"} <= changed
    # ... and the same from the command line, which says so and exits 0.
    out = osbench("report", "--compare", str(quick_report), str(damaged), "--out", str(damaged.parent / "cmp"))
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    assert "FLAGGED: 03-mem 1 values differ" in out.stdout and "row 1 (first fit) / rejected %" in out.stdout


def test_different_scales_are_not_compared_for_identity(quick_report: Path, tmp_path: Path) -> None:
    data = results_of(quick_report)
    data["manifest"]["run"]["quick"] = False
    (tmp_path / "results.json").write_text(json.dumps(data))
    check = check_section("02-sched", results_of(quick_report), data)
    assert check.status.startswith("not comparable: A ran quick with seed 1, B full with seed 1")


def test_the_command_writes_the_comparison_folder(quick_report: Path, second_report: Path, tmp_path: Path) -> None:
    out = osbench("report", "--compare", str(quick_report), str(second_report), "--out", str(tmp_path / "cmp"))
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith(f"A: {quick_report / 'results.json'}\nB: {second_report / 'results.json'}")
    assert "Every measured figure, A beside B" in out.stdout
    folder = tmp_path / "cmp"
    data = json.loads((folder / "compare.json").read_text())
    assert set(data["simulated"]) == set(SIMULATED) and data["summary"]
    html = (folder / "index.html").read_text()
    assert html.startswith("<!DOCTYPE html>") and 'id="host"' in html and 'id="machines"' in html
    assert "# osbench comparison" in (folder / "compare.md").read_text()
    js = osbench("report", "--compare", str(quick_report), str(second_report), "--json", "--out", str(folder))
    assert json.loads(js.stdout)["summary"] == data["summary"]


@pytest.mark.parametrize(
    "content, message",
    [
        (b"\x00\x01 not json", "is not an osbench results.json: Expecting value: line 1 column 1"),
        (b'{"sections": ', "is not an osbench results.json: Expecting value"),
        (b"[1, 2]", "is not an osbench results.json: it has no sections"),
        (b'{"host": {}}', "is not an osbench results.json: it has no sections"),
        (b"\xff\xfe", "is not an osbench results.json"),
    ],
)
def test_a_file_that_is_not_a_results_json_is_one_line(
    quick_report: Path, tmp_path: Path, content: bytes, message: str
) -> None:
    bad = tmp_path / "results.json"
    bad.write_bytes(content)
    with pytest.raises(NotResultsError, match=message):
        load(bad)
    out = osbench("report", "--compare", str(quick_report), str(tmp_path), "--out", str(tmp_path / "cmp"))
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and "Traceback" not in out.stderr
    assert str(bad) in out.stderr and message.split(":")[0] in out.stderr
    assert not (tmp_path / "cmp").exists()


def test_a_missing_report_is_one_line(quick_report: Path, tmp_path: Path) -> None:
    out = osbench("report", "--compare", str(tmp_path / "nowhere"), str(quick_report))
    assert (
        out.returncode == 2
        and out.stderr
        == f"osbench: error: {tmp_path / 'nowhere'}: no results.json there (give a report folder or its results.json)\n"
    )


GARBAGE: list[Any] = [None, "x", 5, 0, -1.5, float("inf"), True, [], {}, [1, "a"], {"a": None}]


def _nodes(v: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """The path of every node of a JSON value (the root aside)."""
    out = [path] if path else []
    if isinstance(v, dict):
        for k, x in v.items():
            out += _nodes(x, (*path, k))
    elif isinstance(v, list):
        for i, x in enumerate(v[:3]):  # the first few elements of a list stand for the rest
            out += _nodes(x, (*path, i))
    return out


def test_no_damage_to_a_results_file_crashes_the_comparison(quick_report: Path) -> None:
    """Any node of results.json replaced by garbage: the comparison (and its pages) still come out."""
    import copy
    import random

    from osbench.report.compare import side_by_side
    from osbench.report.findings import compute
    from osbench.report.manifest import tables

    good = results_of(quick_report)
    paths = _nodes(good)
    rng = random.Random(18)
    for _ in range(150):
        bad = copy.deepcopy(good)
        for path in rng.sample(paths, 3):
            node = bad
            try:
                for key in path[:-1]:
                    node = node[key]
                node[path[-1]] = rng.choice(GARBAGE)
            except (KeyError, IndexError, TypeError):
                continue  # an earlier replacement removed this path
        c = side_by_side(good, bad)
        assert c.to_text() and c.to_html() and c.to_markdown() and json.dumps(c.to_dict())
        compute(bad)
        assert all(t.to_html() for t in tables(bad.get("manifest")))
