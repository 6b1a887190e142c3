"""Measured GPU kernels: AIConfigurator's operator tables, read once per GPU, as lookup grids.

The tables (datasets ``aic-<gpu>-<table>``, :data:`osbench.datasets.MEASURED`) hold the latency of
one operator call, in milliseconds, measured on the GPU through vLLM's own layers (vLLM 0.24.0 on
H100 SXM and H200, 0.19.0 on the RTX PRO 6000 server edition; timed with CUDA events around
CUDA-graph replays). This module turns them into seconds on regular grids and states how a point
between or beyond the measured ones is read:

- **GEMM** (``gemm_perf``, by ``m`` tokens and the ``n x k`` weight): log-log in ``n`` and ``k``
  (bilinear in ``(log n, log k)`` of ``log latency``) to reach a model's shape, then log-log in
  ``m`` between measured ``m``. Beyond the widest measured ``n`` (65,536: an LM head over a
  large vocabulary) in proportion to ``n``; any other shape outside the measured ``n, k`` (32 to
  65,536) is refused; ``m`` is measured from 1 to 32,768 tokens, and a step of more is refused.
- **Attention** (``context_attention_perf``: ``batch`` prompts of ``isl`` tokens, no cached
  prefix; ``generation_attention_perf``: ``batch`` requests decoding one token over ``step``
  cached ones), for the model's heads per GPU: bilinear (linear in batch, linear in length)
  between measured points. Cells the collector left out (large batches of long sequences, more
  than the GPU's memory) and points beyond the longest measured length are filled from the
  longest measured point of the same batch in proportion to the attention work (prefill: the
  causal query-key pairs ``s (s + 1) / 2``; decode: the keys read, ``s + 1``; under a sliding
  window, each query's keys capped at the window), batches beyond the largest measured one in
  proportion to the batch. Windowed layers (``window_size``, gpt-oss's 128) have grids of their
  own. A head shape without a table is refused.
- **All-reduce** (``custom_allreduce_perf``, vLLM's custom kernel, in and out of CUDA graphs;
  ``nccl_perf`` beyond it): log-log in the message size; a message beyond the largest measured
  grows in proportion to its size.
- **MoE** (``moe_perf``, one fused-MoE layer call by tokens): the model's exact shape (hidden,
  expert intermediate size, top-k, experts) at ``moe_tp = tp``, balanced routing; log-log in
  tokens, in proportion to the tokens beyond the largest measured. A kernel the tables time on
  another shape only (Marlin's MXFP4 MoE) is carried to the model's shape at the same tokens
  per expert and achieved FLOP/s (:func:`moe_carried_curve`).
"""

from __future__ import annotations

import bisect
import functools
from dataclasses import dataclass
from typing import Any

import numpy as np

from osbench import datasets
from osbench.errors import ArgumentError, OsbenchError
from osbench.serve.models import GPUS

MS = 1e-3
"""The tables' unit, in seconds."""

TABLE_GPUS: dict[str, str] = {
    "H100-SXM5-80GB": "h100_sxm",
    "H200-SXM-141GB": "h200_sxm",
    "RTX-PRO-6000-Blackwell-Server": "rtx_pro_6000_server",
}
"""The GPU presets (by :attr:`GPU.name <osbench.serve.GPU.name>`) that have measured tables, and
their AIConfigurator system directory."""

GEMM_DTYPES = {"bf16": "bfloat16", "fp16": "bfloat16", "fp8": "fp8"}
"""Weight dtype -> the GEMM table's ``gemm_dtype`` (fp8: per-tensor scaled, CUTLASS)."""

KV_DTYPES = {"bf16": "bfloat16", "fp16": "bfloat16", "fp8": "fp8"}
"""KV-cache dtype -> the attention tables' ``kv_cache_dtype``."""


class TablesMissing(OsbenchError, LookupError):
    """The measured tables cannot be read here (no pyarrow, or a dataset is not available)."""


def _pyarrow() -> Any:
    try:
        import pyarrow.parquet as pq  # type: ignore[import-untyped]  # imported here: only this model needs it
    except ImportError:
        raise TablesMissing(
            "the measured step-time model reads AIConfigurator's Parquet tables with pyarrow, which is not "
            "installed: pip install 'osbench[measured]'"
        ) from None
    return pq


def _read(gpu_dir: str, table: str) -> dict[str, np.ndarray]:
    name = datasets.aic_table_name(gpu_dir, table)
    path, reason = datasets.try_fetch(name)
    if path is None:
        raise TablesMissing(reason)
    columns = _pyarrow().read_table(path).to_pydict()
    return {k: np.asarray(v) for k, v in columns.items()}


@dataclass(frozen=True, eq=False)
class Grid:
    """Latencies in seconds on a grid ``axes[0] x axes[1]`` (float64, complete)."""

    rows: np.ndarray
    cols: np.ndarray
    values: np.ndarray


@dataclass(frozen=True, eq=False)
class GemmTable:
    """One dtype's GEMM latencies, seconds, ``latency[m, n, k]`` (NaN where not measured)."""

    m: np.ndarray
    n: np.ndarray
    k: np.ndarray
    latency: np.ndarray


@dataclass(frozen=True, eq=False)
class Tables:
    """One GPU's measured tables, as read once (:func:`tables`)."""

    gpu: str
    """The AIConfigurator system directory (``h100_sxm``)."""
    version: str
    """The vLLM release the kernels were measured under."""
    gemm: dict[str, GemmTable]
    context: dict[tuple[int, int, int, str, int], Grid]
    """(heads, KV heads, head size, KV dtype, sliding window or 0) -> grid over (batch, isl)."""
    generation: dict[tuple[int, int, int, str, int], Grid]
    """(heads, KV heads, head size, KV dtype, sliding window or 0) -> grid over (batch, cached tokens)."""
    allreduce: dict[tuple[int, str], tuple[np.ndarray, np.ndarray]]
    """(GPUs, "graph" | "eager" | "nccl") -> (message elements, seconds)."""
    moe: dict[tuple[Any, ...], tuple[np.ndarray, np.ndarray]]
    """(dtype, hidden, inter, topk, experts, moe_tp) -> (tokens, seconds)."""


def gpus_with_tables() -> list[str]:
    """The GPU presets (keys of ``GPUS``, aliases included) that have measured tables."""
    return sorted(k for k, g in GPUS.items() if g.name in TABLE_GPUS)


def gpu_dir(gpu_name: str) -> str:
    """The AIConfigurator directory of a GPU (its :attr:`GPU.name`, or a preset's key such as
    ``"h200"``), or a clear error listing the GPUs that have measured tables."""
    key = gpu_name.lower()  # preset keys are case-insensitive (GPU.preset)
    name = GPUS[key].name if key in GPUS else gpu_name
    if name not in TABLE_GPUS:
        have = gpus_with_tables()
        raise ArgumentError(
            f"gpu={gpu_name!r} is not accepted for the measured step time: it has no measured kernel tables; "
            f"the GPUs that have them are {', '.join(have)}"
        )
    return TABLE_GPUS[name]


def _gemm(raw: dict[str, np.ndarray]) -> dict[str, GemmTable]:
    out = {}
    for dtype in np.unique(raw["gemm_dtype"]).tolist():
        rows = raw["gemm_dtype"] == dtype
        m, n, k = (raw[c][rows].astype(np.int64) for c in ("m", "n", "k"))
        axes = [np.unique(a) for a in (m, n, k)]
        latency = np.full([len(a) for a in axes], np.nan)
        idx = [np.searchsorted(a, v) for a, v in zip(axes, (m, n, k))]
        latency[idx[0], idx[1], idx[2]] = raw["latency"][rows] * MS
        out[dtype] = GemmTable(axes[0], axes[1], axes[2], latency)
    return out


def _filled(rows: np.ndarray, cols: np.ndarray, cells: dict[tuple[int, int], float], work: Any) -> Grid:
    """A complete grid from measured cells: each row's missing lengths from its longest measured
    one, in proportion to ``work(length)``; a row with nothing measured from the row before it,
    in proportion to the batch."""
    values = np.full((len(rows), len(cols)), np.nan)
    for (b, s), v in cells.items():
        values[np.searchsorted(rows, b), np.searchsorted(cols, s)] = v
    for i in range(len(rows)):
        have = np.flatnonzero(~np.isnan(values[i]))
        if len(have) == 0:
            values[i] = values[i - 1] * (rows[i] / rows[i - 1])
            continue
        last = have[-1]
        for j in range(len(cols)):
            if np.isnan(values[i, j]):
                if j < last:  # a hole inside the row: linear between its measured neighbours
                    lo, hi = have[have < j][-1], have[have > j][0]
                    w = (cols[j] - cols[lo]) / (cols[hi] - cols[lo])
                    values[i, j] = values[i, lo] + w * (values[i, hi] - values[i, lo])
                else:
                    values[i, j] = values[i, last] * (work(cols[j]) / work(cols[last]))
    return Grid(rows.astype(np.float64), cols.astype(np.float64), values)


def prefill_work(s: float, window: int = 0) -> float:
    """Causal query-key pairs of a prompt of ``s`` tokens: ``s (s + 1) / 2``; under a sliding
    ``window`` (> 0) each query reads at most ``window`` keys, itself included:
    ``window (window + 1) / 2 + (s - window) window`` beyond the window."""
    if window == 0 or s <= window:
        return s * (s + 1.0) / 2.0
    return window * (window + 1.0) / 2.0 + (s - window) * window


def prefill_pairs(new: int, cached: int, window: int = 0) -> int:
    """The query-key pairs a chunk of ``new`` tokens after ``cached`` ones computes, exactly (an
    integer): :func:`prefill_work` at ``cached + new`` less at ``cached``; without a window,
    ``new cached + new (new + 1) / 2``."""
    if window == 0:
        return new * cached + new * (new + 1) // 2

    def pairs(s: int) -> int:
        return s * (s + 1) // 2 if s <= window else window * (window + 1) // 2 + (s - window) * window

    return pairs(cached + new) - pairs(cached)


def decode_work(s: float, window: int = 0) -> float:
    """Keys one decoding token reads after ``s`` cached ones: ``s + 1``, at most ``window``
    under a sliding window (> 0)."""
    return s + 1.0 if window == 0 else min(s + 1.0, float(window))


def _attention(raw: dict[str, np.ndarray], length: str, work: Any) -> dict[tuple[int, int, int, str, int], Grid]:
    if "window_size" not in raw:
        raw = {**raw, "window_size": np.zeros(len(raw["latency"]), dtype=np.int64)}
    keep = raw["attn_dtype"] == "bfloat16"
    groups: dict[tuple[int, int, int, str, int], dict[tuple[int, int], float]] = {}
    columns = ("num_heads", "num_key_value_heads", "head_dim", "kv_cache_dtype", "window_size")
    for h, kvh, hd, kvd, w, b, s, lat in zip(
        *(raw[c][keep].tolist() for c in columns),
        raw["batch_size"][keep].tolist(),
        raw[length][keep].tolist(),
        raw["latency"][keep].tolist(),
    ):
        groups.setdefault((h, kvh, hd, kvd, w), {})[(b, s)] = lat * MS
    out = {}
    for key, cells in groups.items():
        rows = np.unique([b for b, _ in cells])
        cols = np.unique([s for _, s in cells])
        out[key] = _filled(rows, cols, cells, functools.partial(work, window=key[4]))
    return out


def _allreduce(custom: dict[str, np.ndarray], nccl: dict[str, np.ndarray]) -> dict:
    out = {}
    for backend, name in (("vllm_graph", "graph"), ("vllm_eager", "eager")):
        for g in np.unique(custom["num_gpus"]).tolist():
            rows = (custom["backend"] == backend) & (custom["num_gpus"] == g)
            o = np.argsort(custom["message_size"][rows])
            out[(g, name)] = (custom["message_size"][rows][o].astype(np.float64), custom["latency"][rows][o] * MS)
    for g in np.unique(nccl["num_gpus"]).tolist():
        rows = (nccl["op_name"] == "all_reduce") & (nccl["nccl_dtype"] == "half") & (nccl["num_gpus"] == g)
        o = np.argsort(nccl["message_size"][rows])
        out[(g, "nccl")] = (nccl["message_size"][rows][o].astype(np.float64), nccl["latency"][rows][o] * MS)
    return out


def _moe(raw: dict[str, np.ndarray]) -> dict:
    keep = (raw["distribution"] == "balanced") & (raw["moe_ep_size"] == 1)
    groups: dict[tuple[Any, ...], dict[int, float]] = {}
    cols = ("moe_dtype", "hidden_size", "inter_size", "topk", "num_experts", "moe_tp_size")
    for *key, tokens, lat in zip(
        *(raw[c][keep].tolist() for c in cols), raw["num_tokens"][keep].tolist(), raw["latency"][keep].tolist()
    ):
        groups.setdefault(tuple(key), {})[tokens] = lat * MS
    return {
        key: (np.asarray(sorted(c), dtype=np.float64), np.asarray([c[t] for t in sorted(c)]))
        for key, c in groups.items()
    }


def tables(gpu_name: str) -> Tables:
    """The measured tables of a GPU (by :attr:`GPU.name` or preset key), read once per process.
    Raises :class:`ArgumentError` for a GPU without tables, :class:`TablesMissing` when pyarrow
    or a dataset is not available."""
    return _tables(gpu_dir(gpu_name))


@functools.cache
def _tables(d: str) -> Tables:
    """The tables of the AIConfigurator system directory ``d``, read once."""
    gemm = _read(d, "gemm")
    return Tables(
        gpu=d,
        version=str(gemm["version"][0]),
        gemm=_gemm(gemm),
        context=_attention(_read(d, "context_attention"), "isl", prefill_work),
        generation=_attention(_read(d, "generation_attention"), "step", decode_work),
        allreduce=_allreduce(_read(d, "custom_allreduce"), _read(d, "nccl")),
        moe=_moe(_read(d, "moe")),
    )


# ---------------------------------------------------------------------------- reading the tables


def _loglog(x: np.ndarray, xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
    """Log-log interpolation of ``ys(xs)`` at ``x``; beyond the last point in proportion to ``x``
    (the regime of large sizes, bound by throughput)."""
    x = np.asarray(x, dtype=np.float64)
    inside = np.exp(np.interp(np.log(np.minimum(x, xs[-1])), np.log(xs), np.log(ys)))
    return np.where(x > xs[-1], ys[-1] * x / xs[-1], inside)


def gemm_curve(t: Tables, dtype: str, n: int, k: int, tokens: np.ndarray) -> np.ndarray:
    """Seconds of one GEMM of an ``n x k`` weight at each count in ``tokens`` (1 to the
    largest measured ``m``): log-log in ``n`` and ``k``, then in ``m``."""
    g = t.gemm.get(GEMM_DTYPES[dtype])
    if g is None:
        raise ArgumentError(f"dtype={dtype!r} is not accepted on {t.gpu}: its GEMM table has {', '.join(t.gemm)}")
    if n > g.n[-1]:  # a wider weight (an LM head over a large vocabulary): work and bytes grow with n
        return gemm_curve(t, dtype, int(g.n[-1]), k, tokens) * (n / g.n[-1])
    for name, value, axis in (("n", n, g.n), ("k", k, g.k)):
        if not axis[0] <= value <= axis[-1]:
            raise ArgumentError(
                f"{name}={value} is not accepted: the GEMM table of {t.gpu} measures weights with {name} from "
                f"{axis[0]} to {axis[-1]}; a model shape outside it is not extrapolated"
            )
    if int(np.max(tokens)) > g.m[-1]:
        raise ArgumentError(
            f"tokens={int(np.max(tokens))} is not accepted: the GEMM table of {t.gpu} measures up to m={g.m[-1]} "
            "tokens per step; use max_num_batched_tokens of at most that"
        )
    i = min(max(int(np.searchsorted(g.n, n, side="right")) - 1, 0), len(g.n) - 2)
    j = min(max(int(np.searchsorted(g.k, k, side="right")) - 1, 0), len(g.k) - 2)
    wn = (np.log(n) - np.log(g.n[i])) / (np.log(g.n[i + 1]) - np.log(g.n[i]))
    wk = (np.log(k) - np.log(g.k[j])) / (np.log(g.k[j + 1]) - np.log(g.k[j]))
    logs = np.log(g.latency[:, i : i + 2, j : j + 2])
    per_m = np.exp(
        (1 - wn) * (1 - wk) * logs[:, 0, 0]
        + wn * (1 - wk) * logs[:, 1, 0]
        + (1 - wn) * wk * logs[:, 0, 1]
        + wn * wk * logs[:, 1, 1]
    )
    have = ~np.isnan(per_m)  # a corner not measured at some m: read that m from its neighbours
    m = g.m.astype(np.float64)
    return _loglog(tokens, m[have], per_m[have])


def allreduce_curve(t: Tables, gpus: int, elements: np.ndarray, graph: np.ndarray) -> np.ndarray:
    """Seconds of one bf16 all-reduce of ``elements`` over ``gpus`` GPUs, as vLLM picks it: its
    custom all-reduce up to :data:`CUSTOM_ALLREDUCE_MAX_BYTES` (captured in a CUDA graph where
    ``graph``), NCCL beyond (``vllm/distributed/device_communicators/cuda_communicator.py:
    CudaCommunicator.all_reduce``)."""
    if (gpus, "graph") not in t.allreduce:
        have = sorted({g for g, _ in t.allreduce})
        raise ArgumentError(f"tp={gpus} is not accepted on {t.gpu}: its all-reduce tables measure {have} GPUs")
    custom_graph = _loglog(elements, *t.allreduce[(gpus, "graph")])
    custom_eager = _loglog(elements, *t.allreduce[(gpus, "eager")])
    nccl = _loglog(elements, *t.allreduce[(gpus, "nccl")])
    custom = np.where(graph, custom_graph, custom_eager)
    return np.where(elements * 2 <= CUSTOM_ALLREDUCE_MAX_BYTES, custom, nccl)


CUSTOM_ALLREDUCE_MAX_BYTES = 8 * 1024 * 1024
"""The largest message vLLM's custom all-reduce takes (``CustomAllreduce(max_size=8192 * 1024)``
in ``vllm/distributed/device_communicators/custom_all_reduce.py``); larger ones go to NCCL."""


def moe_curve(t: Tables, key: tuple[Any, ...], tokens: np.ndarray) -> np.ndarray:
    """Seconds of one fused-MoE layer call at each token count, for ``key = (dtype, hidden,
    inter, topk, experts, moe_tp)``: log-log in tokens."""
    if key not in t.moe:
        shapes = sorted({k[1:5] for k in t.moe if k[0] == key[0]})
        raise ArgumentError(
            f"model shape {key[1:5]} (hidden, expert intermediate size, top-k, experts) with moe_tp={key[5]} is "
            f"not accepted on {t.gpu}: its MoE table measures {key[0]} layers of the shapes {shapes}"
        )
    return _loglog(tokens, *t.moe[key])


MARLIN_MXFP4_SHAPE = (3584, 3072, 16, 896)
"""The one MXFP4 MoE shape (hidden, expert intermediate size, top-k, experts) the tables time
with vLLM's Marlin kernel (``kernel_source`` ``vllm_compressedtensorsw4a4mxfp4moe_marlin_...``);
gpt-oss's own shape is timed with the Triton kernel only (``vllm_gptossmxfp4moe_triton``)."""


def moe_flops(hidden: int, inter: int, topk: int, tokens: np.ndarray) -> np.ndarray:
    """FLOPs of one fused-MoE call on one GPU of ``moe_tp`` (``inter`` already divided): each
    token's ``topk`` experts, gate/up (``2 inter x hidden``) and down (``hidden x inter``)."""
    return 2.0 * 3.0 * hidden * inter * topk * tokens


def moe_carried_curve(t: Tables, source: tuple[Any, ...], shape: tuple[int, ...], tokens: np.ndarray) -> np.ndarray:
    """Seconds of one fused-MoE call of ``shape`` (hidden, inter, topk, experts, moe_tp) at each
    token count, carried from another shape's measured kernel ``source`` (its MoE table key): at
    the same tokens per expert (``tokens * topk / experts``, which sets a grouped GEMM's
    arithmetic intensity) the same achieved FLOP/s, log-log between the source's points and its
    last rate beyond them. For a kernel the tables time on another shape only
    (:data:`MARLIN_MXFP4_SHAPE`)."""
    if source not in t.moe:
        raise ArgumentError(f"MoE kernel {source} is not accepted on {t.gpu}: its MoE table does not measure it")
    src_tokens, src_seconds = t.moe[source]
    hidden, inter, topk, experts, tp = source[1:6]
    src_per_expert = src_tokens * topk / experts
    src_rate = moe_flops(hidden, inter // tp, topk, src_tokens) / src_seconds
    h, i, k, e, tp = shape
    per_expert = np.asarray(tokens, dtype=np.float64) * k / e
    x = np.clip(np.log(per_expert), np.log(src_per_expert[0]), np.log(src_per_expert[-1]))
    rate = np.exp(np.interp(x, np.log(src_per_expert), np.log(src_rate)))
    return moe_flops(h, i // tp, k, tokens) / rate


def attention_grid(
    t: Tables, which: str, heads: int, kv_heads: int, head_dim: int, kv_dtype: str, window: int = 0
) -> Grid:
    """The prefill (``which="context"``) or decode (``"generation"``) attention grid for these
    heads on one GPU (``window``: a sliding window's tokens, 0 for full attention), or a clear
    error naming the shapes measured."""
    table = t.context if which == "context" else t.generation
    key = (heads, kv_heads, head_dim, KV_DTYPES[kv_dtype], window)
    if key not in table:
        shapes = sorted({k[:3] for k in table if k[2] == head_dim and k[3] == key[3] and k[4] == window})
        windowed = f" under a sliding window of {window}" if window else ""
        raise ArgumentError(
            f"heads={heads}, kv_heads={kv_heads}, head_dim={head_dim} per GPU is not accepted{windowed} on {t.gpu}: "
            f"its {which} attention table measures (heads, kv_heads, head_dim) {shapes}{windowed}"
        )
    return table[key]


def bilinear(grid_rows: list[float], grid_cols: list[float], values: list[float], b: float, s: float) -> float:
    """The grid read at batch ``b``, length ``s`` (both >= the first grid point), linear in each:
    the evaluation the native engine repeats operation by operation (``values`` row-major).
    Beyond the last batch, in proportion to the batch; beyond the last length the caller scales
    (:func:`prefill_work`, :func:`decode_work`)."""
    nr, nc = len(grid_rows), len(grid_cols)
    scale = 1.0
    if b > grid_rows[nr - 1]:
        scale = b / grid_rows[nr - 1]
        b = grid_rows[nr - 1]
    i = min(bisect.bisect_right(grid_rows, b) - 1, nr - 2)
    j = min(bisect.bisect_right(grid_cols, s) - 1, nc - 2)
    wb = (b - grid_rows[i]) / (grid_rows[i + 1] - grid_rows[i])
    ws = (s - grid_cols[j]) / (grid_cols[j + 1] - grid_cols[j])
    v00, v01 = values[i * nc + j], values[i * nc + j + 1]
    v10, v11 = values[(i + 1) * nc + j], values[(i + 1) * nc + j + 1]
    low = v00 + ws * (v01 - v00)
    high = v10 + ws * (v11 - v10)
    return (low + wb * (high - low)) * scale


__all__ = [
    "CUSTOM_ALLREDUCE_MAX_BYTES",
    "GEMM_DTYPES",
    "KV_DTYPES",
    "MARLIN_MXFP4_SHAPE",
    "MS",
    "TABLE_GPUS",
    "GemmTable",
    "Grid",
    "Tables",
    "TablesMissing",
    "allreduce_curve",
    "attention_grid",
    "bilinear",
    "decode_work",
    "gemm_curve",
    "gpu_dir",
    "gpus_with_tables",
    "moe_carried_curve",
    "moe_curve",
    "moe_flops",
    "prefill_pairs",
    "prefill_work",
    "tables",
]
