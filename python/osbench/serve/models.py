"""Model and GPU presets: what the step-time model and the KV-cache size are computed from.

A :class:`Model` holds the numbers of the model's Hugging Face ``config.json`` (layers,
hidden size, heads, KV heads, vocabulary...); its parameter counts are derived from them, and
the tests hold the derivation to the counts the model cards publish. A :class:`GPU` holds the
vendor datasheet's peak dense tensor FLOP/s, HBM bandwidth, and the memory ``nvidia-smi``
reports. :func:`num_blocks` sizes the KV cache the way vLLM does.

``MODELS`` and ``GPUS`` are the one table of each; :meth:`Model.preset` and :meth:`GPU.preset`
look names up in them. Adding a preset: one entry in the table (every number with its source in the
comment beside it), and a golden test in ``tests/serve/test_models.py`` against the published
figure (the parameter count on the model card, the datasheet line).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, replace
from typing import Any, Optional, Union

from osbench import _checks
from osbench._record import Record
from osbench.errors import ArgumentError

DTYPE_BYTES: dict[str, int] = {"bf16": 2, "fp16": 2, "fp8": 1}
"""Bytes per element of the data types weights and the KV cache are kept in."""

EXPERT_DTYPE_BITS: dict[str, float] = {"mxfp4": 4.25}
"""Bits per weight of the data types only an MoE's experts are kept in, beside
:data:`DTYPE_BYTES`: ``mxfp4`` (OCP microscaling FP4: 4-bit E2M1 values and one 8-bit E8M0 scale
per block of 32, as gpt-oss ships its experts)."""

GIB = 1 << 30
MIB = 1 << 20

FP8_SUFFIX = "-fp8"
"""``Model.preset("llama-3.1-70b-fp8")``: a preset with FP8 weights."""


@dataclass(frozen=True)
class Model(Record):
    """A decoder-only transformer, as its ``config.json`` describes it.

    MoE models (``experts > 1``) route each token through ``experts_per_token`` of the
    ``experts`` MLPs of each layer. ``tp`` is the tensor-parallel degree the preset is served
    with by default (the GPUs one replica spans), used when a function's ``tp`` is None.
    """

    name: str
    layers: int  # num_hidden_layers
    hidden_size: int  # hidden_size
    intermediate_size: int  # intermediate_size (of one expert for MoE)
    heads: int  # num_attention_heads
    kv_heads: int  # num_key_value_heads
    head_dim: int  # head_dim, or hidden_size // num_attention_heads
    vocab_size: int  # vocab_size
    max_model_len: int  # max_position_embeddings
    experts: int = 1  # num_local_experts
    experts_per_token: int = 1  # num_experts_per_tok
    qkv_bias: bool = False  # attention_bias (Qwen2 has biases on q, k, v)
    qk_norm: bool = False  # Qwen3: an RMSNorm over each head's query and key (q_norm, k_norm)
    qk_norm_across_heads: bool = False  # MiniMax-M2's qk_norm_type "per_layer": q_norm, k_norm over all heads
    tied_embeddings: bool = False  # tie_word_embeddings
    o_bias: bool = False  # gpt-oss's attention_bias also biases o_proj
    mlp_bias: bool = False  # gpt-oss: biases on each expert's gate_up/down projections and on the router
    attention_sinks: bool = False  # gpt-oss: one learned sink logit per head and layer
    sliding_window: int = 0  # sliding_window: tokens a windowed layer's query attends to (0: none)
    window_layers: int = 0  # layers of layer_types that are "sliding_attention" (the others attend to all)
    dtype: str = "bf16"  # the weights: torch_dtype, or "fp8" for an FP8 checkpoint (see fp8())
    fp8_block: bool = False  # FP8 scaled per 128 x 128 block (quantization_config weight_block_size)
    expert_dtype: str = ""  # an MoE's experts, where kept apart (EXPERT_DTYPE_BITS); "" as dtype
    kv_dtype: str = "bf16"  # the KV cache: vLLM's kv_cache_dtype "auto" keeps the activations' bf16
    tp: int = 1
    source: str = ""

    def __post_init__(self) -> None:
        for f in ("layers", "hidden_size", "intermediate_size", "heads", "kv_heads", "head_dim", "vocab_size"):
            _checks.positive_int(f, getattr(self, f), maximum=2**31 - 1)
        _checks.positive_int("max_model_len", self.max_model_len, maximum=2**31 - 1)
        _checks.positive_int("experts", self.experts, maximum=2**16)
        _checks.positive_int("experts_per_token", self.experts_per_token, maximum=self.experts)
        _checks.choice("dtype", self.dtype, DTYPE_BYTES)
        _checks.choice("kv_dtype", self.kv_dtype, DTYPE_BYTES)
        if self.expert_dtype:
            _checks.choice("expert_dtype", self.expert_dtype, EXPERT_DTYPE_BITS)
            if self.experts == 1:
                raise ArgumentError(f"expert_dtype={self.expert_dtype!r} is not accepted: the model has no experts")
        _checks.non_negative_int("sliding_window", self.sliding_window, maximum=2**31 - 1)
        _checks.non_negative_int("window_layers", self.window_layers, maximum=self.layers - 1)
        if (self.sliding_window == 0) != (self.window_layers == 0):
            raise ArgumentError(
                f"window_layers={self.window_layers!r} is not accepted with sliding_window={self.sliding_window!r}: "
                "a sliding window needs the layers that use it, and those layers need a window"
            )
        if self.heads % self.kv_heads:
            raise ArgumentError(f"kv_heads={self.kv_heads!r} is not accepted: it must divide heads={self.heads}")
        if self.qk_norm_across_heads and not self.qk_norm:
            raise ArgumentError(
                "qk_norm_across_heads=True is not accepted with qk_norm=False: it says how q and k are normed"
            )
        if self.fp8_block and self.dtype != "fp8":
            raise ArgumentError(f"fp8_block=True is not accepted with dtype={self.dtype!r}: block scales are FP8's")
        self.check_tp(_checks.positive_int("tp", self.tp, maximum=2**16))

    # ------------------------------------------------------------------ parameters

    @property
    def dtype_bytes(self) -> int:
        return DTYPE_BYTES[self.dtype]

    @property
    def attention_parameters(self) -> int:
        """Per layer: the q, k, v and o projections (and the q, k, v biases if any)."""
        q = self.heads * self.head_dim
        kv = self.kv_heads * self.head_dim
        bias = (q + 2 * kv if self.qkv_bias else 0) + (self.hidden_size if self.o_bias else 0)
        sinks = self.heads if self.attention_sinks else 0
        return self.hidden_size * q + 2 * self.hidden_size * kv + q * self.hidden_size + bias + sinks

    @property
    def mlp_parameters(self) -> int:
        """Per layer and expert: the gated MLP's gate, up and down projections (and their biases)."""
        bias = 2 * self.intermediate_size + self.hidden_size if self.mlp_bias else 0
        return 3 * self.hidden_size * self.intermediate_size + bias

    @property
    def router_parameters(self) -> int:
        """Per layer: the MoE router (none for a dense model)."""
        bias = self.experts if self.mlp_bias else 0
        return self.hidden_size * self.experts + bias if self.experts > 1 else 0

    @property
    def norm_parameters(self) -> int:
        """Per layer: the two RMSNorm weights (and the query and key norms: one weight per
        head dimension, shared by the heads (Qwen3), or per query and key element
        (:attr:`qk_norm_across_heads`))."""
        if self.qk_norm_across_heads:
            qk = (self.heads + self.kv_heads) * self.head_dim
        else:
            qk = 2 * self.head_dim if self.qk_norm else 0
        return 2 * self.hidden_size + qk

    @property
    def norm_allreduces(self) -> int:
        """All-reduces per layer the query and key norms need under tensor parallelism: two
        (the variances of q and of k, each over heads on every GPU: ``MiniMaxText01RMSNormTP``,
        ``vllm/model_executor/layers/mamba/linear_attn.py``) for :attr:`qk_norm_across_heads`,
        else none (a head's norm is on its GPU)."""
        return 2 if self.qk_norm_across_heads else 0

    @property
    def embedding_parameters(self) -> int:
        """The input embedding table."""
        return self.vocab_size * self.hidden_size

    @property
    def lm_head_parameters(self) -> int:
        """The output projection to the vocabulary (0 when tied to the embedding)."""
        return 0 if self.tied_embeddings else self.vocab_size * self.hidden_size

    @property
    def parameters(self) -> int:
        """All the weights: layers, embeddings, output projection, final norm."""
        layer = self.attention_parameters + self.experts * self.mlp_parameters + self.router_parameters
        layer += self.norm_parameters
        return self.layers * layer + self.embedding_parameters + self.lm_head_parameters + self.hidden_size

    @property
    def active_parameters(self) -> int:
        """The weights one token goes through (``experts_per_token`` experts of each MoE layer)."""
        idle = self.layers * (self.experts - self.experts_per_token) * self.mlp_parameters
        return self.parameters - idle

    # ------------------------------------------------------------------ per GPU

    def check_tp(self, tp: int) -> int:
        """``tp`` if vLLM can shard this model over that many GPUs: it must divide the query
        heads, and divide or be a multiple of the KV heads (which are then replicated)."""
        tp = _checks.positive_int("tp", tp, maximum=2**16)
        if self.heads % tp or (self.kv_heads % tp and tp % self.kv_heads):
            raise ArgumentError(
                f"tp={tp!r} is not accepted for {self.name}: it must divide heads={self.heads} and divide or be a "
                f"multiple of kv_heads={self.kv_heads}"
            )
        return tp

    def _tp(self, tp: Optional[int]) -> int:
        return self.tp if tp is None else self.check_tp(tp)

    def kv_heads_per_gpu(self, tp: Optional[int] = None) -> int:
        """KV heads each GPU holds: ``kv_heads / tp``, at least one (vLLM replicates KV heads
        when there are fewer than GPUs)."""
        return max(1, self.kv_heads // self._tp(tp))

    @property
    def full_attention_layers(self) -> int:
        """Layers whose queries attend to every token before them (all but the windowed ones)."""
        return self.layers - self.window_layers

    def kv_bytes_per_token(self, tp: Optional[int] = None) -> int:
        """KV-cache bytes one token takes on each GPU: a key and a value vector per KV head and
        layer, ``2 * layers * kv_heads * head_dim * dtype_bytes``, divided among ``tp`` GPUs
        (the model's own ``tp`` when None).

        With sliding-window layers, only the :attr:`full_attention_layers` count: vLLM's hybrid
        KV-cache manager gives the windowed layers a group of their own in the same pool, pages
        of the same size (``vllm/v1/core/kv_cache_utils.py: _get_kv_cache_groups_uniform_page_size``;
        gpt-oss: 18 full and 18 windowed layers, one tensor per pair), and a request's windowed
        group holds at most ``sliding_window / block_size + 1`` blocks, freed as the window
        moves on (``SlidingWindowManager``). Those few blocks per request are left out of the
        engine's one block table, so the pool here holds the full layers' tokens."""
        layers = self.full_attention_layers
        return 2 * layers * self.kv_heads_per_gpu(tp) * self.head_dim * DTYPE_BYTES[self.kv_dtype]

    @property
    def expert_bytes(self) -> float:
        """Bytes of one expert's weights in one layer (:attr:`expert_dtype`, else :attr:`dtype`)."""
        if self.expert_dtype:
            return self.mlp_parameters * EXPERT_DTYPE_BITS[self.expert_dtype] / 8
        return float(self.mlp_parameters * self.dtype_bytes)

    def weight_bytes(self, tp: Optional[int] = None) -> int:
        """Weight bytes on each GPU: ``parameters * dtype_bytes / tp`` (rounded up; the
        replicated norms are a rounding error), except that an FP8 checkpoint keeps its
        embedding table and output projection in BF16 (they are not quantised), and experts kept
        apart (:attr:`expert_dtype`) take :attr:`expert_bytes` each."""
        unquantised = self.embedding_parameters + self.lm_head_parameters if self.dtype == "fp8" else 0
        apart = self.layers * self.experts * self.mlp_parameters if self.expert_dtype else 0
        total = (self.parameters - unquantised - apart) * self.dtype_bytes + unquantised * DTYPE_BYTES["bf16"]
        if apart:
            total += math.ceil(self.layers * self.experts * self.expert_bytes)
        return -(-total // self._tp(tp))

    def fp8(self) -> Model:
        """This model with FP8 weights (an FP8 checkpoint such as ``nvidia/...-FP8``: per-tensor
        scaled FP8 weights and activations in the linear layers, vLLM's ``fp8`` GEMM path),
        named ``<name>-fp8``; the KV cache stays in ``kv_dtype``, and experts kept apart in
        their :attr:`expert_dtype`."""
        if self.dtype == "fp8":
            return self
        return replace(self, name=f"{self.name}{FP8_SUFFIX}", dtype="fp8")

    @staticmethod
    def preset(name: Union[str, Model]) -> Model:
        """The preset called ``name`` in ``MODELS`` (case-insensitive), or ``name`` itself if
        it is a Model; ``<preset>-fp8`` is that preset with FP8 weights (:meth:`fp8`)."""
        if isinstance(name, Model):
            return name
        key = name.lower() if isinstance(name, str) else name
        if isinstance(key, str) and key.endswith(FP8_SUFFIX) and key[: -len(FP8_SUFFIX)] in MODELS:
            return MODELS[key[: -len(FP8_SUFFIX)]].fp8()
        if isinstance(key, str) and key not in MODELS:
            raise ArgumentError(
                f"model={name!r} is not accepted: use one of {', '.join(MODELS)} "
                f"(or any of them with {FP8_SUFFIX!r} for FP8 weights)"
            )
        return MODELS[_checks.choice("model", key, MODELS)]

    def to_dict(self) -> dict[str, Any]:
        d = super().to_dict()
        d.update(parameters=self.parameters, active_parameters=self.active_parameters)
        return d


@dataclass(frozen=True)
class GPU(Record):
    """One accelerator: peak dense tensor FLOP/s per data type, memory bandwidth and size."""

    name: str
    bf16_flops: float  # dense (without sparsity) BF16/FP16 tensor-core FLOP/s
    fp8_flops: Optional[float]  # dense FP8 tensor-core FLOP/s (None: no FP8 tensor cores)
    bandwidth: float  # memory bytes/s
    memory_bytes: int  # as nvidia-smi reports memory.total
    source: str = ""
    link_bandwidth: float = 32e9  # bytes/s one way between two GPUs (NVLink, else PCIe 4.0 x16)

    def __post_init__(self) -> None:
        _checks.positive_float("bf16_flops", self.bf16_flops)
        if self.fp8_flops is not None:
            _checks.positive_float("fp8_flops", self.fp8_flops)
        _checks.positive_float("bandwidth", self.bandwidth)
        _checks.positive_int("memory_bytes", self.memory_bytes)
        _checks.positive_float("link_bandwidth", self.link_bandwidth)

    def peak_flops(self, dtype: str) -> float:
        """Dense tensor-core FLOP/s for ``dtype`` (FP16 runs at the BF16 rate)."""
        _checks.choice("dtype", dtype, DTYPE_BYTES)
        if dtype == "fp8":
            if self.fp8_flops is None:
                raise ArgumentError(f"dtype='fp8' is not accepted on {self.name}: it has no FP8 tensor cores")
            return self.fp8_flops
        return self.bf16_flops

    @staticmethod
    def preset(name: Union[str, GPU]) -> GPU:
        """The preset called ``name`` in ``GPUS`` (case-insensitive), or ``name`` itself if it
        is a GPU."""
        if isinstance(name, GPU):
            return name
        key = name.lower() if isinstance(name, str) else name
        return GPUS[_checks.choice("gpu", key, GPUS)]


# ---------------------------------------------------------------------------- the tables

_HF = "https://huggingface.co/{}/blob/main/config.json"

MODELS: dict[str, Model] = {
    # 8,030,261,248 parameters (model card: 8.03B)
    "llama-3-8b": Model(
        name="llama-3-8b",
        layers=32,
        hidden_size=4096,
        intermediate_size=14336,
        heads=32,
        kv_heads=8,
        head_dim=128,
        vocab_size=128256,
        max_model_len=8192,
        source=_HF.format("meta-llama/Meta-Llama-3-8B"),
    ),
    # 70,553,706,496 parameters (model card: 70.6B); 141 GB of bf16 weights, served on 4 GPUs
    "llama-3-70b": Model(
        name="llama-3-70b",
        layers=80,
        hidden_size=8192,
        intermediate_size=28672,
        heads=64,
        kv_heads=8,
        head_dim=128,
        vocab_size=128256,
        max_model_len=8192,
        tp=4,
        source=_HF.format("meta-llama/Meta-Llama-3-70B"),
    ),
    # 68,976,648,192 parameters (model card: 70B); the model splitwise-sim measured (crosscheck.py)
    "llama-2-70b": Model(
        name="llama-2-70b",
        layers=80,
        hidden_size=8192,
        intermediate_size=28672,
        heads=64,
        kv_heads=8,
        head_dim=128,
        vocab_size=32000,
        max_model_len=4096,
        tp=4,
        source=_HF.format("meta-llama/Llama-2-70b-hf"),
    ),
    # 7,615,616,512 parameters (model card: 7.61B, 6.53B without embeddings)
    "qwen2.5-7b": Model(
        name="qwen2.5-7b",
        layers=28,
        hidden_size=3584,
        intermediate_size=18944,
        heads=28,
        kv_heads=4,
        head_dim=128,
        vocab_size=152064,
        max_model_len=32768,
        qkv_bias=True,
        source=_HF.format("Qwen/Qwen2.5-7B"),
    ),
    # 46,702,792,704 parameters, 12,879,925,248 active (Mistral's announcement: 46.7B, 12.9B)
    "mixtral-8x7b": Model(
        name="mixtral-8x7b",
        layers=32,
        hidden_size=4096,
        intermediate_size=14336,
        heads=32,
        kv_heads=8,
        head_dim=128,
        vocab_size=32000,
        max_model_len=32768,
        experts=8,
        experts_per_token=2,
        tp=2,
        source=_HF.format("mistralai/Mixtral-8x7B-v0.1"),
    ),
    # 8,030,261,248 parameters (model card: 8B; the Llama-3-8B architecture with a 128k context:
    # max_position_embeddings 131072, rope_scaling "llama3"). The default model (DEFAULT_MODEL).
    "llama-3.1-8b": Model(
        name="llama-3.1-8b",
        layers=32,  # num_hidden_layers 32
        hidden_size=4096,  # hidden_size 4096
        intermediate_size=14336,  # intermediate_size 14336
        heads=32,  # num_attention_heads 32
        kv_heads=8,  # num_key_value_heads 8
        head_dim=128,  # head_dim 128
        vocab_size=128256,  # vocab_size 128256
        max_model_len=131072,  # max_position_embeddings 131072
        source=_HF.format("meta-llama/Llama-3.1-8B"),
    ),
    # 70,553,706,496 parameters (model card: 70B); 141 GB of bf16 weights, served on 4 GPUs
    "llama-3.1-70b": Model(
        name="llama-3.1-70b",
        layers=80,  # num_hidden_layers 80
        hidden_size=8192,  # hidden_size 8192
        intermediate_size=28672,  # intermediate_size 28672
        heads=64,  # num_attention_heads 64
        kv_heads=8,  # num_key_value_heads 8
        head_dim=128,  # head_dim 128
        vocab_size=128256,  # vocab_size 128256
        max_model_len=131072,  # max_position_embeddings 131072
        tp=4,
        source=_HF.format("meta-llama/Llama-3.1-70B"),
    ),
    # 14,768,307,200 parameters (model card: 14.8B, 13.2B non-embedding)
    "qwen3-14b": Model(
        name="qwen3-14b",
        layers=40,  # num_hidden_layers 40
        hidden_size=5120,  # hidden_size 5120
        intermediate_size=17408,  # intermediate_size 17408
        heads=40,  # num_attention_heads 40
        kv_heads=8,  # num_key_value_heads 8
        head_dim=128,  # head_dim 128
        vocab_size=151936,  # vocab_size 151936
        max_model_len=40960,  # max_position_embeddings 40960
        qk_norm=True,  # Qwen3Attention's q_norm, k_norm
        source=_HF.format("Qwen/Qwen3-14B"),
    ),
    # 32,762,123,264 parameters (model card: 32.8B, 31.2B non-embedding); served on 2 GPUs
    "qwen3-32b": Model(
        name="qwen3-32b",
        layers=64,  # num_hidden_layers 64
        hidden_size=5120,  # hidden_size 5120
        intermediate_size=25600,  # intermediate_size 25600
        heads=64,  # num_attention_heads 64
        kv_heads=8,  # num_key_value_heads 8
        head_dim=128,  # head_dim 128
        vocab_size=151936,  # vocab_size 151936
        max_model_len=40960,  # max_position_embeddings 40960
        qk_norm=True,
        tp=2,
        source=_HF.format("Qwen/Qwen3-32B"),
    ),
    # 30,532,122,624 parameters, 3,353,032,704 active (model card: 30.5B, 3.3B activated)
    "qwen3-30b-a3b": Model(
        name="qwen3-30b-a3b",
        layers=48,  # num_hidden_layers 48 (every layer MoE: decoder_sparse_step 1)
        hidden_size=2048,  # hidden_size 2048
        intermediate_size=768,  # moe_intermediate_size 768 (one expert)
        heads=32,  # num_attention_heads 32
        kv_heads=4,  # num_key_value_heads 4
        head_dim=128,  # head_dim 128
        vocab_size=151936,  # vocab_size 151936
        max_model_len=40960,  # max_position_embeddings 40960
        experts=128,  # num_experts 128
        experts_per_token=8,  # num_experts_per_tok 8
        qk_norm=True,
        source=_HF.format("Qwen/Qwen3-30B-A3B"),
    ),
    # 235,093,634,560 parameters, 22,190,763,520 active (model card: 235B, 22B activated); the
    # FP8 checkpoint (Qwen/Qwen3-235B-A22B-FP8, block-scaled) is this preset's fp8().
    "qwen3-235b-a22b": Model(
        name="qwen3-235b-a22b",
        layers=94,  # num_hidden_layers 94
        hidden_size=4096,  # hidden_size 4096
        intermediate_size=1536,  # moe_intermediate_size 1536
        heads=64,  # num_attention_heads 64
        kv_heads=4,  # num_key_value_heads 4
        head_dim=128,  # head_dim 128
        vocab_size=151936,  # vocab_size 151936
        max_model_len=40960,  # max_position_embeddings 40960
        experts=128,  # num_experts 128
        experts_per_token=8,  # num_experts_per_tok 8
        qk_norm=True,
        tp=4,
        source=_HF.format("Qwen/Qwen3-235B-A22B"),
    ),
    # 116,829,156,672 parameters, 5,131,494,720 active without the embedding table (model card:
    # 116.83B, 5.13B active); served as released: bf16 attention, embeddings and router, MXFP4
    # experts (quantization_config "mxfp4", every expert's gate_up and down projections).
    "gpt-oss-120b": Model(
        name="gpt-oss-120b",
        layers=36,  # num_hidden_layers 36
        hidden_size=2880,  # hidden_size 2880
        intermediate_size=2880,  # intermediate_size 2880 (one expert)
        heads=64,  # num_attention_heads 64
        kv_heads=8,  # num_key_value_heads 8
        head_dim=64,  # head_dim 64
        vocab_size=201088,  # vocab_size 201088
        max_model_len=131072,  # max_position_embeddings 131072
        experts=128,  # num_local_experts 128
        experts_per_token=4,  # num_experts_per_tok 4
        qkv_bias=True,  # attention_bias true: q, k, v and o
        o_bias=True,
        mlp_bias=True,  # GptOssExperts' gate_up_proj_bias, down_proj_bias; the router's bias
        attention_sinks=True,  # GptOssAttention.sinks
        sliding_window=128,  # sliding_window 128
        window_layers=18,  # layer_types: "sliding_attention" on the 18 even layers
        expert_dtype="mxfp4",  # 60.7 GiB of weights: one 80 GB GPU holds them
        source=_HF.format("openai/gpt-oss-120b"),
    ),
    # Read from the copy of its config.json in AIConfigurator's model_configs
    # (aic-core/src/aiconfigurator_core/model_configs/MiniMaxAI--MiniMax-M2.5_config.json). Served
    # as released: FP8 weights in 128 x 128 blocks, bf16 embeddings, LM head and router ("gate",
    # kept unconverted; vLLM runs it in float32, priced here as bf16). Left out of the count: the
    # 256 routing-bias values a layer (e_score_correction_bias) and the 3 MTP modules, which vLLM
    # loads only for speculative decoding.
    "minimax-m2.5": Model(
        name="minimax-m2.5",
        layers=62,  # num_hidden_layers 62
        hidden_size=3072,  # hidden_size 3072
        intermediate_size=1536,  # intermediate_size 1536 (one expert; no shared expert)
        heads=48,  # num_attention_heads 48
        kv_heads=8,  # num_key_value_heads 8
        head_dim=128,  # head_dim 128 (rotary on the first 64)
        vocab_size=200064,  # vocab_size 200064
        max_model_len=196608,  # max_position_embeddings 196608
        experts=256,  # num_local_experts 256
        experts_per_token=8,  # num_experts_per_tok 8
        qk_norm=True,  # use_qk_norm true
        qk_norm_across_heads=True,  # qk_norm_type "per_layer"
        dtype="fp8",  # quantization_config fp8, float8_e4m3fn
        fp8_block=True,  # weight_block_size [128, 128]
        tp=4,
        source=_HF.format("MiniMaxAI/MiniMax-M2.5"),
    ),
}
"""Every model preset by name (lower case)."""


def presets_fitting(tokens: int) -> list[str]:
    """The model presets whose context holds ``tokens`` (a request's prompt and output), in the
    table's order: what an error names when a request does not fit the model asked for."""
    tokens = _checks.non_negative_int("tokens", tokens)
    return [name for name, m in MODELS.items() if m.max_model_len >= tokens]


DEFAULT_MODEL = "llama-3.1-8b"
"""The model ``simulate`` and the command line serve when none is named: Llama-3.1-8B at its
128k context, which every request of the public traces fits."""

GPUS: dict[str, GPU] = {
    # NVIDIA A100 Tensor Core GPU datasheet, A100 80GB SXM: BF16 312 TFLOPS (624 with sparsity),
    # no FP8, HBM2e 2,039 GB/s; nvidia-smi memory.total 81920 MiB.
    "a100-80gb": GPU(
        "A100-SXM4-80GB", 312e12, None, 2039e9, 81920 * MIB, "NVIDIA A100 datasheet (SXM 80GB)", 300e9
    ),  # "NVLink: 600GB/s" (both directions)
    # NVIDIA H100 Tensor Core GPU datasheet, H100 SXM: BF16 989 TFLOPS and FP8 1,979 TFLOPS dense
    # (1,979 and 3,958 with sparsity), HBM3 3.35 TB/s; nvidia-smi memory.total 81559 MiB.
    "h100-sxm": GPU(
        "H100-SXM5-80GB", 989.4e12, 1978.9e12, 3.35e12, 81559 * MIB, "NVIDIA H100 datasheet (SXM)", 450e9
    ),  # "NVIDIA NVLink: 900GB/s" (both directions)
    # NVIDIA H200 Tensor Core GPU datasheet, H200 SXM: the H100's compute (BF16 989 TFLOPS, FP8
    # 1,979 TFLOPS dense), HBM3e 4.8 TB/s, 141 GB; nvidia-smi memory.total 143771 MiB.
    "h200": GPU(
        "H200-SXM-141GB", 989.4e12, 1978.9e12, 4.8e12, 143771 * MIB, "NVIDIA H200 datasheet (SXM)", 450e9
    ),  # "NVIDIA NVLink: 900GB/s"
    # NVIDIA L40S datasheet: BF16 362.05 TFLOPS and FP8 733 TFLOPS dense (733 and 1,466 with
    # sparsity), GDDR6 864 GB/s, 48 GB; nvidia-smi memory.total 46068 MiB.
    "l40s": GPU(
        "L40S-48GB", 362.05e12, 733e12, 864e9, 46068 * MIB, "NVIDIA L40S datasheet", 32e9
    ),  # "PCIe Gen4 x16: 64GB/s bidirectional", no NVLink
    # NVIDIA RTX PRO 6000 Blackwell Server Edition datasheet: "FP4 AI TOPS 4,000" (with sparsity),
    # so dense FP8 1,000 and BF16 500 TFLOPS (sparsity halves, each step FP4 -> FP8 -> BF16 halves);
    # GDDR7 96 GB, "memory bandwidth 1,597 GB/s"; memory.total 97,887 MiB (AIConfigurator's system
    # file rtx_pro_6000_server.yaml, from its measurement node). Its kernels are measured (kernels.py).
    "rtx-pro-6000": GPU(
        "RTX-PRO-6000-Blackwell-Server",
        500e12,
        1000e12,
        1597e9,
        97887 * MIB,
        "NVIDIA RTX PRO 6000 Blackwell Server Edition datasheet",
        64e9,  # "PCIe Gen 5 x16", no NVLink
    ),
    # NVIDIA RTX PRO 6000 Blackwell Workstation Edition datasheet: the same GB202 chip and tensor
    # rates ("AI TOPS 4,000"), GDDR7 96 GB at "1,792 GB/s"; memory.total as the server edition.
    "rtx-pro-6000-workstation": GPU(
        "RTX-PRO-6000-Blackwell-Workstation",
        500e12,
        1000e12,
        1792e9,
        97887 * MIB,
        "NVIDIA RTX PRO 6000 Blackwell Workstation Edition datasheet",
        64e9,  # "PCIe Gen 5 x16", no NVLink
    ),
    # NVIDIA Ada GPU architecture whitepaper, appendix table of the GeForce RTX 4090: "Peak FP16
    # Tensor TFLOPS with FP32 Accumulate 165.2" (BF16 the same) and "Peak FP8 Tensor TFLOPS with
    # FP32 Accumulate 330.3" (dense; vLLM accumulates in FP32), GDDR6X 24 GB at "1,008 GB/sec";
    # nvidia-smi memory.total 24564 MiB.
    "rtx-4090": GPU(
        "RTX-4090-24GB", 165.2e12, 330.3e12, 1008e9, 24564 * MIB, "NVIDIA Ada architecture whitepaper (RTX 4090)", 32e9
    ),  # PCIe 4.0 x16, no NVLink
    # NVIDIA HGX B200 datasheet (8 GPUs): "FP16/BF16 36 PFLOPS", "FP8 72 PFLOPS" (with sparsity),
    # "1.4 TB" HBM3e at "64 TB/s": per GPU dense BF16 2.25 PFLOPS, FP8 4.5 PFLOPS, 8 TB/s, 180 GB;
    # nvidia-smi memory.total 183359 MiB; "NVLink 1.8 TB/s" per GPU (both directions).
    "b200": GPU("B200-SXM-180GB", 2.25e15, 4.5e15, 8e12, 183359 * MIB, "NVIDIA HGX B200 datasheet", 900e9),
}
"""Every GPU preset by name (lower case). ``"h100"`` is an alias of ``"h100-sxm"`` (the same
object), the H100 meant when no form factor is named."""
GPUS["h100"] = GPUS["h100-sxm"]


# ---------------------------------------------------------------------------- KV-cache size

GPU_MEMORY_UTILIZATION = 0.92
"""vLLM 0.33.0's default share of GPU memory for one engine (``CacheConfig.gpu_memory_utilization``
in ``vllm/config/cache.py``; older releases used 0.9)."""

RESERVE_BYTES = 2 * GIB
"""GPU memory set aside for what is neither weights nor KV cache, per GPU. vLLM measures it
by profiling a forward pass of ``max_num_batched_tokens`` tokens (``determine_available_memory``
in ``vllm/v1/worker/gpu_worker.py``): the peak activation tensors, non-torch memory (NCCL,
attention-backend buffers) and the CUDA graphs' estimate. We cannot run that profile, so we
leave a fixed 2 GiB: vLLM's V1 log for Llama-3.1-8B on one 80 GB GPU shows 1.24 GiB of
activation peak and 0.35 GiB of non-torch memory, and CUDA keeps about 0.45 GiB of what
nvidia-smi reports (79.11 GiB total seen by CUDA against 79.65 GiB), together 2.0 GiB. Larger
``max_num_batched_tokens`` or models grow the activation share; pass ``reserve_bytes``."""


def num_blocks(
    model: Union[str, Model],
    gpu: Union[str, GPU],
    *,
    tp: Optional[int] = None,
    block_size: int = 16,
    gpu_memory_utilization: float = GPU_MEMORY_UTILIZATION,
    reserve_bytes: int = RESERVE_BYTES,
) -> int:
    """KV-cache blocks of ``block_size`` tokens that fit on each GPU, as vLLM sizes its pool
    (``num_gpu_blocks``, its null block included)::

        usable = ceil(memory_bytes * gpu_memory_utilization)
        kv = usable - weight_bytes(tp) - reserve_bytes
        blocks = kv // (block_size * kv_bytes_per_token(tp))

    ``tp``: GPUs the model is sharded over (each holds ``1/tp`` of the weights and of the KV
    heads; the model preset's own ``tp`` when None). Raises ValueError when nothing is left."""
    m, g = Model.preset(model), GPU.preset(gpu)
    block_size = _checks.positive_int("block_size", block_size, maximum=2**31 - 1)
    if (
        isinstance(gpu_memory_utilization, bool)
        or not isinstance(gpu_memory_utilization, numbers.Real)
        or not 0 < gpu_memory_utilization <= 1
    ):
        raise ArgumentError(f"gpu_memory_utilization={gpu_memory_utilization!r} is not accepted: it must be in (0, 1]")
    reserve_bytes = _checks.non_negative_int("reserve_bytes", reserve_bytes)
    usable = math.ceil(g.memory_bytes * float(gpu_memory_utilization))  # vLLM's request_memory()
    weights = m.weight_bytes(tp)
    kv = usable - weights - reserve_bytes
    blocks = kv // (block_size * m.kv_bytes_per_token(tp)) if kv > 0 else 0
    if blocks < 1:
        raise ArgumentError(
            f"model={m.name!r} does not fit on gpu={g.name!r} with tp={m._tp(tp)}: {weights / GIB:.2f} GiB of weights and "
            f"{reserve_bytes / GIB:.2f} GiB reserved leave no KV-cache block in {usable / GIB:.2f} GiB "
            f"({gpu_memory_utilization} of {g.memory_bytes / GIB:.2f} GiB); use more GPUs (tp) or a larger GPU"
        )
    return int(blocks)


__all__ = [
    "DEFAULT_MODEL",
    "DTYPE_BYTES",
    "EXPERT_DTYPE_BITS",
    "FP8_SUFFIX",
    "GPU",
    "GPUS",
    "GPU_MEMORY_UTILIZATION",
    "MODELS",
    "RESERVE_BYTES",
    "Model",
    "num_blocks",
    "presets_fitting",
]
