"""``osbench report``: every section computed, then written as one folder, atomically."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Optional

from osbench import _files
from osbench.report.model import Progress, Section
from osbench.report.render import results_json, to_html, to_markdown
from osbench.report.sections import BUILDERS


def build(quick: bool = False, progress: Optional[Progress] = None, seed: int = 1) -> list[Section]:
    """Compute every section (no files)."""
    out = []
    for i, (key, builder) in enumerate(BUILDERS, 1):
        if progress:
            progress(f"[{i}/{len(BUILDERS)}] {key}")
        started = time.perf_counter()
        section = builder(quick=quick, seed=seed, progress=progress)
        section.results["seconds"] = round(time.perf_counter() - started, 3)
        out.append(section)
    return out


def write(sections: list[Section], out_dir: Path, quick: bool, seed: int) -> list[Path]:
    """Write the report folder; every file atomically. Returns the paths written."""
    out_dir = Path(out_dir)
    written = []
    for s in sections:
        for f in s.figures:
            path = out_dir / "figures" / f"{f.name}.png"
            _files.write_bytes(path, f.png)
            written.append(path)
    for name, text in (
        ("results.json", json.dumps(results_json(sections, quick, seed), indent=2, default=str) + "\n"),
        ("report.md", to_markdown(sections)),
        ("index.html", to_html(sections)),
    ):
        _files.write_text(out_dir / name, text)
        written.append(out_dir / name)
    return written


def run(out_dir: Path, quick: bool = False, seed: int = 1, progress: Optional[Progress] = None) -> list[Path]:
    """Compute every section, then write the folder."""
    return write(build(quick=quick, progress=progress, seed=seed), out_dir, quick, seed)
