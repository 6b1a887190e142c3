"""The run manifest: what ran, where, with what, and for how long.

Machine, OS, CPU and memory facts, Python and package versions, osbench's version and build
profile, the seeds, the wall time of each section, and the datasets used with their checksums.
:func:`collect` makes it (a plain dict, stored in results.json); :func:`tables` shows it, from
that dict alone, so a saved results.json shows the same.
"""

from __future__ import annotations

import datetime
import os
from importlib import metadata
from typing import Any, Optional

from osbench import _native
from osbench._format import UNKNOWN, duration, quantity
from osbench._table import Table
from osbench.host.info import info as host_info
from osbench.host.tables import fact_rows
from osbench.report.model import Section

PACKAGES = ("numpy", "matplotlib", "psutil", "pooch", "zstandard")
"""The packages whose versions a run records (what the numbers may depend on)."""


def _version(package: str) -> Optional[str]:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def collect(sections: list[Section], quick: bool, seed: int, started: datetime.datetime) -> dict[str, Any]:
    """The manifest of a run whose sections are computed (each has ``results["seconds"]``)."""
    seeds = {f"{s.key}/{t.key or t.title}": t.seed for s in sections for t in s.tables if t.seed is not None}
    datasets: dict[str, dict[str, Any]] = {}
    for s in sections:
        for name, sha256 in s.results.get("datasets", {}).items():
            datasets.setdefault(name, {"sha256": sha256, "sections": []})["sections"].append(s.key)
    return {
        "osbench": {"version": _native.__version__, "build_profile": _native.BUILD_PROFILE},
        "run": {
            "started": started.isoformat(timespec="seconds"),
            "quick": quick,
            "seed": seed,
            "seconds": round(sum(s.results.get("seconds", 0.0) for s in sections), 3),
            # What else the machine ran: measured figures taken under load are noisier.
            "load_average": _load_average(),
        },
        "machine": host_info().to_dict(),
        "packages": {p: _version(p) for p in PACKAGES},
        "seeds": {"report": seed, "tables": seeds},
        "sections": {s.key: {"title": s.title, "seconds": s.results.get("seconds")} for s in sections},
        "datasets": datasets,
    }


def _load_average() -> Optional[list[float]]:
    """The 1, 5 and 15-minute load averages at the end of the run (None where the OS has none)."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except (AttributeError, OSError):
        return None


def _get(d: Any, *path: str) -> Any:
    """``d[path[0]][path[1]]...``, or None where the manifest lacks it."""
    for key in path:
        if not isinstance(d, dict):
            return None
        d = d.get(key)
    return d


def _list(v: Any) -> list[Any]:
    return v if isinstance(v, list) else []


def _dict(v: Any) -> dict[str, Any]:
    """``v``, or an empty dict where a damaged manifest holds something else."""
    return v if isinstance(v, dict) else {}


def software_rows(m: dict[str, Any]) -> list[list[Any]]:
    version = f"{_get(m, 'osbench', 'version') or UNKNOWN}, {_get(m, 'osbench', 'build_profile') or UNKNOWN} build"
    rows: list[list[Any]] = [["osbench", version]]
    rows += [[name, version or "not installed"] for name, version in _dict(_get(m, "packages")).items()]
    return rows


def run_rows(m: dict[str, Any]) -> list[list[Any]]:
    run = _dict(_get(m, "run"))
    rows: list[list[Any]] = [
        ["started", run.get("started") or UNKNOWN],
        ["scale", "quick" if run.get("quick") else "full"],
        ["seed (--seed)", quantity(run.get("seed"))],
        ["wall time, all sections", duration(run.get("seconds"))],
        [
            "load average at the end (1, 5, 15 min)",
            " / ".join(quantity(x) for x in _list(run.get("load_average"))) or UNKNOWN,
        ],
    ]
    for key, s in _dict(_get(m, "sections")).items():
        rows.append([f"wall time: {_dict(s).get('title') or key}", duration(_dict(s).get("seconds"))])
    return rows


def tables(m: dict[str, Any]) -> list[Table]:
    """The manifest as tables (machine, software, the run, seeds, datasets)."""
    seeds = _dict(_get(m, "seeds", "tables"))
    datasets = _dict(_get(m, "datasets"))
    out = [
        Table("Machine", ["fact", "value"], fact_rows(_dict(_get(m, "machine"))), key="machine"),
        Table("Software", ["package", "version"], software_rows(m), key="software"),
        Table("Run", ["", "value"], run_rows(m), key="run"),
        Table(
            "Seeds",
            ["table", "seed"],
            [[name, seed] for name, seed in seeds.items()],
            note="Every random workload is drawn from its seed: the same seeds give the same numbers on any machine.",
            key="seeds",
        ),
    ]
    out.append(
        Table(
            "Datasets",
            ["dataset", "SHA-256", "used by"],
            [
                [n, _dict(d).get("sha256"), ", ".join(map(str, _list(_dict(d).get("sections"))))]
                for n, d in datasets.items()
            ],
            note="" if datasets else "This run used no dataset.",
            key="datasets",
        )
    )
    return out


__all__ = ["PACKAGES", "collect", "tables"]
