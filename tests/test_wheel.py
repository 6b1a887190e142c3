"""The wheel: one abi3 wheel that installs into a fresh virtual environment and works."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

SMOKE = """
import osbench as ob
assert ob.BUILD_PROFILE == "release", ob.BUILD_PROFILE
seq = ob.traces.belady_sequence()
assert [ob.cache.replay(seq, "fifo", c).misses for c in (3, 4)] == [9, 10]
assert ob.cache.replay(seq, "opt", 3).misses == 7
print("smoke ok", ob.__version__)
"""


@pytest.mark.wheel
def test_wheel_installs_in_a_fresh_venv(tmp_path: Path) -> None:
    maturin = shutil.which("maturin", path=os.path.dirname(sys.executable)) or shutil.which("maturin")
    if maturin is None:
        pytest.skip("maturin is not installed")
    dist = tmp_path / "dist"
    env = dict(os.environ, CARGO_TARGET_DIR=os.environ.get("CARGO_TARGET_DIR", str(ROOT / "target")))
    subprocess.run([maturin, "build", "--release", "-q", "-o", str(dist)], cwd=ROOT, env=env, check=True)
    wheels = list(dist.glob("*.whl"))
    assert len(wheels) == 1, wheels
    assert "-cp39-abi3-" in wheels[0].name, wheels[0].name  # one wheel for every CPython from 3.9 on

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    py = venv / "bin" / "python"
    subprocess.run([str(py), "-m", "pip", "install", "-q", str(wheels[0])], check=True)
    # Run from an empty folder so the checkout's python/ cannot be imported by accident.
    out = subprocess.run([str(py), "-c", SMOKE], cwd=tmp_path, check=True, capture_output=True, text=True)
    assert "smoke ok" in out.stdout
    where = subprocess.run(
        [str(py), "-c", "import osbench; print(osbench.__file__)"],
        cwd=tmp_path,
        check=True,
        capture_output=True,
        text=True,
    )
    assert str(venv) in where.stdout
    # The main job from a plain install, no extras: the report folder, figures and all.
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    report = subprocess.run(
        [str(venv / "bin" / "osbench"), "report", "--quick", "--out", "rq"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert report.returncode == 0, report.stderr
    assert (tmp_path / "rq" / "index.html").stat().st_size > 0 and list((tmp_path / "rq" / "figures").glob("*.png"))
    # An optional package missing (zstandard: the zstd extra): one line naming the extra, exit 2.
    (tmp_path / "t.zst").write_bytes(bytes.fromhex("28b52ffd") + bytes(16))
    zstd = subprocess.run(
        [str(venv / "bin" / "osbench"), "cache", "replay", "--trace", "t.zst", "--format", "oracleGeneral"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert zstd.returncode == 2 and zstd.stderr.count("\n") == 1, zstd.stderr
    assert "pip install 'osbench[zstd]'" in zstd.stderr


@pytest.mark.wheel
def test_pip_builds_the_same_abi3_wheel(tmp_path: Path) -> None:
    """`pip install .` goes through the same maturin backend (pyproject.toml)."""
    env = dict(os.environ, CARGO_TARGET_DIR=os.environ.get("CARGO_TARGET_DIR", str(ROOT / "target")))
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp_path), str(ROOT)], env=env, check=True
    )
    wheels = list(tmp_path.glob("osbench-*.whl"))
    assert len(wheels) == 1 and "-cp39-abi3-" in wheels[0].name, wheels
