"""``osbench report --compare A B``: two runs side by side, from their results.json alone.

- The machines: their facts, software and run settings, fact by fact.
- Every measured host figure (round trips, the GIL, page faults, copy-on-write, memory latency,
  the engines' speeds, the sections' wall times) with both values and the ratio B / A.
- The simulated sections checked for identical results: the same seeds give the same numbers on
  any machine, so any difference is flagged (values equal to 1e-9 relative count as equal).
- The findings that changed.

A missing section, a missing value or a damaged part of a file is reported as such, never
raised; only a file that is not a results.json at all is refused (one line, naming it).
"""

from __future__ import annotations

import html
import json
import math
import statistics
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Union

from osbench._format import number, percent, quantity, ratio, size
from osbench._table import Table
from osbench.errors import OsbenchError
from osbench.host.tables import fact_rows
from osbench.report import findings as run_findings
from osbench.report import manifest as run_manifest
from osbench.report.model import SIMULATED
from osbench.report.render import page

RESULTS = "results.json"

REL_TOL = 1e-9
"""Two simulated numbers are the same result when they agree to this relative tolerance."""

WALL_CLOCK = ("s", "ns", "/s")
"""Units of columns that time this machine: measured, so never expected to repeat exactly."""

TITLE = "osbench comparison"

MAX_LISTED = 40

CLOSE = 1.1
"""Measured figures within this factor of each other are "close" (a shared machine is noisy)."""
"""Differences listed per section (the count says how many there are in all)."""


class NotResultsError(OsbenchError, ValueError):
    """A file given to compare is not an osbench results.json."""


def load(path: Union[str, Path]) -> tuple[Path, dict[str, Any]]:
    """A report folder's results.json (or the file itself), parsed; refused in one line when it
    is missing or is not a results.json."""
    p = Path(path)
    if p.is_dir():
        p = p / RESULTS
    if not p.is_file():
        raise NotResultsError(f"{path}: no {RESULTS} there (give a report folder or its {RESULTS})")
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise NotResultsError(f"{p} is not an osbench {RESULTS}: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("sections"), dict):
        raise NotResultsError(f"{p} is not an osbench {RESULTS}: it has no sections")
    return p, data


def _get(d: Any, *path: Any) -> Any:
    """``d[path[0]][path[1]]...``, or None where anything on the way is missing or not a container."""
    for key in path:
        if isinstance(d, dict):
            d = d.get(key)
        elif isinstance(d, list) and isinstance(key, int) and -len(d) <= key < len(d):
            d = d[key]
        else:
            return None
    return d


def _number(v: Any) -> Optional[float]:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or math.isnan(v):
        return None
    return float(v)


def _list(v: Any) -> list[Any]:
    return v if isinstance(v, list) else []


def _dict(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


# --- measured figures ------------------------------------------------------------------------


def measured(results: dict[str, Any]) -> dict[str, tuple[float, str]]:
    """Every figure that measures the machine, by name: (raw value, unit)."""
    out: dict[str, tuple[float, str]] = {}

    def put(name: str, value: Any, unit: str) -> None:
        x = _number(value)
        if x is not None:
            out[name] = (x, unit)

    report = _get(results, "sections", "01-host", "report")
    for rt in _list(_get(report, "round_trips")):
        put(f"round trip: {_get(rt, 'label')}, {_get(rt, 'placement')}", _get(rt, "spread", "median"), "ns")
    for row in _list(_get(report, "gil", "rows")):
        what = f"GIL: {_get(row, 'workload')} {_get(row, 'way')}"
        put(f"{what}, time", _get(row, "seconds", "median"), "s")
        if _get(row, "way") != "sequential":
            put(f"{what}, speedup", _get(row, "speedup"), "x")
    for p in _list(_get(report, "page_faults")):
        put(f"page faults: {_get(p, 'label')}, per page", _get(p, "ns_per_page", "median"), "ns")
    for c in _list(_get(report, "cow")):
        put(f"copy-on-write: {_get(c, 'pages_written')} pages written, per page", _get(c, "ns_per_page"), "ns")
    for p in _list(_get(report, "memory_latency")):
        b = _number(_get(p, "bytes"))
        put(f"memory latency: {size(b)}, {_get(p, 'pages')} pages", _get(p, "ns", "median"), "ns")
    for t in _list(_get(results, "sections", "engines", "tables")):
        columns = _list(_get(t, "columns"))
        units = _get(t, "units") or {}
        for row in _list(_get(t, "rows")):
            for i, column in enumerate(columns[1:], 1):
                unit = units.get(str(column), "") if isinstance(units, dict) else ""
                if unit in WALL_CLOCK and isinstance(row, list) and i < len(row):
                    put(f"engine: {row[0]}, {column}", row[i], unit)
    for key, s in _dict(_get(results, "manifest", "sections")).items():
        put(f"wall time: {key}", _get(s, "seconds"), "s")
    return out


# --- simulated results -----------------------------------------------------------------------


def _leaves(section: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    """(where, value) for every simulated value of a section: table cells by title, row and
    column (columns that time this machine left out), then the section's other results."""
    for t in _list(section.get("tables")):
        if not isinstance(t, dict):
            continue
        title, columns = t.get("title") or t.get("key") or "?", _list(t.get("columns"))
        units: dict[str, Any] = t["units"] if isinstance(t.get("units"), dict) else {}
        for r, row in enumerate(_list(t.get("rows"))):
            cells = row if isinstance(row, list) else [row]
            first = cells[0] if cells and isinstance(cells[0], str) and cells[0].strip() else ""
            label = f"row {r + 1}" + (f" ({first.strip()})" if first else "")
            for i, v in enumerate(cells):
                column = str(columns[i]) if i < len(columns) else f"column {i + 1}"
                if units.get(column, "") not in WALL_CLOCK:
                    yield f"{title} / {label} / {column}", v
        for k, v in t.items():
            if k not in ("key", "title", "columns", "units", "rows", "note", "setup", "seed"):
                yield from _walk(f"{title} / {k}", v)
    for k, v in section.items():
        if k not in ("tables", "title", "figures", "figure_captions", "skipped", "seconds"):
            yield from _walk(k, v)


def _walk(where: str, v: Any) -> Iterator[tuple[str, Any]]:
    if isinstance(v, dict):
        for k, x in v.items():
            if k != "seconds":  # wall-clock timings kept beside the results
                yield from _walk(f"{where} / {k}", x)
    elif isinstance(v, list) and any(isinstance(x, (dict, list)) for x in v):
        for i, x in enumerate(v):
            yield from _walk(f"{where} [{i}]", x)
    else:
        yield where, v


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    x, y = _number(a), _number(b)
    if x is not None and y is not None:
        return math.isclose(x, y, rel_tol=REL_TOL, abs_tol=1e-12)
    return bool(a == b)


def _show(v: Any) -> str:
    if isinstance(v, list):
        return "[" + ", ".join(_show(x) for x in v[:6]) + (", ..." if len(v) > 6 else "") + "]"
    return quantity(v)


@dataclass
class SectionCheck:
    """One simulated section checked: ``status`` in a few words, and the values that differ."""

    key: str
    status: str
    differences: list[tuple[str, str, str]] = field(default_factory=list)
    """(where, value in A, value in B); "missing" where one run lacks it."""
    total: int = 0

    @property
    def identical(self) -> bool:
        return self.status == "identical"


def _run(results: dict[str, Any]) -> tuple[Any, Any]:
    """(quick, seed) of a run (older files kept them at the top)."""
    run = _dict(_get(results, "manifest", "run"))
    return run.get("quick", results.get("quick")), run.get("seed", results.get("seed"))


def check_section(key: str, a: dict[str, Any], b: dict[str, Any]) -> SectionCheck:
    sa, sb = _get(a, "sections", key), _get(b, "sections", key)
    if not isinstance(sa, dict) and not isinstance(sb, dict):
        return SectionCheck(key, "in neither run")
    if not isinstance(sa, dict) or not isinstance(sb, dict):
        return SectionCheck(key, f"missing in {'A' if not isinstance(sa, dict) else 'B'}")
    (quick_a, seed_a), (quick_b, seed_b) = _run(a), _run(b)
    if quick_a != quick_b or seed_a != seed_b:
        return SectionCheck(
            key,
            f"not comparable: A ran {'quick' if quick_a else 'full'} with seed {seed_a}, "
            f"B {'quick' if quick_b else 'full'} with seed {seed_b}",
        )
    va, vb = dict(_leaves(sa)), dict(_leaves(sb))
    diffs = []
    for where in list(va) + [w for w in vb if w not in va]:
        if where not in vb:
            diffs.append((where, _show(va[where]), "missing"))
        elif where not in va:
            diffs.append((where, "missing", _show(vb[where])))
        elif not _same(va[where], vb[where]):
            diffs.append((where, _show(va[where]), _show(vb[where])))
    if not diffs:
        return SectionCheck(key, "identical")
    return SectionCheck(key, f"{len(diffs)} values differ", diffs[:MAX_LISTED], len(diffs))


# --- the comparison --------------------------------------------------------------------------


@dataclass
class Comparison:
    """Two runs side by side (see the module docstring)."""

    a: str
    b: str
    machines: Table
    host: Table
    sections: list[SectionCheck]
    findings: Table
    unchanged_findings: int
    summary: list[str]

    def tables(self) -> list[Table]:
        differences = [
            Table(
                f"{s.key}: {s.status}",
                ["where", "A", "B"],
                [list(d) for d in s.differences],
                note=(f"The first {len(s.differences)} of {s.total}." if s.total > len(s.differences) else ""),
                key=f"simulated-{s.key}",
            )
            for s in self.sections
            if s.differences
        ]
        return [self.machines, self.host, *differences, self.findings]

    def to_dict(self) -> dict[str, Any]:
        return {
            "a": self.a,
            "b": self.b,
            "summary": self.summary,
            "simulated": {
                s.key: {"status": s.status, "differences": [list(d) for d in s.differences], "total": s.total}
                for s in self.sections
            },
            "tables": [t.to_dict() for t in self.tables()],
        }

    def to_text(self) -> str:
        head = [f"A: {self.a}", f"B: {self.b}", "", *self.summary, ""]
        return "\n".join(head) + "\n" + "\n\n".join(t.to_text() for t in self.tables()) + "\n"

    def to_markdown(self) -> str:
        out = [f"# {TITLE}", "", f"- A: `{self.a}`", f"- B: `{self.b}`", ""]
        out += [f"{line}\n" for line in self.summary]
        out += [t.to_markdown() + "\n" for t in self.tables()]
        return "\n".join(out)

    def to_html(self) -> str:
        body = [
            f"<header><h1>{TITLE}</h1><p class='byline'>A: {html.escape(self.a)}<br>B: {html.escape(self.b)}</p></header>",
            '<section id="summary"><h2>Summary</h2><ul class="findings">',
            *(f"<li>{html.escape(line)}</li>" for line in self.summary),
            "</ul></section>",
        ]
        body += [t.to_html(anchor=t.key) for t in self.tables()]
        return page(TITLE, "".join(body))


def _side_by_side(rows_a: list[list[Any]], rows_b: list[list[Any]]) -> list[list[Any]]:
    a, b = {r[0]: quantity(r[1]) for r in rows_a}, {r[0]: quantity(r[1]) for r in rows_b}
    names = list(a) + [n for n in b if n not in a]
    return [[n, a.get(n, "missing"), b.get(n, "missing"), "same" if a.get(n) == b.get(n) else "differs"] for n in names]


def _machines(a: dict[str, Any], b: dict[str, Any]) -> Table:
    ma, mb = _dict(a.get("manifest")), _dict(b.get("manifest"))
    rows = _side_by_side(fact_rows(_dict(ma.get("machine"))), fact_rows(_dict(mb.get("machine"))))
    rows += _side_by_side(run_manifest.software_rows(ma), run_manifest.software_rows(mb))
    rows += _side_by_side(
        [r for r in run_manifest.run_rows(ma) if not str(r[0]).startswith("wall time")],
        [r for r in run_manifest.run_rows(mb) if not str(r[0]).startswith("wall time")],
    )
    differ = [i for i, r in enumerate(rows) if r[3] == "differs"]
    return Table(
        "The two machines and runs",
        ["", "A", "B", ""],
        rows,
        note=(
            f"{len(differ)} of {len(rows)} facts differ. What each run's manifest says (unknown where it could not be "
            "read or is missing)."
        ),
        key="machines",
        key_rows=sorted({0, *differ}),
    )


def _host(a: dict[str, Any], b: dict[str, Any]) -> tuple[Table, list[float]]:
    fa, fb = measured(a), measured(b)
    rows: list[list[Any]] = []
    ratios = []
    for name in list(fa) + [n for n in fb if n not in fa]:
        (x, unit), (y, _) = fa.get(name, (None, "")), fb.get(name, (None, ""))
        if name not in fa:
            unit = fb[name][1]
        r = y / x if x is not None and y is not None and x != 0 else None
        if r is not None:
            ratios.append(r)
        rows.append(
            [
                name,
                "missing" if x is None else quantity(x, unit),
                "missing" if y is None else quantity(y, unit),
                "-" if r is None else r,
            ]
        )
    apart = [i for i, r in enumerate(rows) if r[3] == "-" or not 1 / CLOSE <= r[3] <= CLOSE]
    table = Table(
        "Every measured figure, A beside B",
        ["figure", "A", "B", "B / A"],
        rows,
        note=(
            f"{len(apart)} of {len(rows)} figures differ by more than {percent(CLOSE - 1)} or are missing in one run "
            "(in view when the table is folded). Measured, not simulated: these depend on the machine and on what else "
            "ran. Times above 1x are slower in B; speedups and rates above 1x are better in B."
        ),
        key="host",
        units={"B / A": "x"},
        key_rows=apart or None,
    )
    return table, ratios


def _findings(a: dict[str, Any], b: dict[str, Any]) -> tuple[Table, int]:
    fa = {f.key: f for f in run_findings.compute(a)}
    fb = {f.key: f for f in run_findings.compute(b)}
    rows = []
    same = 0
    for key in list(fa) + [k for k in fb if k not in fa]:
        x, y = fa.get(key), fb.get(key)
        if x is not None and y is not None and x.text == y.text:
            same += 1
            continue
        either = x or y
        label = either.label if either is not None else key
        rows.append([label, x.text if x else "(not found)", y.text if y else "(not found)"])
    table = Table(
        "Findings that changed",
        ["finding", "A", "B"],
        rows,
        note=f"{same} findings read the same in both runs." if rows else f"All {same} findings read the same.",
        key="findings",
    )
    return table, same


def compare(a: Union[str, Path], b: Union[str, Path]) -> Comparison:
    """Compare two report folders (or results.json files)."""
    path_a, ra = load(a)
    path_b, rb = load(b)
    return side_by_side(ra, rb, str(path_a), str(path_b))


def side_by_side(ra: dict[str, Any], rb: dict[str, Any], a: str = "A", b: str = "B") -> Comparison:
    """Compare two results (as :func:`load` reads them); ``a`` and ``b`` name them."""
    host, ratios = _host(ra, rb)
    checks = [check_section(key, ra, rb) for key in SIMULATED]
    findings, unchanged = _findings(ra, rb)
    summary = []
    if ratios:
        summary.append(
            f"Measured figures: {number(len(ratios))} in both runs; B / A is {ratio(statistics.median(ratios))} at the "
            f"median, from {ratio(min(ratios))} to {ratio(max(ratios))}."
        )
    else:
        summary.append("Measured figures: none in both runs.")
    identical = [c.key for c in checks if c.identical]
    flagged = [f"{c.key} {c.status}" for c in checks if not c.identical]
    summary.append(
        "Simulated sections (same seeds must give the same numbers): "
        + (f"identical in {', '.join(identical)}" if identical else "none identical")
        + (f"; FLAGGED: {'; '.join(flagged)}." if flagged else ".")
    )
    summary.append(f"Findings: {len(findings.rows)} changed, {unchanged} the same.")
    return Comparison(a, b, _machines(ra, rb), host, checks, findings, unchanged, summary)


__all__ = [
    "Comparison",
    "NotResultsError",
    "SectionCheck",
    "check_section",
    "compare",
    "load",
    "measured",
    "side_by_side",
]
