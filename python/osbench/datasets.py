"""The public traces osbench uses, fetched once and checked by their SHA-256.

Each dataset is an upstream file (a raw-file address on GitHub) with its hash, size, licence
and a one-line description; :func:`fetch` downloads it once into the user cache (with
``pooch``, into ``pooch.os_cache("osbench")`` or ``$OSBENCH_CACHE_DIR``), checks the hash, and
returns the local path. ``$OSBENCH_DATA_DIR`` names folders that already hold the files (an
offline mirror; several folders separated by ``os.pathsep``, searched in order): a file found
there with the right hash is used without any download, and one with the wrong hash is refused.
A file's place in the mirror (and in the cache) is its ``filename``: a bare name for the traces,
the upstream path for the measured GPU tables (``aiconfigurator/systems/data/h100_sxm/...``),
since several of them share a base name. Without network and without a local copy, :func:`fetch` fails
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
    """Where the file sits in the cache and in an ``OSBENCH_DATA_DIR`` mirror: a file name, or a
    relative path (``/``-separated) for files whose upstream base names collide."""
    url: str
    sha256: str
    size: int
    """Bytes."""
    licence: str
    description: str
    format: str
    """Its format for :func:`osbench.traces.read`, or ``"parquet"`` / ``"csv"`` for the measured
    GPU tables (:data:`TABLE_FORMATS`), which are read by :mod:`osbench.serve.kernels`."""


def _github(repo: str, branch: str, path: str) -> str:
    return f"https://raw.githubusercontent.com/{repo}/{branch}/{path}"


AIC_COMMIT = "095f58a51c4ca8e61b66ec108d86f223f8d559ce"
"""The ai-dynamo/aiconfigurator commit (2026-08-21) the measured GPU tables are taken at."""

_AIC_ROOT = "aic-core/src/aiconfigurator_core/"
_AIC_LICENCE = "Apache-2.0 (ai-dynamo/aiconfigurator)"

TABLE_FORMATS = ("parquet", "csv")
"""The formats of the measured GPU tables (not traces: :mod:`osbench.serve.kernels` reads them)."""

# AIConfigurator's operator tables: (GPU directory, table, engine/version, sha256, bytes). Each file is
# `systems/data/<gpu>/<folder>/<engine>/<version>/<table>_perf.parquet` upstream (folder: _AIC_FOLDER).
# One row a file, left unwrapped so that the table reads as one.
# fmt: off
_AIC_TABLES = (
    ("h100_sxm", "gemm", "vllm/0.24.0", "727df0c1ee5dbe7521048fbcf50d8b95b61a47994f84c89c1e34213499c292e0", 748_057),
    ("h100_sxm", "context_attention", "vllm/0.24.0", "cea40c31b8c273297c935617ee70588589feea894aa3137e5cff11d11812ccdd", 327_909),
    ("h100_sxm", "generation_attention", "vllm/0.24.0", "20d81d2b77f464af61a7c1ac9ae262010c5a74c73db490da85dd4420899819cf", 243_726),
    ("h100_sxm", "custom_allreduce", "vllm/0.24.0", "e589a863dec100f7feb1612bf16c002d9d229caf4b0395dfcf53ed066fa70f73", 4_365),
    ("h100_sxm", "nccl", "nccl/2.29.2", "3741fff88c638ab513c08e3c8a34290cf47fb3051e13c1323f1a501e01dedf09", 10_012),
    ("h100_sxm", "moe", "vllm/0.24.0", "2937e4b3e80ce21c73742359f5184b136ff1010f19e78a832c22f75f36ac7b52", 519_210),
    ("h200_sxm", "gemm", "vllm/0.24.0", "d5b767730e5d45ba3c887f3825c00fa00968887a9288c24e5464bec5f199b3f2", 736_024),
    ("h200_sxm", "context_attention", "vllm/0.24.0", "29e92f9aad6a05e8c37b7477c5058d465eca7e340399ea1f80879189af8b3f19", 328_948),
    ("h200_sxm", "generation_attention", "vllm/0.24.0", "6deb59b0dc6706bea27593a9df60edb48ca2e05e11215413389cdcdb89e9d195", 246_039),
    ("h200_sxm", "custom_allreduce", "vllm/0.24.0", "160feaa0058c6df46ddc86571129b136bda11d0177d024c4d0115779e1a62f0b", 4_308),
    ("h200_sxm", "nccl", "nccl/2.29.2", "9b46ab90aca04f23b80c3d38bc3241d449ff27aba9aa39de793daafa8a841e0f", 9_917),
    ("h200_sxm", "moe", "vllm/0.24.0", "30f7f2cc00984021451abe17e72809c696c636aeedbf9d4f71d678a53f338b61", 503_382),
    ("rtx_pro_6000_server", "gemm", "vllm/0.19.0", "4e28a14d91d6b2ef756fa78f8a8490678a4d62cabb268b31a3ba746ab63fc6af", 819_890),
    ("rtx_pro_6000_server", "context_attention", "vllm/0.19.0", "d4839f1c4d9053a28c128872f3b2cca49d26cac7d4d1708ccbbbd84f35066055", 139_581),
    ("rtx_pro_6000_server", "generation_attention", "vllm/0.19.0", "647768b4eb1547f35788b3697cfb438028290a59e53026d0f6d6fe12fe4ac3fc", 86_183),
    ("rtx_pro_6000_server", "custom_allreduce", "vllm/0.19.0", "e0a0a6a4b478061da97df2418ada7aed44075118c5d61eb920433310eae49bad", 3_803),
    ("rtx_pro_6000_server", "nccl", "nccl/2.29.2", "0a4363dfaebfa9e19de7804105e75cda9dd51a92c25d2885b26522292f3efdea", 10_440),
    ("rtx_pro_6000_server", "moe", "vllm/0.19.0", "3af0ae58d51604ab3feb506b335427a35a39a9990ab86355e9b45c1833bdd065", 444_607),
)
# fmt: on

_AIC_FOLDER = {
    "gemm": "gemm",
    "context_attention": "attention",
    "generation_attention": "attention",
    "custom_allreduce": "comm",
    "nccl": "comm",
    "moe": "moe",
}
_AIC_WHAT = {
    "gemm": "GEMM latency by (m, n, k) in bf16, fp8 and block fp8",
    "context_attention": "prefill attention latency by batch, prompt length and head shape",
    "generation_attention": "decode attention latency by batch, cached length and head shape",
    "custom_allreduce": "vLLM custom all-reduce latency by message size and GPU count",
    "nccl": "NCCL collectives' latency by message size and GPU count (nccl-tests)",
    "moe": "fused MoE layer latency by tokens, shapes, top-k and experts",
}


def aic_table_name(gpu_dir: str, table: str) -> str:
    """The dataset name of one AIConfigurator table: ``aic-h100_sxm-gemm``."""
    return f"aic-{gpu_dir}-{table.replace('_', '-')}"


def _aic_table(gpu_dir: str, table: str, engine: str, sha: str, size: int) -> Dataset:
    path = f"systems/data/{gpu_dir}/{_AIC_FOLDER[table]}/{engine}/{table}_perf.parquet"
    return Dataset(
        aic_table_name(gpu_dir, table),
        f"aiconfigurator/{path}",
        _github("ai-dynamo/aiconfigurator", AIC_COMMIT, _AIC_ROOT + path),
        sha,
        size,
        _AIC_LICENCE,
        f"{gpu_dir}, {engine.replace('/', ' ')}: {_AIC_WHAT[table]}, measured on the GPU (ms per call)",
        "parquet",
    )


VIDUR_COMMIT = "7d47513363ec447a741ac5e47241580b47724fbf"
"""The microsoft/vidur commit (2024-11-19) its layer profiles are taken at."""

SPLITWISE_COMMIT = "8f99e7dc9b407f4ce2488d03dd44c0b8b946dab0"
"""The Mutinifni/splitwise-sim commit (2024-04-25) its performance model is taken at."""

# Vidur's mlp.csv profiles: (GPU, model folder, sha256, bytes), each upstream at
# data/profiling/compute/<gpu>/meta-llama/<model>/mlp.csv.
# fmt: off
VIDUR_PROFILES = (
    ("a100", "Meta-Llama-3-8B", "98c26488298e324e89db7349e213f75c856ae83dc6b17548a68636d2cb5efff0", 1_204_856),
    ("a100", "Llama-2-7b-hf", "2cfacca979f32e83257753cf6fd815a71af8ba9a7a9d0643b18d9f54e8a37688", 706_614),
    ("h100", "Llama-2-7b-hf", "b1a2def08857d10e5f66c3b5b2d046b6e8caed5c30b2bc920a0462598e3b2a59", 715_469),
)
# fmt: on


def vidur_profile_name(gpu: str, model: str) -> str:
    """The dataset name of one Vidur profile: ``vidur-h100-llama-2-7b-hf-mlp``."""
    return f"vidur-{gpu}-{model.lower()}-mlp"


def _vidur_profile(gpu: str, model: str, sha: str, size: int) -> Dataset:
    path = f"data/profiling/compute/{gpu}/meta-llama/{model}/mlp.csv"
    return Dataset(
        vidur_profile_name(gpu, model),
        f"vidur/{path}",
        _github("microsoft/vidur", VIDUR_COMMIT, path),
        sha,
        size,
        "MIT (microsoft/vidur)",
        f"{model} on {gpu.upper()}: each non-attention operator of one decoder layer by tokens and TP, fp16 (ms per call)",
        "csv",
    )


MEASURED: tuple[Dataset, ...] = (
    *(_aic_table(*row) for row in _AIC_TABLES),
    *(_vidur_profile(*row) for row in VIDUR_PROFILES),
    Dataset(
        "splitwise-perf-model",
        "splitwise-sim/data/perf_model.csv",
        _github("Mutinifni/splitwise-sim", SPLITWISE_COMMIT, "data/perf_model.csv"),
        "dbbe505d1d64fc4bd1ec03c50edf944643586de4f68a81e94cbd55dd5bdfbf41",
        127_281,
        "MIT (Mutinifni/splitwise-sim)",
        "Llama2-70B and BLOOM-176B on A100 and H100: whole-model prefill and decode iteration times (ms)",
        "csv",
    ),
    Dataset(
        "aic-silicon-sample",
        "aiconfigurator/systems/silicon_sample.csv",
        _github("ai-dynamo/aiconfigurator", AIC_COMMIT, _AIC_ROOT + "systems/silicon_sample.csv"),
        "4240bfaf555b6f8b2c62512074e5efbb7791cdbb0344b068408f397588499adb",
        1_895_632,
        _AIC_LICENCE,
        "5,221 measured serving runs at fixed concurrency (engine, GPU, parallelism, ISL/OSL, mean TTFT and TPOT in ms)",
        "csv",
    ),
)
"""The measured GPU data: AIConfigurator's operator tables and its end-to-end serving
measurements, at :data:`AIC_COMMIT`; Vidur's per-operator layer profiles at
:data:`VIDUR_COMMIT` and splitwise-sim's whole-model step times at :data:`SPLITWISE_COMMIT`
(:mod:`osbench.serve.crosscheck` checks the step-time models against those two)."""


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
        *MEASURED,
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


def data_dirs() -> list[Path]:
    """The offline mirror's folders named by ``$OSBENCH_DATA_DIR`` (separated by ``os.pathsep``),
    in the order they are searched; empty when it is not set."""
    value = os.environ.get("OSBENCH_DATA_DIR", "")
    return [Path(part) for part in value.split(os.pathsep) if part]


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
    for folder in [*data_dirs(), cache_dir()]:
        if (folder / d.filename).is_file():
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
    mirror = os.environ.get("OSBENCH_DATA_DIR")
    where = f"no copy in OSBENCH_DATA_DIR={mirror}" if mirror else "OSBENCH_DATA_DIR is not set"
    target = folder / d.filename
    try:
        got = pooch.retrieve(
            d.url,
            known_hash=f"sha256:{d.sha256}",
            fname=target.name,
            path=target.parent,
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
    "AIC_COMMIT",
    "MEASURED",
    "NAMES",
    "REGISTRY",
    "TABLE_FORMATS",
    "TIMEOUT",
    "Dataset",
    "DatasetError",
    "Status",
    "aic_table_name",
    "available",
    "cache_dir",
    "data_dirs",
    "fetch",
    "local",
    "missing_note",
    "resolve",
    "sha256",
    "try_fetch",
]
