"""How long one engine step takes.

A step's work is summarised by :class:`Batch` (integers only). A step-time model is any
callable ``model(batch) -> seconds``; the two built in, :meth:`StepTime.linear` and
:meth:`StepTime.roofline`, are fixed sequences of float operations on the batch's integers,
written out in order below, so that the native engine, given :meth:`StepTime.spec`, computes
bit-equal times.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Optional, Union

import numpy as np

from osbench import _checks
from osbench.errors import ArgumentError, ArgumentTypeError
from osbench.serve import kernels
from osbench.serve import measured as composition
from osbench.serve.measured import MeasuredTables
from osbench.serve.models import DTYPE_BYTES, GPU, Model


@dataclass(frozen=True)
class Batch:
    """What one engine step computes.

    A scheduled request is a *prefill* when more than its one next token was outstanding
    before the step (a prompt, a chunk of one, or a recomputation after preemption), else a
    *decode* (its one next token)."""

    num_seqs: int
    """Requests scheduled in the step."""
    prefill_seqs: int
    prefill_tokens: int
    """New tokens of the prefill requests."""
    decode_seqs: int
    """Requests scheduled for their one next token (one new token each)."""
    context_tokens: int
    """Tokens already in the KV cache of the scheduled requests before the step (summed)."""
    attention_pairs: int
    """Causal query-key pairs of the step's attention: for a request with ``c`` tokens in
    the cache and ``n`` new ones, ``n * c + n * (n + 1) // 2``, summed over requests."""

    @property
    def new_tokens(self) -> int:
        return self.prefill_tokens + self.decode_seqs


@dataclass(frozen=True)
class StepWork(Batch):
    """A :class:`Batch` with each prefill request's chunk apart, which the measured step time
    needs to price every prefill chunk's attention over its own context (the engines' ``Batch``
    sums the cached tokens of all scheduled requests)."""

    prefill_chunks: tuple[tuple[int, int], ...] = ()
    """``(new tokens, tokens already in the KV cache before the step)`` of each prefill request,
    in scheduling order."""

    @property
    def prefill_context_tokens(self) -> int:
        """Tokens already in the KV cache of the step's prefill requests before the step (summed)."""
        return sum(cached for _, cached in self.prefill_chunks)

    @classmethod
    def of(cls, scheduled: Any) -> StepWork:
        """From ``(new tokens, tokens already in the KV cache, tokens not yet in it)`` of each
        scheduled request, as :func:`osbench.serve.run.batch_of` reads them."""
        prefill_tokens = decode_seqs = context = pairs = 0
        chunks = []
        count = 0
        for new, cached, outstanding in scheduled:
            count += 1
            if outstanding > 1:
                prefill_tokens += new
                chunks.append((int(new), int(cached)))
            else:
                decode_seqs += 1
            context += cached
            pairs += new * cached + new * (new + 1) // 2
        return cls(count, len(chunks), prefill_tokens, decode_seqs, context, pairs, tuple(chunks))


# ---------------------------------------------------------------------------- defaults

MFU = 0.5
"""Share of the peak dense FLOP/s the step's matrix products reach. An assumption, not a
measurement of this project (no GPU here): large BF16 GEMMs reach 60-70% of peak on Hopper and
Ampere, and a whole prefill step, with its smaller kernels and attention, about 40-55% (the
inference-sim simulator calibrates H100 prefill at 0.45, inference-sim PR #1710). Calibrate
against a real engine with :meth:`StepTime.linear` when one is at hand."""

MBU = 0.75
"""Share of the peak memory bandwidth a step's reads reach (model bandwidth utilisation). An
assumption: well-tuned CUDA serving stacks (vLLM, TensorRT-LLM) decode at 70-85% of peak HBM
bandwidth; with :data:`OVERHEAD` it makes a batch-1 decode of Llama-3-8B on an H100
``15.01 GB / (3.35 TB/s * 0.75) + 1 ms = 7.0 ms`` (143 tokens/s; the 15.01 GB are its
weights but the embedding table), the order of single-stream speeds reported for vLLM on
that GPU."""

ALLREDUCE_LATENCY = 8e-6
"""Seconds one all-reduce of tensor parallelism takes however small its message: vLLM's custom
all-reduce (captured in a CUDA graph) takes 4-12 us on 2 to 8 H100s for messages of up to 64k
elements in AIConfigurator's measured table (``custom_allreduce_perf.parquet``, ``vllm_graph``;
dataset ``aic-h100_sxm-custom-allreduce``)."""

OVERHEAD = 1e-3
"""Seconds per step that neither compute nor memory traffic explains: kernel launches, the
sampler, input preparation and scheduling left over after vLLM V1 overlaps them with the
GPU. An assumption of 1 ms (the CPU side of a V1 step with CUDA graphs is of that order)."""


# ---------------------------------------------------------------------------- the models


def _linear_seconds(c: tuple[float, ...], b: Batch) -> float:
    a, per_prefill_token, per_decode_seq, per_context_token = c
    return (
        a + per_prefill_token * b.prefill_tokens + per_decode_seq * b.decode_seqs + per_context_token * b.context_tokens
    )


def _power(x: float, n: int) -> float:
    """``x ** n`` by squaring, multiplication by multiplication (the native engine repeats
    exactly these products; a library ``pow`` may round differently)."""
    result = 1.0
    while n > 0:
        if n & 1:
            result *= x
        x *= x
        n >>= 1
    return result


def _roofline_work(c: tuple[float, ...], b: Batch) -> tuple[float, float, float, float, float]:
    """A step's work under the roofline's coefficients ``c``: ``(linear_flops, weight_bytes,
    attention_flops, kv_bytes, allreduce seconds)``, which :func:`_roofline_seconds` bounds by
    the peaks and :func:`_corrected_terms` weighs."""
    (
        _overhead,
        _peak_flops,
        _bandwidth,
        flops_per_token,
        flops_per_seq,
        flops_per_pair,
        dense_bytes,
        expert_bytes,
        experts,
        expert_miss,
        kv_bytes_per_token,
        allreduce_fixed,
        allreduce_per_token,
    ) = c
    new = b.prefill_tokens + b.decode_seqs
    # Linear layers: every new token through the active weights; logits for one token per sequence.
    linear_flops = flops_per_token * new + flops_per_seq * b.num_seqs
    # Weights read once per step; of an MoE's experts, those some token was routed to (expected
    # number, each token picking experts_per_token of them uniformly).
    touched = experts * (1.0 - _power(expert_miss, new))
    weight_bytes = dense_bytes + expert_bytes * touched
    # Attention: the causal query-key pairs; the KV cache of the context read, the new tokens' written.
    attention_flops = flops_per_pair * b.attention_pairs
    kv_bytes = kv_bytes_per_token * (b.context_tokens + new)
    # Tensor parallelism: two all-reduces of every new token's hidden state per layer.
    allreduce = allreduce_fixed + allreduce_per_token * new
    return linear_flops, weight_bytes, attention_flops, kv_bytes, allreduce


def _roofline_seconds(c: tuple[float, ...], b: Batch) -> float:
    overhead, peak_flops, bandwidth = c[:3]
    linear_flops, weight_bytes, attention_flops, kv_bytes, allreduce = _roofline_work(c, b)
    linear = max(linear_flops / peak_flops, weight_bytes / bandwidth)
    attention = max(attention_flops / peak_flops, kv_bytes / bandwidth)
    return overhead + linear + attention + allreduce


def _corrected_terms(c: tuple[float, ...], b: Batch) -> tuple[float, float, float, float, float, float]:
    """The ideal roofline's terms of a step, unmaxed (``c``: the roofline's coefficients at mfu
    = mbu = 1): ``(1, num_seqs, weight seconds, KV seconds, compute seconds, all-reduce
    seconds)``, which :func:`_corrected_seconds` weighs by the fitted corrections."""
    peak_flops, bandwidth = c[1:3]
    linear_flops, weight_bytes, attention_flops, kv_bytes, allreduce = _roofline_work(c, b)
    return (
        1.0,
        float(b.num_seqs),
        weight_bytes / bandwidth,
        kv_bytes / bandwidth,
        (linear_flops + attention_flops) / peak_flops,
        allreduce,
    )


def _corrected_seconds(c: tuple[float, ...], b: Batch) -> float:
    per_step, per_request, weight_factor, kv_factor, compute_factor, allreduce_factor = c[13:]
    _, seqs, weights, kv, flops, allreduce = _corrected_terms(c[:13], b)
    return (
        per_step
        + per_request * seqs
        + weight_factor * weights
        + kv_factor * kv
        + compute_factor * flops
        + allreduce_factor * allreduce
    )


CORRECTIONS = ("per_step", "per_request", "weight_factor", "kv_factor", "compute_factor", "allreduce_factor")
"""The coefficients a corrected roofline adds to the ideal roofline's (:meth:`StepTime.corrected`),
in order: seconds per step, seconds per scheduled request, and the factors on the ideal weight
reads, KV-cache traffic, compute and all-reduce times."""


def _measured_seconds(c: tuple[float, ...], b: Batch) -> float:  # StepTime.__call__ reads its tables
    raise ArgumentError("a measured step time is evaluated with its tables: StepTime.measured(...)")


_KINDS = {
    "linear": (_linear_seconds, 4),
    "roofline": (_roofline_seconds, 13),
    "corrected": (_corrected_seconds, 13 + len(CORRECTIONS)),
    "measured": (_measured_seconds, 1),
}


def _fraction(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0 < float(value) <= 1:
        raise ArgumentError(f"{name}={value!r} is not accepted: it must be a number in (0, 1]")
    return float(value)


def nonnegative_least_squares(a: np.ndarray, b: np.ndarray, caller: str) -> np.ndarray:
    """The ``x >= 0`` that minimises ``|a x - b|`` (``scipy.optimize.nnls`` on columns scaled to
    comparable size, then unscaled). ``caller`` names what needs scipy in the error when it is
    not installed: it is imported here, as only fitting needs it."""
    try:
        from scipy.optimize import nnls  # type: ignore[import-untyped]
    except ImportError:
        raise ArgumentError(
            f"{caller} solves with scipy, which is not installed: pip install 'osbench[measured]'"
        ) from None
    scale = np.maximum(np.abs(a).max(axis=0), 1e-300)
    x, _ = nnls(a / scale, b)
    return np.asarray(x / scale)


def _seconds(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0 <= float(value) < math.inf:
        raise ArgumentError(f"{name}={value!r} is not accepted: it must be a finite number >= 0 (seconds)")
    return float(value)


@dataclass(frozen=True)
class StepTime:
    """A step-time model: ``step_time(batch)`` is the step's duration in seconds.

    Build one with :meth:`linear` or :meth:`roofline`. ``kind`` and ``coefficients`` are
    what the native engine takes (:meth:`spec`); ``params`` records what they were computed
    from."""

    kind: str
    coefficients: tuple[float, ...]
    params: dict[str, Any] = field(default_factory=dict, compare=False)
    tables: Optional[MeasuredTables] = field(default=None, compare=False, repr=False)
    """The measured model's tables (:meth:`measured`); None for the other kinds."""

    def __post_init__(self) -> None:
        _checks.choice("kind", self.kind, _KINDS)
        if (self.kind == "measured") != (self.tables is not None):
            raise ArgumentError("tables is not accepted: a measured model has its tables, the other kinds none")
        if len(self.coefficients) != _KINDS[self.kind][1]:
            raise ArgumentError(
                f"coefficients is not accepted: a {self.kind} model has {_KINDS[self.kind][1]}, got {len(self.coefficients)}"
            )

    @classmethod
    def linear(cls, a: float, b_prefill_token: float, c_decode_seq: float, d_context_token: float) -> StepTime:
        """``a + b * prefill_tokens + c * decode_seqs + d * context_tokens`` seconds, for
        coefficients measured on a real engine (each finite and >= 0)."""
        c = (
            _seconds("a", a),
            _seconds("b_prefill_token", b_prefill_token),
            _seconds("c_decode_seq", c_decode_seq),
            _seconds("d_context_token", d_context_token),
        )
        return cls("linear", c, {"a": c[0], "b_prefill_token": c[1], "c_decode_seq": c[2], "d_context_token": c[3]})

    @classmethod
    def roofline(
        cls,
        model: Union[str, Model],
        gpu: Union[str, GPU],
        tp: Optional[int] = None,
        mfu: float = MFU,
        mbu: float = MBU,
        overhead: float = OVERHEAD,
    ) -> StepTime:
        """A roofline step time for ``model`` served on ``tp`` of ``gpu`` (presets by name,
        or :class:`~osbench.serve.Model` and :class:`~osbench.serve.GPU`; ``tp`` None: the
        model's own degree). Each GPU does ``1/tp`` of the work. The step is two kernels
        run one after the other, each bounded by its compute or its memory traffic::

            linear    = max(linear_flops / (peak * mfu), weight_bytes / (bandwidth * mbu))
            attention = max(attention_flops / (peak * mfu), kv_bytes / (bandwidth * mbu))
            allreduce = 2 * layers * (latency + 2 * (tp - 1) / tp * new * hidden * 2 / link)
            seconds   = overhead + linear + attention + allreduce

        with ``new = prefill_tokens + decode_seqs`` and, per GPU:

        - ``linear_flops = 2 * (active_parameters - embeddings - lm_head) * new
          + 2 * vocab * hidden * num_seqs``: every new token through the layers' weights, and
          one row of logits per sequence (vLLM computes logits for each request's last token
          only);
        - ``weight_bytes``: every weight read once per step (the embedding table aside: only
          the looked-up rows are read); for a mixture of experts, the experts some token was
          routed to, ``experts * (1 - (1 - experts_per_token / experts) ** new)`` per layer
          in expectation, so a small decode batch reads only a few experts;
        - ``attention_flops = 4 * layers * heads * head_dim * attention_pairs`` (QK^T and PV);
        - ``kv_bytes = kv_bytes_per_token * (context_tokens + new)``: the cached keys and
          values read, and those of the new tokens written;
        - of a model with sliding-window layers, only the full-attention layers' attention
          (``Model.full_attention_layers``, as ``kv_bytes_per_token`` counts them): a windowed
          layer's query reads at most ``sliding_window`` keys, which the roofline leaves out
          (the measured model reads the windowed kernels' own timings).

        - ``allreduce`` (``tp > 1``): after the attention and after the MLP of every layer, a ring
          all-reduce of the new tokens' bf16 hidden states (vLLM's ``RowParallelLinear`` with
          ``reduce_results``, ``tensor_model_parallel_all_reduce``), each GPU sending
          ``2 (tp - 1) / tp`` of the message over its link (``GPU.link_bandwidth``), plus
          :data:`ALLREDUCE_LATENCY` per all-reduce; and the query and key norms' all-reduces
          of one float32 a token (``Model.norm_allreduces``: MiniMax-M2's norms across heads).

        Left out: activation traffic and the overlap of the kernels. ``mfu``, ``mbu``: shares of the peaks reached (in (0, 1]);
        ``overhead``: seconds per step (see :data:`MFU`, :data:`MBU`, :data:`OVERHEAD`).
        """
        m, g = Model.preset(model), GPU.preset(gpu)
        tp = m.tp if tp is None else m.check_tp(tp)
        mfu, mbu = _fraction("mfu", mfu), _fraction("mbu", mbu)
        overhead = _seconds("overhead", overhead)
        size = m.dtype_bytes
        layer_weights = m.active_parameters - m.embedding_parameters - m.lm_head_parameters
        logits = m.vocab_size * m.hidden_size
        if m.experts > 1 and m.expert_dtype:  # experts in a dtype of their own (gpt-oss's MXFP4)
            expert_bytes = m.layers * m.expert_bytes / tp
            dense = m.parameters - m.embedding_parameters - m.layers * m.experts * m.mlp_parameters
            dense_bytes = float(dense * size) / tp
            experts, miss = float(m.experts), 1.0 - m.experts_per_token / m.experts
        elif m.experts > 1:
            expert_bytes = float(m.layers * m.mlp_parameters * size) / tp
            dense_bytes = float((m.parameters - m.embedding_parameters) * size) / tp - expert_bytes * m.experts
            experts, miss = float(m.experts), 1.0 - m.experts_per_token / m.experts
        else:
            expert_bytes, dense_bytes = 0.0, float((m.parameters - m.embedding_parameters) * size) / tp
            experts, miss = 0.0, 0.0
        coefficients = (
            overhead,
            g.peak_flops(m.dtype) * mfu,
            g.bandwidth * mbu,
            2.0 * layer_weights / tp,
            2.0 * logits / tp,
            4.0 * m.full_attention_layers * m.heads * m.head_dim / tp,
            dense_bytes,
            expert_bytes,
            experts,
            miss,
            float(m.kv_bytes_per_token(tp)),
            (2 + m.norm_allreduces) * m.layers * ALLREDUCE_LATENCY if tp > 1 else 0.0,
            2.0 * m.layers * (2.0 * (tp - 1) / tp) * (m.hidden_size * DTYPE_BYTES["bf16"]) / g.link_bandwidth
            + m.norm_allreduces * m.layers * (2.0 * (tp - 1) / tp) * 4 / g.link_bandwidth,  # float32 variances
        )
        params = {"model": m.name, "gpu": g.name, "tp": tp, "mfu": mfu, "mbu": mbu, "overhead": overhead}
        return cls("roofline", coefficients, params)

    @classmethod
    def corrected(
        cls,
        model: Union[str, Model],
        gpu: Union[str, GPU],
        tp: Optional[int] = None,
        /,
        **corrections: float,
    ) -> StepTime:
        """The ideal roofline (peaks as the datasheet gives them) with BLIS's corrections, its
        terms added rather than maxed::

            seconds = per_step + per_request * num_seqs + weight_factor * weight_bytes / bandwidth
                      + kv_factor * kv_bytes / bandwidth + compute_factor * flops / peak
                      + allreduce_factor * allreduce

        with the terms of :meth:`roofline`. The corrections (:data:`CORRECTIONS`, each finite
        and >= 0; 0 when not given) are what :meth:`fit` finds."""
        unknown = sorted(set(corrections) - set(CORRECTIONS))
        if unknown:
            raise ArgumentError(
                f"{unknown[0]}={corrections[unknown[0]]!r} is not accepted: the corrections are {', '.join(CORRECTIONS)}"
            )
        base = cls.roofline(model, gpu, tp, mfu=1.0, mbu=1.0, overhead=0.0)
        values = tuple(_seconds(name, corrections.get(name, 0.0)) for name in CORRECTIONS)
        params = {**base.params, **dict(zip(CORRECTIONS, values))}
        del params["mfu"], params["mbu"], params["overhead"]
        return cls("corrected", base.coefficients + values, params)

    def terms(self, batch: Batch) -> tuple[float, ...]:
        """A corrected roofline's six terms of ``batch`` before its corrections weigh them (the
        features :meth:`fit` regresses on)."""
        if self.kind != "corrected":
            raise ArgumentError(f"kind={self.kind!r} is not accepted: terms() are a corrected roofline's")
        return _corrected_terms(self.coefficients[:13], batch)

    @classmethod
    def fit(
        cls,
        model: Union[str, Model],
        gpu: Union[str, GPU],
        tp: Optional[int] = None,
        *,
        steps: Sequence[Batch],
        seconds: Sequence[float],
    ) -> StepTime:
        """The corrected roofline (:meth:`corrected`) of ``model`` on ``tp`` of ``gpu`` whose
        corrections, all >= 0, best reproduce the measured ``seconds`` of ``steps``: non-negative
        least squares on the relative errors (each step weighs alike, short or long), with
        ``scipy.optimize.nnls``. :mod:`osbench.serve.fit` gives it steps from the operator tables,
        from end-to-end points or from a vLLM ``benchmark_serving`` result, and reports its
        error on a held-out split."""
        y = np.asarray(seconds, dtype=np.float64)
        if len(steps) != len(y) or len(y) < len(CORRECTIONS) or not (np.isfinite(y).all() and (y > 0).all()):
            raise ArgumentError(
                f"seconds is not accepted: one finite time > 0 per step, and at least {len(CORRECTIONS)} steps "
                f"(got {len(y)} times for {len(steps)} steps)"
            )
        base = cls.corrected(model, gpu, tp)
        a = np.asarray([base.terms(b) for b in steps]) / y[:, None]
        x = nonnegative_least_squares(a, np.ones_like(y), "StepTime.fit")
        return cls.corrected(model, gpu, tp, **dict(zip(CORRECTIONS, (float(v) for v in x))))

    @classmethod
    def measured(
        cls,
        model: Union[str, Model],
        gpu: Union[str, GPU],
        tp: Optional[int] = None,
        engine: str = "vllm",
        mbu: float = MBU,
        host_step: Optional[float] = None,
        host_request: Optional[float] = None,
        cuda_graph_tokens: Optional[int] = None,
        mxfp4_moe: str = "triton",
    ) -> StepTime:
        """A step time composed of the kernels vLLM runs, each read from the measured tables of
        ``gpu`` (AIConfigurator's operator tables, :mod:`osbench.serve.kernels`), plus the
        host work per step and per request; the composition and every term's source are in
        :mod:`osbench.serve.measured`. ``engine``: the serving engine whose kernels and host
        loop are modelled (``"vllm"``); ``mbu``: the share of the datasheet bandwidth the
        few elementwise kernels not in the tables reach; ``host_step``: seconds of host work per
        step (default :data:`osbench.serve.measured.HOST_STEP` plus
        :data:`~osbench.serve.measured.HOST_PER_LAYER` per layer), ``host_request``: per
        scheduled request and step (default :data:`~osbench.serve.measured.HOST_PER_REQUEST`):
        BLIS's published constants; :func:`osbench.serve.validate.fit_host` fits both to
        measured runs. ``cuda_graph_tokens``: the largest step the server replays as a CUDA
        graph (its ``--max-cudagraph-capture-size``; default
        :data:`~osbench.serve.measured.CUDA_GRAPH_MAX_TOKENS`); ``mxfp4_moe``: the kernel of
        MXFP4 experts, ``"triton"`` or ``"marlin"`` (``VLLM_MXFP4_USE_MARLIN=1``;
        :data:`~osbench.serve.measured.MXFP4_MOE_KERNELS`).

        A GPU without tables, a model shape outside them (a weight, a head layout, an MoE
        shape not measured) or a ``tp`` without all-reduce tables is refused with the reason;
        a step of more tokens than the GEMM tables measure (32,768) is refused when it comes.
        Needs pyarrow (``pip install 'osbench[measured]'``) and the datasets."""
        _checks.choice("engine", engine, ("vllm",))
        m, g = Model.preset(model), GPU.preset(gpu)
        tp = m.tp if tp is None else m.check_tp(tp)
        mbu = _fraction("mbu", mbu)
        # BLIS's constants unless given (the per-layer one is per step once the model is known)
        default_step = composition.HOST_STEP + composition.HOST_PER_LAYER * m.layers
        step = default_step if host_step is None else _seconds("host_step", host_step)
        request = composition.HOST_PER_REQUEST if host_request is None else _seconds("host_request", host_request)
        t = kernels.tables(gpu if isinstance(gpu, str) else g.name)  # refused under the name the caller gave
        graph = composition.CUDA_GRAPH_MAX_TOKENS if cuda_graph_tokens is None else cuda_graph_tokens
        graph = _checks.non_negative_int("cuda_graph_tokens", graph, maximum=2**31 - 1)
        _checks.choice("mxfp4_moe", mxfp4_moe, composition.MXFP4_MOE_KERNELS)
        tables = composition.build(
            m, g, tp, mbu, host_step=step, host_request=request, cuda_graph_tokens=graph, mxfp4_moe=mxfp4_moe
        )
        params = {
            "model": m.name,
            "gpu": g.name,
            "tp": tp,
            "engine": engine,
            "tables": t.gpu,
            "vllm": t.version,
            "host_request": request,
            "cuda_graph_tokens": graph,
            "mxfp4_moe": mxfp4_moe,
        }
        return cls("measured", (tables.host_step,), params, tables)

    def __call__(self, batch: Batch) -> float:
        if self.tables is not None:
            chunks = getattr(batch, "prefill_chunks", None)
            if chunks is None:
                if batch.prefill_seqs:
                    raise ArgumentError(
                        f"batch={batch} is not accepted by the measured step time: it prices each prefill chunk "
                        "over its own context; give a StepWork (StepWork.of(work): the chunks apart)"
                    )
                chunks = ()
            return composition.seconds(self.tables, batch, chunks)
        return _KINDS[self.kind][0](self.coefficients, batch)

    def spec(self) -> tuple[str, tuple[float, ...]]:
        """``(kind, coefficients)``: all the native engine needs to compute the same times.
        ``"linear"``: ``(a, b_prefill_token, c_decode_seq, d_context_token)``.
        ``"roofline"``: ``(overhead, peak_flops, bandwidth, flops_per_token, flops_per_seq,
        flops_per_pair, dense_bytes, expert_bytes, experts, expert_miss,
        kv_bytes_per_token, allreduce_fixed, allreduce_per_token)``, peaks already scaled by mfu and mbu, used in the order of
        :func:`_roofline_seconds` (with ``_power``, ``x ** n`` by squaring)."""
        return self.kind, self.coefficients

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "coefficients": list(self.coefficients), "params": dict(self.params)}


def native_step_time(step_time: Any) -> dict[str, Any]:
    """``step_time`` as a native engine takes it, by the binding's keywords (``step_kind``,
    ``step_coefficients``, ``step_tables``): a :class:`StepTime`, whose arithmetic the core
    repeats bit for bit; anything else is refused (it runs on the reference engine)."""
    if not isinstance(step_time, StepTime):
        raise ArgumentTypeError(
            f"step_time={step_time!r:.60} is not accepted by the native engine: it takes a StepTime "
            "(StepTime.linear, roofline, corrected or measured); an arbitrary callable runs with engine='reference'"
        )
    kind, coefficients = step_time.spec()
    return {
        "step_kind": kind,
        "step_coefficients": list(coefficients),
        "step_tables": None if step_time.tables is None else step_time.tables.native,
    }


__all__ = [
    "ALLREDUCE_LATENCY",
    "CORRECTIONS",
    "MBU",
    "MFU",
    "OVERHEAD",
    "Batch",
    "StepTime",
    "StepWork",
    "nonnegative_least_squares",
]
