"""osbench.datasets: the registry, the offline mirror, hash checks, and failing fast without
network. No test here needs the network: downloads go to addresses that refuse at once."""

from __future__ import annotations

import hashlib
import os
import re
import socket
import time
from pathlib import Path
from typing import Callable

import pytest

import osbench as ob
from osbench import datasets
from osbench.cli import main
from osbench.datasets import Dataset, DatasetError


@pytest.fixture
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No mirror and an empty cache of our own: nothing of the user's is read or written."""
    monkeypatch.delenv("OSBENCH_DATA_DIR", raising=False)
    monkeypatch.setenv("OSBENCH_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path


def _refusing_address() -> str:
    """An http address on this machine where nothing listens: connecting fails at once."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/trace.bin"


def _fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data: bytes = b"0123456789" * 100, url: str = "") -> Dataset:
    """A dataset of our own in the registry, whose content we know."""
    d = Dataset(
        "fake",
        "fake.bin",
        url or _refusing_address(),
        hashlib.sha256(data).hexdigest(),
        len(data),
        "CC0",
        "a test file",
        "binary",
    )
    monkeypatch.setitem(datasets.REGISTRY, "fake", d)
    return d


def test_registry_is_well_formed() -> None:
    assert datasets.NAMES == tuple(datasets.REGISTRY)
    traces = {"cloudphysics", "mooncake-conversation", "mooncake-synthetic", "azure-code-2023", "azure-conv-2023"}
    assert set(datasets.NAMES) == traces | {d.name for d in datasets.MEASURED}
    filenames = [d.filename for d in datasets.REGISTRY.values()]
    assert len(set(filenames)) == len(filenames)
    for name, d in datasets.REGISTRY.items():
        assert d.name == name
        assert re.fullmatch(r"[0-9a-f]{64}", d.sha256), name
        assert d.url.startswith("https://raw.githubusercontent.com/"), name
        assert d.size > 0 and d.licence and d.description
        if name in traces:
            assert d.format in ob.traces.FORMATS
            assert "/" not in d.filename
        else:  # a measured table: in its repository's folder at its upstream path (below the repository's
            # package root for AIConfigurator), at one commit of that repository
            commits = {
                "aiconfigurator": datasets.AIC_COMMIT,
                "vidur": datasets.VIDUR_COMMIT,
                "splitwise-sim": datasets.SPLITWISE_COMMIT,
            }
            folder, _, path = d.filename.partition("/")
            assert d.format in datasets.TABLE_FORMATS
            assert d.url.endswith(path), name
            assert f"/{commits[folder]}/" in d.url and d.filename.endswith(f".{d.format}"), name


def test_the_mirror_may_be_several_folders(isolated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = b"a table\n"
    first, second = isolated / "traces", isolated / "measured"
    (second / "sub").mkdir(parents=True)
    first.mkdir()
    (second / "sub" / "t.parquet").write_bytes(data)
    d = Dataset(
        "fake-table",
        "sub/t.parquet",
        _refusing_address(),
        hashlib.sha256(data).hexdigest(),
        len(data),
        "CC0",
        "a table",
        "parquet",
    )
    monkeypatch.setitem(datasets.REGISTRY, "fake-table", d)
    monkeypatch.setenv("OSBENCH_DATA_DIR", f"{first}{os.pathsep}{second}")
    assert datasets.data_dirs() == [first, second]
    assert datasets.fetch("fake-table") == second / "sub" / "t.parquet"


def test_the_mirror_is_used_without_network(isolated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mirror = isolated / "mirror"
    mirror.mkdir()
    d = _fake(isolated, monkeypatch)
    (mirror / d.filename).write_bytes(b"0123456789" * 100)
    monkeypatch.setenv("OSBENCH_DATA_DIR", str(mirror))
    # The address refuses connections: any download attempt would fail the test.
    assert datasets.fetch("fake") == mirror / d.filename
    assert datasets.local("fake") == mirror / d.filename
    status = {s.name: s for s in datasets.available()}["fake"]
    assert status.present and status.path == mirror / d.filename and status.licence == "CC0"
    assert datasets.resolve("fake") == str(mirror / d.filename)
    assert datasets.resolve("dataset:fake") == str(mirror / d.filename)
    assert not (isolated / "cache").exists()  # nothing downloaded, nothing written


def test_a_wrong_hash_is_refused(isolated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mirror = isolated / "mirror"
    mirror.mkdir()
    d = _fake(isolated, monkeypatch)
    (mirror / d.filename).write_bytes(b"0123456789" * 99 + b"012345678X")  # one byte changed
    monkeypatch.setenv("OSBENCH_DATA_DIR", str(mirror))
    with pytest.raises(DatasetError, match=r"'fake': .*fake.bin has sha256 [0-9a-f]{64}, expected") as err:
        datasets.fetch("fake")
    assert "not used" in str(err.value)
    assert not {s.name: s for s in datasets.available()}["fake"].present
    # The same check holds for a damaged copy in the cache.
    monkeypatch.delenv("OSBENCH_DATA_DIR")
    (isolated / "cache").mkdir()
    (isolated / "cache" / d.filename).write_bytes(b"garbage")
    with pytest.raises(DatasetError, match="has sha256"):
        datasets.local("fake")


def test_a_file_changed_after_it_was_verified_is_checked_again(isolated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mirror = isolated / "mirror"
    mirror.mkdir()
    d = _fake(isolated, monkeypatch)
    path = mirror / d.filename
    path.write_bytes(b"0123456789" * 100)
    monkeypatch.setenv("OSBENCH_DATA_DIR", str(mirror))
    assert datasets.fetch("fake") == path
    path.write_bytes(b"9123456789" * 100)  # same size, new content
    with pytest.raises(DatasetError, match="has sha256"):
        datasets.fetch("fake")


def test_no_network_fails_fast_with_a_clear_error(isolated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    d = _fake(isolated, monkeypatch)
    started = time.perf_counter()
    with pytest.raises(DatasetError) as err:
        datasets.fetch("fake")
    assert time.perf_counter() - started < 30  # bounded: connect refused at once; never a hang
    message = str(err.value)
    assert "'fake' is not available" in message and d.url in message and "OSBENCH_DATA_DIR" in message
    assert not (isolated / "cache" / d.filename).exists()  # nothing half-written is left behind
    path, reason = datasets.try_fetch("fake")
    assert path is None and "OSBENCH_DATA_DIR" in reason


def test_an_unknown_name_lists_the_names() -> None:
    with pytest.raises(ValueError, match=r"name='nope' is not accepted: use one of cloudphysics, "):
        datasets.fetch("nope")
    with pytest.raises(ValueError, match="name=3 is not accepted"):
        datasets.local(3)  # type: ignore[arg-type]


def test_resolve_keeps_paths_and_prefers_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "x.npy").write_bytes(b"")
    assert datasets.resolve(tmp_path / "x.npy") == str(tmp_path / "x.npy")
    with pytest.raises(FileNotFoundError, match=r"no such trace file: some/trace.bin \(not found, and not a dataset"):
        datasets.resolve("some/trace.bin")
    with pytest.raises(
        ob.errors.TraceFileError, match="a directory, not a file: a request log is read from a regular file"
    ):
        datasets.resolve(tmp_path, "request log")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "cloudphysics").write_bytes(b"")  # a file named like a dataset is that file
    assert datasets.resolve("cloudphysics") == "cloudphysics"


def test_readers_take_dataset_names(dataset: Callable[[str], Path]) -> None:
    path = dataset("cloudphysics")
    by_name = ob.traces.read("cloudphysics")
    assert len(by_name) == len(ob.traces.read(path)) == 113_872
    assert ob.cache.replay("dataset:cloudphysics", "lru", 1000).hits == ob.cache.replay(by_name, "lru", 1000).hits


def test_request_readers_take_dataset_names(dataset: Callable[[str], Path]) -> None:
    path = dataset("mooncake-conversation")
    by_name = ob.radix.mooncake("mooncake-conversation", limit=5)
    assert by_name.tokens.tolist() == ob.radix.mooncake(path, limit=5).tokens.tolist()


def test_cli_lists_and_verifies(
    isolated: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    mirror = isolated / "mirror"
    mirror.mkdir()
    d = _fake(isolated, monkeypatch)
    (mirror / d.filename).write_bytes(b"0123456789" * 100)
    monkeypatch.setenv("OSBENCH_DATA_DIR", str(mirror))
    assert main(["datasets"]) == 0
    out = capsys.readouterr().out
    assert "fake" in out and str(mirror / d.filename) in out and "cloudphysics" in out
    assert main(["datasets", "verify", "fake"]) == 0
    assert "verified" in capsys.readouterr().out
    (mirror / d.filename).write_bytes(b"damaged")
    assert main(["datasets", "verify", "fake"]) == 2
    assert "has sha256" in capsys.readouterr().err
    assert main(["datasets", "fetch", "nope"]) == 2
    assert "no dataset 'nope'" in capsys.readouterr().err


def test_cli_fetch_without_network_says_how(
    isolated: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _fake(isolated, monkeypatch)
    assert main(["datasets", "fetch", "fake"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("osbench: error: dataset 'fake' is not available") and "OSBENCH_DATA_DIR" in err
