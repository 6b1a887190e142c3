"""The public traces osbench uses, fetched once and checked by their SHA-256.

Each dataset is an upstream file (a raw-file address on GitHub) with its hash, size, licence
and a one-line description; :func:`fetch` downloads it once into the user cache (with
``pooch``, into ``pooch.os_cache("osbench")`` or ``$OSBENCH_CACHE_DIR``), checks the hash, and
returns the local path. ``$OSBENCH_DATA_DIR`` names a folder that already holds the files (an
offline mirror): a file found there with the right hash is used without any download, and one
with the wrong hash is refused. Without network and without a local copy, :func:`fetch` fails
within seconds with an error that names the dataset, its address and ``OSBENCH_DATA_DIR``.

>>> import osbench as ob
>>> [d.name for d in ob.datasets.REGISTRY.values()][:2]
['cloudphysics', 'mooncake-conversation']

Functions that read a trace take a dataset name wherever they take a path:
``ob.traces.read("cloudphysics")``, ``ob.cache.replay("cloudphysics", "lru", 1000)``,
``ob.radix.mooncake("mooncake-conversation")``, ``osbench cache curve --trace cloudphysics``. A
name is read as a dataset unless a file of that name exists; ``"dataset:NAME"`` is always the
dataset.
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional, Union

from osbench.errors import ArgumentError, OsbenchError, TraceFileError


@dataclass(frozen=True)
class Dataset:
    """One public trace file: where it comes from, its hash, and what it holds."""

    name: str
    filename: str
    """The local file name (in the cache and in an ``OSBENCH_DATA_DIR`` mirror)."""
    url: str
    sha256: str
    size: int
    """Bytes."""
    licence: str
    description: str
    format: str
    """Its format for :func:`osbench.traces.read`."""


def _github(repo: str, branch: str, path: str) -> str:
    return f"https://raw.githubusercontent.com/{repo}/{branch}/{path}"


REGISTRY: dict[str, Dataset] = {
    d.name: d
    for d in (
        Dataset(
            "cloudphysics",
            "cloudphysics-io.oracleGeneral.bin",
            _github("1a1a11a/libCacheSim", "develop", "data/cloudphyicsIO.oracleGeneral.bin"),
            "65438dd7b2d3dec7ffe8a5c9348045da92de3311f339b7b59c9a0a44e6050dea",
            2_732_928,
            "GPL-3.0 (libCacheSim's repository)",
            "block I/O trace of one VM (CloudPhysics): 113,872 requests, 48,974 objects, with sizes",
            "oracleGeneral",
        ),
        Dataset(
            "mooncake-conversation",
            "mooncake-conversation.jsonl",
            _github("kvcache-ai/Mooncake", "main", "FAST25-release/traces/conversation_trace.jsonl"),
            "b8cbb061a85206d729d91cdc2981f43c9e0d99209dce588d3af5f7934408b9df",
            3_029_533,
            "Apache-2.0",
            "one hour of a production LLM service's conversation requests, with prompt block hashes",
            "mooncake",
        ),
        Dataset(
            "mooncake-synthetic",
            "mooncake-synthetic.jsonl",
            _github("kvcache-ai/Mooncake", "main", "FAST25-release/traces/synthetic_trace.jsonl"),
            "bd070915a98fc0ed264d7cfef2ce746002eb3076a695ec31ba2674c0111ec131",
            1_136_313,
            "Apache-2.0",
            "synthetic multi-turn requests built from public datasets, Poisson arrivals, with block hashes",
            "mooncake",
        ),
        Dataset(
            "azure-code-2023",
            "azure-llm-2023-code.csv",
            _github("Azure/AzurePublicDataset", "master", "data/AzureLLMInferenceTrace_code.csv"),
            "54e9a6d2a4bd06ba1e060304b900abbc74cbea53de96506e60fe5bb4f2277fb6",
            320_117,
            "CC-BY-4.0",
            "one hour of Azure LLM inference requests, coding service: arrival, prompt and output tokens",
            "azure",
        ),
        Dataset(
            "azure-conv-2023",
            "azure-llm-2023-conv.csv",
            _github("Azure/AzurePublicDataset", "master", "data/AzureLLMInferenceTrace_conv.csv"),
            "2f1e5b666d4e3055fdbba98598ce2ec307767b9064e03e2fa46676dbcc7d0bf8",
            719_188,
            "CC-BY-4.0",
            "one hour of Azure LLM inference requests, conversation service: arrival, prompt and output tokens",
            "azure",
        ),
    )
}
"""Every dataset, by name."""

NAMES: tuple[str, ...] = tuple(REGISTRY)
"""The dataset names, in the order :func:`available` lists them."""

TIMEOUT = (5.0, 30.0)
"""Seconds to connect, and to wait for the next bytes, before a download gives up."""

PREFIX = "dataset:"
"""``"dataset:NAME"`` names a dataset wherever a trace path is taken."""


class DatasetError(OsbenchError, OSError):
    """A dataset cannot be had: no network and no local copy, or a copy with the wrong hash."""


@dataclass(frozen=True)
class Status:
    """One line of :func:`available`: a dataset and whether a verified local copy exists."""

    name: str
    description: str
    licence: str
    size: int
    url: str
    present: bool
    path: Optional[Path]
    """The verified local copy, or None."""


def data_dir() -> Optional[Path]:
    """The offline mirror named by ``$OSBENCH_DATA_DIR``, or None."""
    value = os.environ.get("OSBENCH_DATA_DIR")
    return Path(value) if value else None


def cache_dir() -> Path:
    """Where downloads go: ``$OSBENCH_CACHE_DIR``, else ``pooch.os_cache("osbench")``."""
    value = os.environ.get("OSBENCH_CACHE_DIR")
    if value:
        return Path(value)
    import pooch  # type: ignore[import-untyped]  # imported here: only downloads need it

    return Path(pooch.os_cache("osbench"))


def _dataset(name: Any) -> Dataset:
    if not isinstance(name, str) or name not in REGISTRY:
        raise ArgumentError(f"name={name!r} is not accepted: use one of {', '.join(NAMES)}")
    return REGISTRY[name]


_verified: dict[tuple[str, int, int], str] = {}  # (path, size, mtime_ns) -> sha256 already computed


def sha256(path: Union[str, os.PathLike[str]]) -> str:
    """The SHA-256 of a file, hex (remembered per path, size and modification time)."""
    st = os.stat(path)
    key = (os.fspath(path), st.st_size, st.st_mtime_ns)
    if key not in _verified:
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        _verified[key] = h.hexdigest()
    return _verified[key]


def _check(d: Dataset, path: Path) -> None:
    """Refuse a local copy whose hash is not the dataset's."""
    got = sha256(path)
    if got != d.sha256:
        raise DatasetError(
            f"dataset {d.name!r}: {path} has sha256 {got}, expected {d.sha256}: the copy is damaged "
            "or not this dataset, so it is not used; delete it (osbench datasets fetch fetches it again)"
        )


def local(name: str) -> Optional[Path]:
    """The verified local copy of a dataset (the ``OSBENCH_DATA_DIR`` mirror first, then the
    cache), or None when there is none. Never downloads; a copy with the wrong hash raises
    :class:`DatasetError`."""
    d = _dataset(name)
    for folder in (data_dir(), cache_dir()):
        if folder is not None and (folder / d.filename).is_file():
            _check(d, folder / d.filename)
            return folder / d.filename
    return None


def fetch(name: str, *, progress: bool = False) -> Path:
    """The local path of a dataset: the ``OSBENCH_DATA_DIR`` mirror's copy, else the cached
    one, else downloaded once into the cache (hash checked; at most ``TIMEOUT`` seconds of
    silence). Raises :class:`DatasetError` when it cannot be had, or when a local copy has the
    wrong hash."""
    d = _dataset(name)
    found = local(name)
    if found is not None:
        return found
    return _download(d, cache_dir(), progress)


def _download(d: Dataset, folder: Path, progress: bool) -> Path:
    import pooch  # type: ignore[import-untyped]

    if not progress:
        pooch.get_logger().setLevel("WARNING")  # pooch announces every download on its logger
    mirror = data_dir()
    where = f"no copy in OSBENCH_DATA_DIR={mirror}" if mirror else "OSBENCH_DATA_DIR is not set"
    try:
        got = pooch.retrieve(
            d.url,
            known_hash=f"sha256:{d.sha256}",
            fname=d.filename,
            path=folder,
            downloader=pooch.HTTPDownloader(progressbar=progress, timeout=TIMEOUT),
        )
    except ValueError as exc:  # pooch: the download's hash is not the registry's
        raise DatasetError(f"dataset {d.name!r}: the file at {d.url} is not the expected one ({exc})") from None
    except Exception as exc:  # the network: refused, unreachable, timed out, HTTP errors
        raise DatasetError(
            f"dataset {d.name!r} is not available: downloading {d.url} failed ({_short(exc)}) "
            f"and {where}; set OSBENCH_DATA_DIR to a folder holding {d.filename}, or run "
            f"'osbench datasets fetch {d.name}' where there is network"
        ) from None
    return Path(got)


def try_fetch(name: str) -> tuple[Optional[Path], str]:
    """``(path, "")``, or ``(None, reason)`` when the dataset cannot be had: for reports,
    lectures and tests that go on without it and say why."""
    try:
        return fetch(name), ""
    except DatasetError as exc:
        return None, str(exc)


def missing_note(names: list[str]) -> str:
    """What a table or section says of datasets it could not have: which, and how to get them."""
    verb = "is" if len(names) == 1 else "are"
    return (
        f"{', '.join(names)} {verb} not available here (no network, and no copy in OSBENCH_DATA_DIR or the "
        "cache): 'osbench datasets fetch all' gets every dataset, or set OSBENCH_DATA_DIR to a folder holding them."
    )


def _short(exc: BaseException) -> str:
    """The gist of a network error (requests' messages nest the whole retry history)."""
    text = f"{type(exc).__name__}: {exc}"
    for gist in ("Failed to resolve", "Connection refused", "timed out", "Network is unreachable", "No route to host"):
        if gist in text:
            return f"{type(exc).__name__}: {gist.lower()}"
    return text if len(text) <= 160 else text[:157] + "..."


def available() -> list[Status]:
    """Every dataset with its description, licence, size, address, and whether a verified
    local copy is present (a copy with the wrong hash counts as absent)."""
    out = []
    for d in REGISTRY.values():
        try:
            path = local(d.name)
        except DatasetError:
            path = None
        out.append(Status(d.name, d.description, d.licence, d.size, d.url, path is not None, path))
    return out


def resolve(source: Union[str, os.PathLike[str]], what: str = "trace file") -> str:
    """The file a trace argument names: ``"dataset:NAME"`` is always the dataset (fetched if
    needed); a bare dataset name is the dataset unless a file of that name exists; anything
    else is the path of an existing file, or ``FileNotFoundError`` ("``what`` not found")."""
    text = os.fspath(source)
    if text.startswith(PREFIX):
        return str(fetch(text[len(PREFIX) :]))
    if text in REGISTRY and not os.path.exists(text):
        return str(fetch(text))
    if not os.path.exists(text):
        raise FileNotFoundError(f"no such {what}: {text} (not found, and not a dataset name: {', '.join(NAMES)})")
    mode = os.stat(text).st_mode
    if not stat.S_ISREG(mode):
        kind = "a directory" if stat.S_ISDIR(mode) else "a named pipe (FIFO)" if stat.S_ISFIFO(mode) else "a device"
        raise TraceFileError(f"{text}: {kind}, not a file: a {what} is read from a regular file")
    return text


__all__ = [
    "NAMES",
    "REGISTRY",
    "TIMEOUT",
    "Dataset",
    "DatasetError",
    "Status",
    "available",
    "cache_dir",
    "data_dir",
    "fetch",
    "local",
    "missing_note",
    "resolve",
    "sha256",
    "try_fetch",
]
