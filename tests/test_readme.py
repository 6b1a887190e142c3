"""Every command in the README runs, so the README cannot rot.

Fenced ``sh`` blocks: each ``osbench ...`` line runs (as ``python -m osbench``) from the
checkout's root and must exit 0; ``make`` lines are what CI itself runs (``make test``) or what
the report test covers at small scale (``make report`` is ``osbench report``), so they are
checked to be Makefile targets. Fenced ``python`` blocks run as scripts and must not fail.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Callable

import pytest

import osbench as ob

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
BLOCKS = re.findall(r"```(sh|python)\n(.*?)```", README, flags=re.S)


def shell_lines() -> list[str]:
    lines = []
    for lang, body in BLOCKS:
        if lang == "sh":
            for line in body.splitlines():
                line = line.split("  #")[0].strip()
                if line and not line.startswith("#"):
                    lines.append(line)
    return lines


def test_readme_has_the_two_commands_first() -> None:
    first = shell_lines()[:2]
    assert [line.split()[:2] for line in first] == [["make", "report"], ["make", "test"]]


@pytest.mark.parametrize("line", [s for s in shell_lines() if s.startswith("make ")])
def test_make_lines_are_targets(line: str) -> None:
    target = line.split()[1]
    assert re.search(rf"^{re.escape(target)}:", (ROOT / "Makefile").read_text(), flags=re.M), target


def needed_datasets(text: str) -> list[str]:
    """The datasets a README line or block reads: the names it mentions, in its own words or in
    a file of the repository it names (a sweep spec); ``datasets fetch all`` needs them all."""
    if re.search(r"\bdatasets (fetch|verify) all\b", text):
        return list(ob.datasets.NAMES)
    words = set(re.findall(r"[\w.:/-]+", text))
    for w in list(words):
        if (ROOT / w).is_file():
            words |= set(re.findall(r"[\w.:-]+", (ROOT / w).read_text(encoding="utf-8", errors="replace")))
    return [n for n in ob.datasets.NAMES if n in words or f"dataset:{n}" in words]


def test_every_dataset_the_readme_uses_is_found() -> None:
    """The rule above sees the datasets of the README's real-trace examples."""
    assert {"cloudphysics", "mooncake-conversation"} <= {n for b in BLOCKS for n in needed_datasets(b[1])}


@pytest.mark.parametrize("line", [s for s in shell_lines() if s.startswith("osbench ")])
def test_osbench_lines_run(line: str, tmp_path: Path, dataset: Callable[[str], Path]) -> None:
    args = shlex.split(line)[1:]
    for name in needed_datasets(line):
        dataset(name)  # skips, saying why, when the dataset cannot be had
    # outputs go to a temporary folder, not the checkout
    args = [str(tmp_path / Path(a).name) if i and args[i - 1] == "--out" else a for i, a in enumerate(args)]
    out = subprocess.run(
        [sys.executable, "-m", "osbench", *args], cwd=ROOT, capture_output=True, text=True, timeout=900
    )
    assert out.returncode == 0, out.stderr


@pytest.mark.parametrize("index", [i for i, (lang, _) in enumerate(BLOCKS) if lang == "python"])
def test_python_blocks_run(index: int, tmp_path: Path, dataset: Callable[[str], Path]) -> None:
    code = BLOCKS[index][1]
    for name in needed_datasets(code):
        dataset(name)
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
