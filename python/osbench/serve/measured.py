"""The measured step time: a vLLM step composed of the kernels it runs, each read from the GPU's
measured tables (:mod:`osbench.serve.kernels`), plus the host work between them.

What one step of vLLM's V1 engine runs on each of the ``tp`` GPUs (``GPUModelRunner.execute_model``
in ``vllm/v1/worker/gpu_model_runner.py``, the decoder layers of
``vllm/model_executor/models/llama.py`` / ``qwen3.py`` / ``qwen3_moe.py``), with ``T`` the step's
new tokens and ``S`` its scheduled requests:

1. per layer, the linear layers at ``m = T`` from the GEMM table: ``qkv_proj``
   (``QKVParallelLinear``, ``n = (heads / tp + 2 kv_heads_per_gpu) head_dim``, ``k = hidden``),
   ``o_proj`` (``RowParallelLinear``, ``n = hidden``, ``k = heads / tp * head_dim``), and the MLP:
   ``gate_up_proj`` (``MergedColumnParallelLinear``, ``n = 2 inter / tp``) and ``down_proj``
   (``RowParallelLinear``, ``k = inter / tp``), or for a mixture of experts the router
   (``ReplicatedLinear`` gate) and one ``FusedMoE`` call from the MoE table;
2. per layer, under tensor parallelism, the two all-reduces of ``T x hidden`` bf16 values that
   close ``o_proj`` and ``down_proj`` (``tensor_model_parallel_all_reduce``): vLLM's custom
   all-reduce up to 8 MiB, inside the CUDA graph when the step is captured (``T`` up to
   :data:`CUDA_GRAPH_MAX_TOKENS`), NCCL beyond;
3. per layer, attention (``FlashAttentionImpl.forward``, ``vllm/v1/attention/backends/
   flash_attn.py``): the prefill chunks from the context-attention table and the decoding
   requests from the generation-attention table (one varlen kernel in vLLM; two table reads
   here, summed, as AIConfigurator composes a mixed step); a model with sliding-window layers
   (gpt-oss: ``sliding_window`` on every other layer, ``vllm/model_executor/models/gpt_oss.py``)
   reads those layers from the tables' windowed rows, each query over at most the window's keys;
4. the layers' elementwise kernels, not in the tables (the fused residual-add RMSNorms, rotary
   embedding, SiLU-and-mul, Qwen3's per-head q/k norms) and the embedding lookup: their bytes
   at the datasheet bandwidth times :data:`~osbench.serve.steptime.MBU`;
5. the LM head (``LogitsProcessor``: logits of each request's last token only, ``m = S``,
   ``n = vocab / tp``, in bf16) with the gather of the vocabulary shards under tensor
   parallelism, and sampling (``vllm/v1/sample/sampler.py``: :data:`SAMPLER_PASSES` passes over
   the float32 logits at the bandwidth times MBU);
6. the host: :data:`HOST_STEP` per step, :data:`HOST_PER_LAYER` per step and layer and
   :data:`HOST_PER_REQUEST` per scheduled request (scheduling, input preparation, launching or
   replaying the CUDA graph, the gaps between a layer's kernels, output processing): BLIS's
   three published host terms.

Everything that depends only on ``T`` (1-2, 4) is tabulated once per token count, what depends
only on ``S`` (5, the per-request host work) once per request count; attention is read per
step from two grids (already multiplied by the layers), bilinear as :func:`kernels.bilinear`
states. The native engine receives these arrays once and repeats :func:`seconds` operation by
operation.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from osbench import _native
from osbench.errors import ArgumentError
from osbench.serve import kernels
from osbench.serve.models import DTYPE_BYTES, GPU, Model

HOST_STEP = 126e-6
"""Seconds of host work per step that the GPU does not hide: BLIS (inference-sim) fitted about
126 us per step to vLLM 0.15.1 on H100 (its "trained physics" step overhead), the one published
measurement of this term we have."""

HOST_PER_LAYER = 32e-6
"""Seconds per step and decoder layer that the isolated kernel timings leave out: BLIS's fitted
32 us per layer, vLLM 0.15.1 on H100 (its "trained physics" per-layer overhead). The tables time
each operator alone, in CUDA-graph replays (``collector/helper.py: benchmark_with_power``); in a
step the layer's dozen kernels follow one another, launched eagerly in the steps vLLM does not
capture (more than :data:`CUDA_GRAPH_MAX_TOKENS` tokens) and with the synchronisation around the
tensor-parallel all-reduces, and the gaps between them are this term. It is BLIS's published
constant, not fitted here; of the ways to account for the host work, it was chosen on the
fitting split of :mod:`osbench.serve.validate` alone (``FIT_SPLIT``: TPOT MAPE 16.5% without it,
5.7% with it)."""

HOST_PER_REQUEST = 4.4e-6
"""Seconds of host work per scheduled request and step (input preparation, output processing):
BLIS's fitted 4.4 us per request in the batch, vLLM 0.15.1 on H100."""

CUDA_GRAPH_MAX_TOKENS = 512
"""Steps of at most this many tokens replay a captured CUDA graph (vLLM's default largest
capture size, ``CompilationConfig.max_cudagraph_capture_size`` in ``vllm/config/compilation.py``);
larger ones run eagerly, and their all-reduces are the custom kernel's eager timings."""

SAMPLER_PASSES = 4
"""Passes over the float32 logits the sampler makes (the temperature, the softmax for top-p/top-k,
the sampled token, the log-probabilities left off): an assumption, a few microseconds a step."""


@dataclass(frozen=True, eq=False)
class AttentionTables:
    """The attention of one kind of layer: full causal (``window`` 0) or a sliding window of
    ``window`` tokens, its prefill (context) and decode (generation) grids per step, its layers
    already multiplied in, seconds; ``values`` row-major."""

    window: int
    context_rows: list[float]
    context_cols: list[float]
    context_values: list[float]
    generation_rows: list[float]
    generation_cols: list[float]
    generation_values: list[float]

    @classmethod
    def of(cls, t: kernels.Tables, model: Model, tp: int, window: int, layers: int) -> AttentionTables:
        """The grids of ``layers`` layers of ``model`` on ``tp`` GPUs with this ``window``."""
        h, kvh, hd = model.heads // tp, model.kv_heads_per_gpu(tp), model.head_dim
        context = kernels.attention_grid(t, "context", h, kvh, hd, model.kv_dtype, window)
        generation = kernels.attention_grid(t, "generation", h, kvh, hd, model.kv_dtype, window)
        return cls(
            window=window,
            context_rows=context.rows.tolist(),
            context_cols=context.cols.tolist(),
            context_values=(context.values * layers).ravel().tolist(),
            generation_rows=generation.rows.tolist(),
            generation_cols=generation.cols.tolist(),
            generation_values=(generation.values * layers).ravel().tolist(),
        )


@dataclass(frozen=True, eq=False)
class MeasuredTables:
    """What :func:`seconds` reads: per-token and per-request costs and the attention grids of
    each kind of layer, all seconds. The native engine takes them as they are."""

    host_step: float
    tokens: np.ndarray
    """``tokens[T]``: the cost of a step of ``T`` new tokens that depends on ``T`` alone."""
    seqs: np.ndarray
    """``seqs[S]``: the cost of ``S`` scheduled requests (LM head, sampling, host per request)."""
    attention: tuple[AttentionTables, ...]
    """The full-attention layers' grids, then the sliding-window layers' if the model has them."""

    @property
    def max_tokens(self) -> int:
        return len(self.tokens) - 1

    @functools.cached_property
    def native(self) -> Any:
        """The tables converted once into the core (``osbench._native.MeasuredTables``), which
        the native engine and :func:`native_seconds` read."""

        def array(v: list[float]) -> np.ndarray:
            return np.asarray(v, dtype=np.float64)

        groups = [
            (
                a.window,
                array(a.context_rows),
                array(a.context_cols),
                array(a.context_values),
                array(a.generation_rows),
                array(a.generation_cols),
                array(a.generation_values),
            )
            for a in self.attention
        ]
        return _native.MeasuredTables(self.host_step, self.tokens, self.seqs, groups)


def build(
    model: Model,
    gpu: GPU,
    tp: int,
    mbu: float,
    host_step: float,
    host_request: float,
    cuda_graph_tokens: int = CUDA_GRAPH_MAX_TOKENS,
    mxfp4_moe: str = "triton",
) -> MeasuredTables:
    """The tables of ``model`` on ``tp`` GPUs ``gpu`` (see the module's composition), with
    ``host_step`` seconds of host work per step and ``host_request`` per scheduled request; steps
    of at most ``cuda_graph_tokens`` tokens replay a CUDA graph; ``mxfp4_moe``: the kernel of
    MXFP4 experts (:data:`MXFP4_MOE_KERNELS`)."""
    t = kernels.tables(gpu.name)
    m = t.gemm[kernels.GEMM_DTYPES["bf16"]].m
    count = np.arange(1, int(m[-1]) + 1, dtype=np.float64)  # token (or request) counts 1..max
    h, kvh, hd = model.heads // tp, model.kv_heads_per_gpu(tp), model.head_dim
    hidden, act = model.hidden_size, DTYPE_BYTES["bf16"]
    # Block-scaled FP8 weights (Model.fp8_block) read the per-tensor FP8 table too: the
    # fp8_block rows are timed eagerly (collect_gemm.py: use_cuda_graph=False), a host floor of
    # 57-61 us at up to 16 tokens and 82-97 us to 3,072 that vLLM's CUDA graphs do not pay,
    # and where the GPU's work outweighs that floor the two tables agree (0.8-1.1x).
    gemm = model.dtype
    graph = count <= cuda_graph_tokens

    def linear(n: int, k: int, dtype: str = gemm) -> np.ndarray:
        return kernels.gemm_curve(t, dtype, n, k, count)

    layer = linear((h + 2 * kvh) * hd, hidden) + linear(hidden, h * hd)
    if model.experts > 1:
        layer += linear(model.experts, hidden, "bf16")  # the router stays in bf16
        layer += _moe(t, model, tp, mxfp4_moe, count)
        inter = model.experts_per_token * model.intermediate_size // tp  # activations per token
    else:
        inter = model.intermediate_size // tp
        layer += linear(2 * inter, hidden) + linear(hidden, inter)
    if tp > 1:
        layer += 2 * kernels.allreduce_curve(t, tp, count * hidden, graph)
        # The q/k norms' variances across heads: one float32 a token, priced as two bf16 elements.
        layer += model.norm_allreduces * kernels.allreduce_curve(t, tp, count * 2, graph)
    # Elementwise bytes per token and layer: two fused add+RMSNorms (read x and the residual,
    # write both), rotary on q and k (read, write), SiLU-and-mul (read 2 inter, write inter),
    # Qwen3's q/k norms (read, write).
    elementwise = 2 * 4 * hidden + 2 * 2 * (h + kvh) * hd + 3 * inter + (2 * 2 * (h + kvh) * hd if model.qk_norm else 0)
    bandwidth = gpu.bandwidth * mbu
    layer += count * elementwise * act / bandwidth
    tokens = model.layers * layer + count * 2 * hidden * act / bandwidth  # the embedding rows, read and written
    head = kernels.gemm_curve(t, "bf16", model.vocab_size // tp, hidden, count)
    if tp > 1:
        head += kernels.allreduce_curve(t, tp, count * (model.vocab_size // tp), graph)
    head += count * model.vocab_size * 4 * SAMPLER_PASSES / bandwidth + host_request * count
    kinds = [(0, model.full_attention_layers)]
    if model.window_layers:
        kinds.append((model.sliding_window, model.window_layers))
    return MeasuredTables(
        host_step=host_step,
        tokens=np.concatenate([[0.0], tokens]),
        seqs=np.concatenate([[0.0], head]),
        attention=tuple(AttentionTables.of(t, model, tp, window, layers) for window, layers in kinds),
    )


MOE_DTYPES = {"mxfp4": "w4a16_mxfp4"}
"""Experts kept apart (``Model.expert_dtype``) -> the MoE table's ``moe_dtype``: MXFP4 weights
with bf16 activations, vLLM's gpt-oss MXFP4 MoE on Hopper (the table times its Triton kernel,
``vllm_gptossmxfp4moe_triton``)."""


MXFP4_MOE_KERNELS = ("triton", "marlin")
"""vLLM's kernels for MXFP4 experts with bf16 activations on Hopper: ``triton`` (the default
where the ``triton_kernels`` package is installed, and what the tables time on gpt-oss's shape)
and ``marlin`` (``VLLM_MXFP4_USE_MARLIN=1``, ``vllm/model_executor/layers/quantization/mxfp4.py``),
carried from the one shape the tables time it on (:func:`kernels.moe_carried_curve`)."""


def _moe(t: kernels.Tables, model: Model, tp: int, mxfp4_moe: str, count: np.ndarray) -> np.ndarray:
    """One MoE layer's fused-MoE call at each token count."""
    key = _moe_key(t, model, tp)
    if mxfp4_moe == "marlin":
        if model.expert_dtype != "mxfp4":
            raise ArgumentError(f"mxfp4_moe='marlin' is not accepted for {model.name}: its experts are not MXFP4")
        source = (MOE_DTYPES["mxfp4"], *kernels.MARLIN_MXFP4_SHAPE, tp)
        return kernels.moe_carried_curve(t, source, key[1:], count)
    return kernels.moe_curve(t, key, count)


def moe_measured(model: Model, gpu: GPU, tp: int) -> bool:
    """Whether the MoE table of ``gpu`` times ``model``'s expert layer at ``moe_tp = tp`` (a
    dense model: True)."""
    if model.experts == 1:
        return True
    t = kernels.tables(gpu.name)
    return _moe_key(t, model, tp) in t.moe


def _moe_key(t: kernels.Tables, model: Model, tp: int) -> tuple[Any, ...]:
    """The MoE table's key for the model: its dtype (experts kept apart: :data:`MOE_DTYPES`; a
    block-scaled FP8 checkpoint (:attr:`Model.fp8_block`): the block-scaled table; another FP8
    one: the block-scaled table where the shape is measured, as Qwen's FP8 releases are
    block-scaled, else per-tensor)."""
    shape = (model.hidden_size, model.intermediate_size, model.experts_per_token, model.experts, tp)
    if model.expert_dtype:
        return (MOE_DTYPES[model.expert_dtype], *shape)
    if model.dtype != "fp8":
        return ("bfloat16", *shape)
    block = ("fp8_block", *shape)
    return block if block in t.moe or model.fp8_block else ("fp8", *shape)


def seconds(t: MeasuredTables, b: Any, chunks: Sequence[tuple[int, int]]) -> float:
    """The step's seconds for the :class:`~osbench.serve.Batch` ``b``, whose prefill requests
    are ``chunks``: ``(new tokens, tokens cached before the step)`` each, in scheduling order
    (:attr:`StepWork.prefill_chunks <osbench.serve.steptime.StepWork.prefill_chunks>`; the
    decoding requests have the rest of ``b.context_tokens``). The fixed order of operations the
    native engine repeats:

    - decode attention at ``(decode_seqs, mean cached tokens)`` from the generation table;
    - each prefill chunk of ``n`` new tokens over ``c`` cached ones, priced over its own context
      ``s = c + n``: the context table at ``(P, s)`` (``P`` the step's prefill chunks, run in one
      varlen kernel: a batch of ``P``) over ``P``, times the chunk's causal query-key pairs
      ``n c + n (n + 1) / 2`` over those of a whole prompt of ``s`` tokens, ``s (s + 1) / 2``
      (the table measures whole prompts, no cached prefix; a chunk computes only its own rows
      of the attention matrix, each over every key before it: FlashAttention's causal mask
      aligned to the bottom right, ``flash_attn_varlen_func`` in ``vllm/v1/attention/backends/
      flash_attn.py``). ``P`` equal chunks without a cache cost the table's ``(P, s)`` exactly.
    """
    new = b.prefill_tokens + b.decode_seqs
    if new > len(t.tokens) - 1:
        raise ArgumentError(
            f"tokens={new} is not accepted by the measured step time: its GEMM tables measure up to "
            f"{len(t.tokens) - 1} tokens per step; use max_num_batched_tokens of at most that"
        )
    prefill_context = 0
    chunk_tokens = 0
    for n, c in chunks:
        prefill_context += c
        chunk_tokens += n
    if len(chunks) != b.prefill_seqs or chunk_tokens != b.prefill_tokens or prefill_context > b.context_tokens:
        raise ArgumentError(
            f"prefill_chunks={tuple(chunks)} is not accepted for {b}: one (new, cached) per prefill request, the "
            "new tokens summing to prefill_tokens, the cached ones at most context_tokens"
        )
    total = t.host_step + t.tokens[new] + t.seqs[b.num_seqs]
    decode_context = b.context_tokens - prefill_context
    p = len(chunks)
    decode_mean = decode_context / b.decode_seqs if b.decode_seqs > 0 else 0.0  # one mean for every kind of layer
    for a in t.attention:
        w = a.window
        if b.decode_seqs > 0:
            gen = (a.generation_rows, a.generation_cols, a.generation_values)
            total += _read(*gen, b.decode_seqs, decode_mean, kernels.decode_work, w)
        for n, c in chunks:
            s = c + n
            pairs = kernels.prefill_pairs(n, c, w)
            attention = _read(a.context_rows, a.context_cols, a.context_values, p, float(s), kernels.prefill_work, w)
            total += attention * (pairs / (p * kernels.prefill_work(float(s), w)))
    return float(total)


STEP_COLUMNS = ("num_seqs", "prefill_seqs", "prefill_tokens", "decode_seqs", "context_tokens", "attention_pairs")
"""The :class:`~osbench.serve.Batch` fields, as the native step-time calls take them."""


def step_columns(steps: Sequence[Any], names: Sequence[str] = STEP_COLUMNS) -> dict[str, np.ndarray]:
    """The steps' fields as int64 arrays, by name."""
    return {name: np.asarray([getattr(w, name) for w in steps], dtype=np.int64) for name in names}


def native_seconds(t: MeasuredTables, steps: Sequence[Any]) -> np.ndarray:
    """:func:`seconds` of each step (a :class:`~osbench.serve.steptime.StepWork`), computed by
    the native core from the same tables: bit-equal, and one call for many steps."""
    chunks = [getattr(w, "prefill_chunks", ()) for w in steps]
    offsets = np.cumsum([0] + [len(c) for c in chunks], dtype=np.int64)
    flat = [pair for c in chunks for pair in c]
    return t.native.seconds(
        **step_columns(steps),
        chunk_offsets=offsets,
        chunk_new=np.asarray([n for n, _ in flat], dtype=np.int64),
        chunk_context=np.asarray([c for _, c in flat], dtype=np.int64),
    )


def _read(
    rows: list[float], cols: list[float], values: list[float], batch: int, s: float, work: Any, window: int
) -> float:
    """A grid at ``(batch, s)``: ``s`` below the first length read there; beyond the last, the
    last length's value times ``work(s, window) / work(last, window)``."""
    last = cols[len(cols) - 1]
    if s < cols[0]:
        s = cols[0]
    if s > last:
        return kernels.bilinear(rows, cols, values, float(batch), last) * (work(s, window) / work(last, window))
    return kernels.bilinear(rows, cols, values, float(batch), s)


__all__ = [
    "CUDA_GRAPH_MAX_TOKENS",
    "HOST_PER_LAYER",
    "HOST_PER_REQUEST",
    "HOST_STEP",
    "MOE_DTYPES",
    "MXFP4_MOE_KERNELS",
    "SAMPLER_PASSES",
    "STEP_COLUMNS",
    "AttentionTables",
    "MeasuredTables",
    "build",
    "moe_measured",
    "native_seconds",
    "seconds",
    "step_columns",
]
