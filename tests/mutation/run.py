"""Mutation testing: plant small bugs one at a time and count how many the tests catch.

``make mutants`` runs it (not part of ``make test`` or CI: hours on two cores). Both kinds of
run work on a copy of the tree under ``--out``, never on the checkout itself.

- ``run.py rust AREA...``: cargo-mutants over the core's modules (``cache``, ``sched``,
  ``radix``, ``mem``, ``serve``), one area at a time, one job, tested by ``cargo test -p
  osbench-core``: the core's own tests must catch a broken policy by themselves.
- ``run.py python``: mutmut over the reference engines and the trace readers, tested by the
  Python tests that exercise them (see ``PYTHON_TARGETS``).

Each run ends with its score, caught / (caught + missed), timeouts counted as caught and
mutants that do not build left out, and the list of survivors. The README's testing section
records the latest scores and why each survivor is accepted.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORE = "rust/osbench-core/src"
AREAS = ("cache", "sched", "radix", "mem", "serve")


def copy_tree(dest: Path) -> Path:
    """The checkout's files (tracked, and new ones not ignored) copied to ``dest/src``."""
    src = dest / "src"
    if src.exists():
        shutil.rmtree(src)
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        check=True,
        capture_output=True,
    ).stdout.split(b"\0")
    for name in filter(None, listed):
        path = ROOT / name.decode()
        if path.is_file():
            target = src / name.decode()
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target)
    return src


def expose_policy_modules(src: Path) -> None:
    """cargo-mutants finds source files by following ``mod`` items, and the cache's policy
    table declares its policy modules inside a macro, where it cannot see them. In the copy,
    the macro stops declaring them and ``policies/mod.rs`` declares each one plainly."""
    policy = src / CORE / "cache/policy.rs"
    line = "        $( pub mod $file; )*\n"
    text = policy.read_text()
    if line not in text:
        sys.exit(f"{policy}: the policy table no longer declares its modules as expected; update run.py")
    policy.write_text(text.replace(line, ""))
    table = src / CORE / "cache/policies/mod.rs"
    names = sorted(p.stem for p in table.parent.glob("*.rs") if p.stem != "mod")
    table.write_text(table.read_text() + "".join(f"pub mod {n};\n" for n in names))


def rust(areas: list[str], out: Path, iterate: bool) -> int:
    src = copy_tree(out)
    expose_policy_modules(src)
    failed = 0
    for area in areas:
        result = out / area
        cmd = ["cargo", "mutants", "--dir", str(src), "--package", "osbench-core", "--test-package", "osbench-core"]
        cmd += ["--file", f"{CORE}/{area}/**", "--jobs", "1", "--output", str(result), "--no-shuffle"]
        if iterate:
            cmd.append("--iterate")
        print("+", " ".join(cmd), flush=True)
        subprocess.run(cmd, check=False)
        failed += report_rust(area, result / "mutants.out")
    return failed


def report_rust(area: str, folder: Path) -> int:
    """Print the score of one cargo-mutants run from its ``outcomes.json``; 1 if it had none."""
    path = folder / "outcomes.json"
    if not path.exists():
        print(f"{area}: no outcomes in {folder}")
        return 1
    outcomes = json.loads(path.read_text())["outcomes"]
    by: dict[str, list[str]] = {}
    for o in outcomes:
        scenario = o["scenario"]
        if scenario == "Baseline":
            continue
        by.setdefault(o["summary"], []).append(scenario["Mutant"]["name"])
    caught = len(by.get("CaughtMutant", [])) + len(by.get("Timeout", []))
    missed = by.get("MissedMutant", [])
    viable = caught + len(missed)
    score = caught / viable if viable else 1.0
    print(
        f"{area}: {caught} of {viable} viable mutants caught ({score:.1%}); "
        f"{len(by.get('Timeout', []))} by a timeout, {len(by.get('Unviable', []))} do not build"
    )
    for name in missed:
        print(f"  missed: {name}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--out", type=Path, default=Path("/tmp/osbench-mutants"), help="where the copies and results go"
    )
    sub = parser.add_subparsers(dest="kind", required=True)
    r = sub.add_parser("rust", help="cargo-mutants over areas of the core")
    r.add_argument("areas", nargs="+", choices=AREAS)
    r.add_argument("--iterate", action="store_true", help="skip the mutants a previous run caught")
    r.add_argument("--report", action="store_true", help="only print the scores of the previous run")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    if args.kind == "rust":
        if args.report:
            return sum(report_rust(a, args.out / a / "mutants.out") for a in args.areas)
        return rust(args.areas, args.out, args.iterate)
    return 2


if __name__ == "__main__":
    sys.exit(main())
