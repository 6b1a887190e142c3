"""The step-time models against measurements nobody fitted them to and that do not come from
AIConfigurator: the step itself, with no clients, no queue and no benchmark harness in between.

:mod:`osbench.serve.validate` checks whole serving runs, where TTFT also depends on how the
benchmark's clients sent their requests. Here each prediction is one step or one kernel:

- **Vidur's layer profiles** (``microsoft/vidur``, ``data/profiling/compute/<gpu>/meta-llama/
  <model>/mlp.csv``): the CUDA time of each operator of one decoder layer at a token count and a
  tensor-parallel degree, in fp16, per GPU shard (no communication), Sarathi-Serve's modules timed
  by PyTorch's profiler; the medians, as Vidur's own predictor reads them. Checked: the four linear
  layers (``attn_pre_proj``, the fused QKV projection; ``attn_post_proj``, the output projection;
  ``mlp_up_proj``, the fused gate and up projection; ``mlp_down_proj``), each predicted from the
  measured GEMM table of the GPU (:func:`osbench.serve.kernels.gemm_curve`, vLLM 0.24.0's kernels
  timed by AIConfigurator: H100 only, A100 has no tables) and by the roofline of one GEMM,
  ``max(2 m n k / (peak x MFU), 2 (m k + k n + m n) / (bandwidth x MBU))`` with the roofline step
  time's :data:`~osbench.serve.steptime.MFU` and :data:`~osbench.serve.steptime.MBU`.
- **splitwise-sim's performance model** (``Mutinifni/splitwise-sim``, ``data/perf_model.csv``):
  Llama2-70B on A100 80 GB and H100 80 GB (DGX), tensor parallel 2, 4 and 8, whole-model times:
  ``prompt_time``, the prefill of ``batch_size`` prompts of ``prompt_size`` tokens, predicted as
  one step of those prompts; ``token_time``, one decode iteration of the batch, predicted as the
  mean step time of ``batch_size`` requests decoding over the output (their context from the
  prompt to the prompt and ``token_size - 1`` tokens, :data:`DECODE_SAMPLES` evenly spaced
  contexts). Each point is the median of its repeated rows, as splitwise-sim reads them. Left out:
  BLOOM-176B (no preset), the power-capped H100 (its cap is not stated), and the points no GPU
  could have measured (:func:`impossible`: two batches of 64 prompts prefilled several times
  faster than the GPUs' peak FLOP/s allow). The engine that ran them is not stated.

Nothing is fitted but the ``calibrated`` model, on half of splitwise-sim's points and reported
on the other half: the roofline's utilisations are its assumed constants and the measured model's
host terms BLIS's published ones.
"""

from __future__ import annotations

import csv
import functools
import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, Optional

import numpy as np

from osbench import datasets
from osbench.errors import ArgumentError
from osbench.serve import kernels
from osbench.serve.models import DTYPE_BYTES, GPU, Model
from osbench.serve.steptime import MBU, MFU, StepTime, StepWork
from osbench.serve.validate import mape

VIDUR_GPUS = {"a100": "a100-80gb", "h100": "h100-sxm"}
"""Vidur's GPU folders -> GPU presets (Vidur's README: DGX A100 80 GB and DGX H100)."""

VIDUR_LINEAR = ("attn_pre_proj", "attn_post_proj", "mlp_up_proj", "mlp_down_proj")
"""The linear layers of Vidur's profiles, in the order of a layer."""

SPLITWISE_MODELS = {"llama2-70b": "llama-2-70b"}
"""splitwise-sim's models with a preset."""

SPLITWISE_GPUS = {"a100-80gb": "a100-80gb", "h100-80gb": "h100-sxm"}
"""splitwise-sim's hardware -> GPU presets (DGX A100 80 GB and DGX H100, SXM)."""

DECODE_SAMPLES = 16
"""Contexts a decode iteration's mean is taken at, the midpoints of equal parts of the output.
The step time is nearly linear in the context: on Llama2-70B (H100, TP 2 and 8, roofline and
measured, outputs of 128 to 8,192 tokens) these 16 steps' mean is within 0.01% of the mean over
every step."""

KINDS = ("roofline", "measured", "calibrated")
"""The step-time models checked on splitwise-sim's points: the roofline with its assumed
utilisations, the measured kernels (with BLIS's host terms), and the corrected roofline fitted to
half of the points (:func:`splitwise_checks`)."""


@dataclass(frozen=True)
class Check:
    """One measured time and its prediction by one model."""

    source: str
    """``"vidur"`` (one operator of a layer) or ``"splitwise"`` (one whole-model step)."""
    gpu: str
    model: str
    """The profiled model (Vidur's folder, splitwise-sim's name)."""
    tp: int
    what: str
    """The operator (Vidur's name) or the step: ``"prefill"`` or ``"decode"``."""
    tokens: int
    """Vidur: the layer's tokens. splitwise: the step's new tokens (prompts x batch, or the batch)."""
    batch: int
    """splitwise: requests in the batch (Vidur: 1)."""
    context: int
    """splitwise: the prompt's tokens (Vidur: 0)."""
    output: int
    """splitwise: output tokens per request (Vidur: 0)."""
    measured: float
    """Seconds."""
    kind: str
    """The predicting model (:data:`KINDS`; for Vidur's operators ``"roofline"`` or ``"tables"``,
    the GEMM read from the kernel tables)."""
    predicted: float

    @property
    def error(self) -> float:
        return self.predicted / self.measured - 1.0

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "error": self.error}


# --------------------------------------------------------------------------- Vidur


def vidur_profiles() -> list[dict[str, Any]]:
    """Every row of the Vidur profiles registered (:data:`osbench.datasets.MEASURED`): the
    GPU folder, model folder, shape, tokens, TP and each linear layer's median, seconds."""
    rows: list[dict[str, Any]] = []
    for name, (gpu, model) in _vidur_datasets().items():
        with open(datasets.fetch(name), newline="") as f:
            rows.extend(_vidur_row(gpu, model, r) for r in csv.DictReader(f))
    return rows


def _vidur_row(gpu: str, model: str, r: dict[str, str]) -> dict[str, Any]:
    return {
        "gpu": gpu,
        "model": model,
        "heads": int(r["n_head"]),
        "kv_heads": int(r["n_kv_head"]),
        "hidden": int(r["n_embd"]),
        "inter": int(r["n_expanded_embd"]),
        "tokens": int(r["num_tokens"]),
        "tp": int(r["num_tensor_parallel_workers"]),
        **{op: float(r[f"time_stats.{op}.median"]) * 1e-3 for op in VIDUR_LINEAR},
    }


def _vidur_datasets() -> dict[str, tuple[str, str]]:
    """Dataset name -> (GPU folder, model folder) of each registered Vidur profile."""
    return {datasets.vidur_profile_name(gpu, model): (gpu, model) for gpu, model, *_ in datasets.VIDUR_PROFILES}


def linear_shape(row: dict[str, Any], op: str) -> tuple[int, int]:
    """``(n, k)`` of one linear layer of a Vidur row on one GPU shard (Sarathi-Serve's column- and
    row-parallel layers, as vLLM's: heads, KV heads and the MLP split over the TP degree)."""
    tp, hidden = row["tp"], row["hidden"]
    head_dim = hidden // row["heads"]
    heads, kv_heads = row["heads"] // tp, max(row["kv_heads"] // tp, 1)
    shapes = {
        "attn_pre_proj": ((heads + 2 * kv_heads) * head_dim, hidden),
        "attn_post_proj": (hidden, heads * head_dim),
        "mlp_up_proj": (2 * row["inter"] // tp, hidden),
        "mlp_down_proj": (hidden, row["inter"] // tp),
    }
    return shapes[op]


def has_tables(gpu: str) -> bool:
    """Whether the GPU preset has measured kernel tables (:data:`osbench.serve.kernels.TABLE_GPUS`)."""
    return GPU.preset(gpu).name in kernels.TABLE_GPUS


def gemm_roofline(gpu: GPU, m: int, n: int, k: int) -> float:
    """Seconds of one bf16 GEMM of ``m x k`` by ``k x n`` by the roofline: its FLOPs at the peak
    times :data:`MFU` or its bytes at the bandwidth times :data:`MBU`, whichever is longer."""
    flops = 2.0 * m * n * k / (gpu.peak_flops("bf16") * MFU)
    bytes_moved = DTYPE_BYTES["bf16"] * (m * k + k * n + m * n) / (gpu.bandwidth * MBU)
    return max(flops, bytes_moved)


def vidur_checks(rows: Optional[list[dict[str, Any]]] = None) -> list[Check]:
    """Each linear layer of each Vidur row predicted by the roofline of one GEMM and, on a GPU
    with kernel tables, read from its GEMM table (``kind="tables"``)."""
    rows = vidur_profiles() if rows is None else rows
    checks = []
    tables: dict[str, Optional[kernels.Tables]] = {}
    for r in rows:
        preset = VIDUR_GPUS[r["gpu"]]
        gpu = GPU.preset(preset)
        if preset not in tables:
            tables[preset] = kernels.tables(preset) if has_tables(preset) else None
        t = tables[preset]
        for op in VIDUR_LINEAR:
            n, k = linear_shape(r, op)
            check = functools.partial(Check, "vidur", preset, r["model"], r["tp"], op, r["tokens"], 1, 0, 0, r[op])
            checks.append(check("roofline", gemm_roofline(gpu, r["tokens"], n, k)))
            if t is not None:
                checks.append(check("tables", float(kernels.gemm_curve(t, "bf16", n, k, np.array([r["tokens"]]))[0])))
    return checks


# --------------------------------------------------------------------------- splitwise-sim


@dataclass(frozen=True)
class SplitwisePoint:
    """One point of splitwise-sim's grid: the medians of its repeated rows."""

    model: str
    """splitwise-sim's name (``llama2-70b``)."""
    hardware: str
    tp: int
    prompt: int
    batch: int
    output: int
    prompt_time: float
    """Seconds: the batch's prefill."""
    token_time: float
    """Seconds: one decode iteration of the batch."""
    repeats: int


def splitwise_points(path: Optional[str] = None) -> list[SplitwisePoint]:
    """splitwise-sim's performance model (the dataset ``splitwise-perf-model``, or ``path``), one
    point per (model, hardware, TP, prompt, batch, output), each time the median of the rows that
    repeat it, in the file's order of first appearance."""
    groups: dict[tuple[Any, ...], list[tuple[float, float]]] = defaultdict(list)
    with open(path or datasets.fetch("splitwise-perf-model"), newline="") as f:
        for r in csv.DictReader(f):
            key = (
                r["model"],
                r["hardware"],
                int(r["tensor_parallel"]),
                int(r["prompt_size"]),
                int(r["batch_size"]),
                int(r["token_size"]),
            )
            groups[key].append((float(r["prompt_time"]) * 1e-3, float(r["token_time"]) * 1e-3))
    points = []
    for key, times in groups.items():
        prompt, token = np.median(np.asarray(times), axis=0)
        points.append(SplitwisePoint(*key, float(prompt), float(token), len(times)))
    return points


def impossible(p: SplitwisePoint) -> list[str]:
    """What of a point no GPU could have done, by its datasheet: a prefill faster than the
    prompts' matrix products at the peak FLOP/s of all ``tp`` GPUs (``2 x active parameters`` per
    prompt token, its LM head but one token a prompt, attention left out), or a decode iteration
    faster than one read of each GPU's weights at its bandwidth. Such rows (the README of the data
    warns of internally odd ones) are left out of the checks and the calibration; empty: none."""
    m, g = Model.preset(SPLITWISE_MODELS[p.model]), GPU.preset(SPLITWISE_GPUS[p.hardware])
    flops = 2.0 * (m.active_parameters - m.embedding_parameters - m.lm_head_parameters) * p.prompt * p.batch
    fastest_prefill = flops / (g.peak_flops("bf16") * p.tp)
    fastest_decode = m.weight_bytes(p.tp) / g.bandwidth
    out = []
    if p.prompt_time < fastest_prefill:
        out.append(f"its prefill ({p.prompt_time * 1e3:.4g} ms) beats the peak FLOP/s ({fastest_prefill * 1e3:.4g} ms)")
    if p.token_time < fastest_decode:
        out.append(
            f"its decode ({p.token_time * 1e3:.4g} ms) beats one read of the weights ({fastest_decode * 1e3:.4g} ms)"
        )
    return out


def prefill_step(p: SplitwisePoint) -> StepWork:
    """The batch's prefill as one step: ``batch`` prompts of ``prompt`` tokens, none cached."""
    return StepWork.of([(p.prompt, 0, p.prompt)] * p.batch)


def decode_steps(p: SplitwisePoint) -> list[StepWork]:
    """The decode iterations a mean is taken over: ``batch`` requests decoding one token each
    over :data:`DECODE_SAMPLES` contexts evenly spread over the output."""
    parts = min(DECODE_SAMPLES, p.output)
    contexts = [p.prompt + int((j + 0.5) * p.output / parts) for j in range(parts)]
    return [StepWork.of([(1, c, 1)] * p.batch) for c in contexts]


def checkable(points: Sequence[SplitwisePoint]) -> list[SplitwisePoint]:
    """The points of a model and hardware with presets that a GPU could have measured
    (:func:`impossible`), in order."""
    return [p for p in points if p.model in SPLITWISE_MODELS and p.hardware in SPLITWISE_GPUS and not impossible(p)]


def in_calibration_half(index: int) -> bool:
    """Whether the point at ``index`` of its (model, hardware, TP) group, in the file's order, is
    one the ``calibrated`` model is fitted on: every other one, the first included. It is
    reported only on the others."""
    return index % 2 == 0


def splitwise_checks(points: Optional[Sequence[SplitwisePoint]] = None, kinds: Sequence[str] = KINDS) -> list[Check]:
    """Each :func:`checkable` point predicted by each step-time model of ``kinds``:
    ``"roofline"``; ``"measured"`` on a GPU with kernel tables; ``"calibrated"``, the corrected
    roofline fitted (:meth:`StepTime.fit <osbench.serve.StepTime.fit>`) on the group's other
    points (:func:`in_calibration_half`), on its prefill steps and its decode steps at the middle
    of the output, and reported on the points it was not fitted on."""
    for kind in kinds:
        if kind not in KINDS:
            raise ArgumentError(f"kinds={list(kinds)!r} is not accepted: use {', '.join(KINDS)}")
    points = splitwise_points() if points is None else points
    groups: dict[tuple[str, str, int], list[SplitwisePoint]] = defaultdict(list)
    for p in checkable(points):
        groups[(SPLITWISE_MODELS[p.model], SPLITWISE_GPUS[p.hardware], p.tp)].append(p)
    checks = []
    for (model, gpu, tp), group in groups.items():
        for kind in kinds:
            if kind == "measured" and not has_tables(gpu):
                continue
            st = _step_time(model, gpu, tp, kind, group)
            for index, p in enumerate(group):
                if kind == "calibrated" and in_calibration_half(index):
                    continue
                check = functools.partial(Check, "splitwise", gpu, p.model, p.tp)
                steps = (("prefill", p.prompt * p.batch, p.prompt_time), ("decode", p.batch, p.token_time))
                prefill = float(st(prefill_step(p)))
                decode = float(np.mean([st(b) for b in decode_steps(p)]))
                for (what, tokens, measured), predicted in zip(steps, (prefill, decode)):
                    checks.append(check(what, tokens, p.batch, p.prompt, p.output, measured, kind, predicted))
    return checks


def _step_time(model: str, gpu: str, tp: int, kind: str, group: Sequence[SplitwisePoint]) -> StepTime:
    if kind == "roofline":
        return StepTime.roofline(model, gpu, tp=tp)
    if kind == "measured":
        return StepTime.measured(model, gpu, tp=tp)
    fit = [p for index, p in enumerate(group) if in_calibration_half(index)]
    steps: list[StepWork] = []
    seconds: list[float] = []
    for p in fit:
        steps += [prefill_step(p), StepWork.of([(1, p.prompt + p.output // 2, 1)] * p.batch)]
        seconds += [p.prompt_time, p.token_time]
    return StepTime.fit(model, gpu, tp, steps=steps, seconds=seconds)


# --------------------------------------------------------------------------- the table


def summary(checks: Sequence[Check]) -> list[dict[str, Any]]:
    """MAPE by source, GPU, what was timed and predicting model, with every GPU's and every
    operator's or step's rows together too (``"all"``)."""
    groups: dict[tuple[str, str, str, str], list[float]] = defaultdict(list)
    for c in checks:
        for gpu in (c.gpu, "all"):
            for what in (c.what, "all"):
                groups[(c.source, gpu, what, c.kind)].append(c.error)
    order = {k: i for i, k in enumerate(("roofline", "tables", "measured", "calibrated"))}
    return [
        {
            "source": source,
            "gpu": gpu,
            "what": what,
            "kind": kind,
            "points": len(errors),
            "mape": mape(errors),
            "mean_error": 100.0 * float(np.mean(errors)) if errors else math.nan,
        }
        for (source, gpu, what, kind), errors in sorted(
            groups.items(), key=lambda kv: (kv[0][0], kv[0][1] != "all", kv[0][1], kv[0][2], order[kv[0][3]])
        )
    ]


__all__ = [
    "DECODE_SAMPLES",
    "KINDS",
    "SPLITWISE_GPUS",
    "SPLITWISE_MODELS",
    "VIDUR_GPUS",
    "VIDUR_LINEAR",
    "Check",
    "SplitwisePoint",
    "checkable",
    "decode_steps",
    "gemm_roofline",
    "has_tables",
    "impossible",
    "in_calibration_half",
    "linear_shape",
    "prefill_step",
    "splitwise_checks",
    "splitwise_points",
    "summary",
    "vidur_checks",
    "vidur_profiles",
]
