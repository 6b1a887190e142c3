"""``osbench report``: every section computed, then written as one folder, atomically."""

from __future__ import annotations

import datetime
import json
import time
from pathlib import Path
from typing import Any, Optional

from osbench import _files
from osbench.report import findings as run_findings
from osbench.report import manifest as run_manifest
from osbench.report.compare import Comparison
from osbench.report.model import Progress, Section
from osbench.report.render import results_json, to_html, to_markdown
from osbench.report.sections import BUILDERS


def build(quick: bool = False, progress: Optional[Progress] = None, seed: int = 1) -> list[Section]:
    """Compute every section (no files); each records its wall time in ``results["seconds"]``."""
    out = []
    for i, (key, builder) in enumerate(BUILDERS, 1):
        if progress:
            progress(f"[{i}/{len(BUILDERS)}] {key}")
        started = time.perf_counter()
        section = builder(quick=quick, seed=seed, progress=progress)
        section.results["seconds"] = round(time.perf_counter() - started, 3)
        out.append(section)
    return out


def results(sections: list[Section], quick: bool, seed: int, started: datetime.datetime) -> dict[str, Any]:
    """The results.json of computed sections: the manifest, the findings, every section. The
    findings are computed from the JSON itself (as a saved results.json would give them)."""
    manifest = run_manifest.collect(sections, quick, seed, started)
    data: dict[str, Any] = json.loads(json.dumps(results_json(sections, [], manifest), default=str))
    data["findings"] = [f.to_dict() for f in run_findings.compute(data)]
    return data


def write(
    sections: list[Section], out_dir: Path, quick: bool, seed: int, started: Optional[datetime.datetime] = None
) -> list[Path]:
    """Write the report folder; every file atomically. Returns the paths written."""
    out_dir = Path(out_dir)
    data = results(sections, quick, seed, started or datetime.datetime.now().astimezone())
    found = [run_findings.Finding(**f) for f in data["findings"]]
    written = []
    for s in sections:
        for f in s.figures:
            path = out_dir / "figures" / f"{f.name}.png"
            _files.write_bytes(path, f.png)
            written.append(path)
    for name, text in (
        ("results.json", json.dumps(data, indent=2) + "\n"),
        ("report.md", to_markdown(sections, found, data["manifest"])),
        ("index.html", to_html(sections, found, data["manifest"])),
    ):
        _files.write_text(out_dir / name, text)
        written.append(out_dir / name)
    return written


def run(out_dir: Path, quick: bool = False, seed: int = 1, progress: Optional[Progress] = None) -> list[Path]:
    """Compute every section, then write the folder."""
    started = datetime.datetime.now().astimezone()
    return write(build(quick=quick, progress=progress, seed=seed), out_dir, quick, seed, started)


def write_comparison(comparison: Comparison, out_dir: Path) -> list[Path]:
    """Write a comparison folder: ``index.html``, ``compare.md`` and ``compare.json``, atomically."""
    out_dir = Path(out_dir)
    written = []
    for name, text in (
        ("compare.json", json.dumps(comparison.to_dict(), indent=2) + "\n"),
        ("compare.md", comparison.to_markdown()),
        ("index.html", comparison.to_html()),
    ):
        _files.write_text(out_dir / name, text)
        written.append(out_dir / name)
    return written
