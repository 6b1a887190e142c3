"""Mutation testing: plant small bugs one at a time and count how many the tests catch.

``make mutants`` runs it (not part of ``make test`` or CI: hours on two cores). Every run works
on its own copy of the tree under ``--out``, never on the checkout itself.

- ``run.py rust AREA...``: cargo-mutants over the core's modules (``cache``, ``sched``,
  ``radix``, ``mem``, ``serve``), one area at a time, one job, tested by ``cargo test -p
  osbench-core`` alone: the core's own tests must catch a broken policy by themselves.
  ``--shard 0/3`` tests a systematic sample (every third mutant); ``--rerun-missed`` runs the
  mutants the last run missed again, by name, against the tests as they are now.
- ``run.py python``: mutmut over the reference engines and the trace readers
  (``PYTHON_TARGETS``), tested by the Python tests that exercise them (``PYTHON_TESTS``).
- ``run.py audit``: the bugs an earlier audit planted by hand that the tests then missed
  (``AUDIT``), each planted alone and run against the tests that must catch it.

Scores are caught / (caught + missed): timeouts count as caught, mutants that do not build are
left out, and so are those ``.cargo/mutants.toml`` excludes as equivalent (each with its reason). The README's testing section records the latest scores and why each survivor is
accepted.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[2]
CORE = "rust/osbench-core/src"
AREAS = ("cache", "sched", "radix", "mem", "serve")
NATIVE = "python/osbench/_native.abi3.so"

PYTHON_TARGETS = [
    "osbench/cache/reference",
    "osbench/cache/_parts.py",
    "osbench/sched/reference.py",
    "osbench/radix/reference.py",
    "osbench/traces/formats",
]
"""What mutmut mutates, under ``python/``: the reference engines and the trace readers."""

PYTHON_TESTS = ["tests/cache", "tests/sched", "tests/radix", "tests/traces"]
"""The tests mutmut runs against them (each mutant: only those that reach the mutated function)."""


def copy_tree(dest: Path) -> Path:
    """The checkout's files (tracked, and new ones not ignored) copied to ``dest``, with the
    built native module beside the Python sources."""
    if dest.exists():
        shutil.rmtree(dest)
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        check=True,
        capture_output=True,
    ).stdout.split(b"\0")
    for name in [*(n.decode() for n in listed if n), NATIVE]:
        path = ROOT / name
        if path.is_file():
            target = dest / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target)
    return dest


def edit(path: Path, *edits: tuple[str, str]) -> None:
    """Replace each ``old`` by its ``new`` in ``path``, all at once; each ``old`` must occur
    exactly once in the file as it is."""
    text = path.read_text()
    for i, (old, _) in enumerate(edits):
        if text.count(old) != 1:
            sys.exit(f"{path}: expected exactly one {old!r}; the code changed, update tests/mutation/run.py")
        text = text.replace(old, f"\0{i}\0")
    for i, (_, new) in enumerate(edits):
        text = text.replace(f"\0{i}\0", new)
    path.write_text(text)


# ------------------------------------------------------------------ cargo-mutants


def expose_policy_modules(src: Path) -> None:
    """cargo-mutants finds source files by following ``mod`` items, and the cache's policy
    table declares its policy modules inside a macro, where it cannot see them. In the copy,
    the macro stops declaring them and ``policies/mod.rs`` declares each one plainly."""
    edit(src / CORE / "cache/policy.rs", ("        $( pub mod $file; )*\n", ""))
    table = src / CORE / "cache/policies/mod.rs"
    names = sorted(p.stem for p in table.parent.glob("*.rs") if p.stem != "mod")
    table.write_text(table.read_text() + "".join(f"pub mod {n};\n" for n in names))


def rust(areas: list[str], out: Path, iterate: bool, shard: str | None, timeout: int, rerun: bool) -> int:
    src = copy_tree(out / "rust-src")
    expose_policy_modules(src)
    failed = 0
    for area in areas:
        result = out / area
        cmd = ["cargo", "mutants", "--dir", str(src), "--package", "osbench-core", "--test-package", "osbench-core"]
        cmd += ["--file", f"{CORE}/{area}/**", "--jobs", "1", "--no-shuffle", "--timeout", str(timeout)]
        if rerun:
            # The mutants the last run missed, by name, against the tests as they are now.
            missed = outcomes(result / "mutants.out").get("MissedMutant", [])
            if not missed:
                continue
            cmd += [arg for name in missed for arg in ("--re", f"^{re.escape(name)}$")]
            cmd += ["--output", str(out / f"{area}-rerun")]
        else:
            cmd += ["--output", str(result)]
        if shard and not rerun:
            cmd += ["--shard", shard, "--sharding", "round-robin"]
        if iterate:
            cmd.append("--iterate")
        print("+", " ".join(cmd), flush=True)
        subprocess.run(cmd, check=False)
        failed += report_rust(area, out)
    return failed


def outcomes(folder: Path) -> dict[str, list[str]]:
    """The mutants of one cargo-mutants run (its ``outcomes.json``) by outcome, e.g. ``CaughtMutant``."""
    path = folder / "outcomes.json"
    by: dict[str, list[str]] = {}
    if path.exists():
        for o in json.loads(path.read_text())["outcomes"]:
            if o["scenario"] != "Baseline":
                by.setdefault(o["summary"], []).append(o["scenario"]["Mutant"]["name"])
    return by


def report_rust(area: str, out: Path) -> int:
    """Print the score of an area's run, with the outcomes of its rerun (``--rerun-missed``) in
    place of the first ones, leaving out the mutants ``.cargo/mutants.toml`` now excludes as
    equivalent; 1 if the area has no outcomes."""
    first = outcomes(out / area / "mutants.out")
    if not first:
        print(f"{area}: no outcomes in {out / area}")
        return 1
    final = {name: kind for kind, names in first.items() for name in names}
    final.update(
        {name: kind for kind, names in outcomes(out / f"{area}-rerun" / "mutants.out").items() for name in names}
    )
    excluded = tomllib.loads((ROOT / ".cargo/mutants.toml").read_text()).get("exclude_re", [])
    final = {n: k for n, k in final.items() if not any(re.search(x, n) for x in excluded)}
    pick = (
        sorted(n for n, k in final.items() if k == "Timeout"),
        sorted(n for n, k in final.items() if k == "MissedMutant"),
    )
    return report(area, sum(k == "CaughtMutant" for k in final.values()), *pick)


def report(what: str, caught: int, timeouts: list[str], missed: list[str]) -> int:
    viable = caught + len(timeouts) + len(missed)
    score = (caught + len(timeouts)) / viable if viable else 1.0
    print(
        f"{what}: {caught + len(timeouts)} of {viable} viable mutants caught ({score:.1%}), {len(timeouts)} by a timeout"
    )
    for name in missed:
        print(f"  missed: {name}")
    return 0


# ------------------------------------------------------------------ mutmut


def python(out: Path) -> int:
    """mutmut in a copy laid out as it expects (the package under ``src/``)."""
    tree = copy_tree(out / "python-src")
    (tree / "python").rename(tree / "src")
    config = {
        "source_paths": [f"src/{t}" for t in PYTHON_TARGETS],
        "also_copy": ["src/osbench", "rust", "Makefile", "docs", "README.md", "benches"],
        "pytest_add_cli_args_test_selection": PYTHON_TESTS,
        "pytest_add_cli_args": ["-p", "no:cacheprovider", "--benchmark-disable", "--hypothesis-seed=0", "-x"],
        "max_children": 1,
    }
    with (tree / "pyproject.toml").open("a") as f:
        f.write("\n[tool.mutmut]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in config.items()))
    subprocess.run([sys.executable, "-m", "mutmut", "run", "--max-children", "1"], cwd=tree, check=False)
    return report_python(tree)


def report_python(tree: Path) -> int:
    shown = subprocess.run(
        [sys.executable, "-m", "mutmut", "results", "--all", "true"], cwd=tree, capture_output=True, text=True
    ).stdout
    caught, timeouts, missed = 0, [], []
    for line in shown.splitlines():
        name, _, status = line.strip().rpartition(": ")
        if status == "killed":
            caught += 1
        elif status == "timeout":
            timeouts.append(name)
        elif status in ("survived", "no tests"):
            missed.append(f"{name} ({status})")
    return report("python", caught, timeouts, missed)


# ------------------------------------------------------------------ the audit's bugs


@dataclass(frozen=True)
class Planted:
    """A bug planted by hand (each ``old`` replaced by its ``new`` in ``path``) and the test
    commands that must each catch it."""

    name: str
    path: str
    edits: tuple[tuple[str, str], ...]
    tests: tuple[tuple[str, ...], ...]


PYTEST = (sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "--benchmark-disable")
CARGO = ("cargo", "test", "-p", "osbench-core", "-q")
"""The core's own tests: a native bug must fail them with no Python involved."""
EQUIVALENCE = (
    *PYTEST,
    "--hypothesis-seed=0",
    "tests/cache/test_equivalence.py::test_native_equals_reference_hit_for_hit",
)
"""The main native-vs-reference test, which the audit found rarely evicting."""

AUDIT = [
    Planted(
        "ARC adapts p the wrong way on ghost hits (native)",
        f"{CORE}/cache/policies/arc.rs",
        (
            ("self.p = (self.p + delta).min(c as f64);", "self.p = (self.p - delta).max(0.0);"),
            ("self.p = (self.p - delta).max(0.0);", "self.p = (self.p + delta).min(c as f64);"),
        ),
        (CARGO, EQUIVALENCE),
    ),
    Planted(
        "CLOCK's hand does not advance past a referenced object (native)",
        f"{CORE}/cache/policies/clock.rs",
        (("self.circle.push_back(candidate);", "self.circle.push_front(candidate);"),),
        (CARGO, EQUIVALENCE),
    ),
    Planted(
        "S3-FIFO ignores a ghost hit (native)",
        f"{CORE}/cache/policies/s3fifo.rs",
        (("                    ghost_hit = true;\n", "                    ghost_hit = false;\n"),),
        (CARGO, EQUIVALENCE),
    ),
    Planted(
        "ARC's ghost-hit delta ratio inverted (reference)",
        "python/osbench/cache/reference/arc.py",
        (
            (
                "delta = 1.0 if len(self.b1) >= len(self.b2) else len(self.b2) / len(self.b1)",
                "delta = 1.0 if len(self.b1) >= len(self.b2) else len(self.b1) / len(self.b2)",
            ),
        ),
        (EQUIVALENCE,),
    ),
    # The bugs #29 planted that the tests then missed.
    Planted(
        "A text trace's column one past the last is read (reader)",
        "python/osbench/traces/formats/text.py",
        (("        if len(fields) < need:\n", "        if len(fields) < need - 1:\n"),),
        ((*PYTEST, "tests/fuzz/test_boundaries.py"),),
    ),
    Planted(
        "A struct field one past the last is taken (reader)",
        "python/osbench/traces/formats/binary.py",
        (("not 0 <= index < len(dtype.names)", "not 0 <= index <= len(dtype.names)"),),
        ((*PYTEST, "tests/fuzz/test_boundaries.py"),),
    ),
    Planted(
        "The roofline's attention always bound by memory (native)",
        f"{CORE}/serve/step_time.rs",
        (
            (
                "let attention = py_max(attention_flops / peak_flops, kv_bytes / bandwidth);",
                "let attention = kv_bytes / bandwidth + 0.0 * attention_flops;",
            ),
        ),
        (CARGO,),
    ),
    Planted(
        "SIEVE's hand wraps to the front (native)",
        f"{CORE}/cache/policies/sieve.rs",
        (
            (
                "slot = if newer == NIL { self.queue.tail } else { newer };",
                "slot = if newer == NIL { self.queue.head } else { newer };",
            ),
        ),
        (CARGO,),
    ),
    Planted(
        "CSV header told by column 0 whatever the key column (reader)",
        "python/osbench/traces/formats/text.py",
        (("k = key_column if isinstance(key_column, int) and 0 <= key_column < len(names) else 0", "k = 0"),),
        ((*PYTEST, "tests/traces"),),
    ),
]


def build_native(tree: Path, env: dict[str, str]) -> None:
    """Build the copy's extension (a debug build: quicker, and the tests only need results) and
    put it beside the copy's Python sources."""
    wheels = tree / "wheels"
    maturin = Path(sys.executable).with_name("maturin")
    subprocess.run([str(maturin), "build", "-q", "-o", str(wheels)], cwd=tree, env=env, check=True)
    (wheel,) = wheels.glob("*.whl")
    with zipfile.ZipFile(wheel) as z:
        (so,) = [n for n in z.namelist() if n.startswith("osbench/_native")]
        (tree / NATIVE).write_bytes(z.read(so))


def audit(out: Path, only: str = "") -> int:
    """Plant each bug of ``AUDIT`` (those whose name contains ``only``) alone in a fresh copy
    and run its tests: each must fail."""
    missed = []
    bugs = [b for b in AUDIT if only in b.name]
    for bug in bugs:
        tree = copy_tree(out / "audit-src")
        edit(tree / bug.path, *bug.edits)
        env = dict(os.environ, PYTHONPATH=str(tree / "python"), CARGO_TARGET_DIR=str(out / "audit-target"))
        if bug.path.endswith(".rs") and any(cmd[0] == sys.executable for cmd in bug.tests):
            build_native(tree, env)
        for cmd in bug.tests:
            caught = subprocess.run(cmd, cwd=tree, env=env, capture_output=True).returncode != 0
            what = f"{bug.name}, by {'cargo test' if cmd[0] == 'cargo' else cmd[-1]}"
            print(f"{'caught' if caught else 'MISSED'}: {what}", flush=True)
            if not caught:
                missed.append(what)
    return report("audit", sum(len(b.tests) for b in bugs) - len(missed), [], missed) or len(missed)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=Path("/tmp/osbench-mutants"), help="where copies and results go")
    sub = parser.add_subparsers(dest="kind", required=True)
    r = sub.add_parser("rust", help="cargo-mutants over areas of the core")
    r.add_argument("areas", nargs="+", choices=AREAS)
    r.add_argument("--iterate", action="store_true", help="skip the mutants a previous run caught")
    r.add_argument("--report", action="store_true", help="only print the scores of the previous run")
    r.add_argument(
        "--shard",
        help="a systematic sample: K/N runs every N-th mutant from the K-th (0-based), as cargo-mutants counts",
    )
    r.add_argument("--rerun-missed", action="store_true", help="run again the mutants the last run missed")
    r.add_argument("--timeout", type=int, default=20, help="seconds a mutant's tests may take (the suite takes ~1 s)")
    p = sub.add_parser("python", help="mutmut over the reference engines and the trace readers")
    p.add_argument("--report", action="store_true", help="only print the score of the previous run")
    a = sub.add_parser("audit", help="the bugs the audit planted by hand")
    a.add_argument("--only", default="", help="only the bugs whose name contains this, e.g. '(native)'")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    if args.kind == "rust":
        if args.report:
            return sum(report_rust(a, args.out) for a in args.areas)
        return rust(args.areas, args.out, args.iterate, args.shard, args.timeout, args.rerun_missed)
    if args.kind == "python":
        return report_python(args.out / "python-src") if args.report else python(args.out)
    return audit(args.out, args.only)


if __name__ == "__main__":
    sys.exit(main())
