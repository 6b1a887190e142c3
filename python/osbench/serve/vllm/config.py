"""The serving engine's configuration: what vLLM's scheduler reads, with vLLM 0.33.0's defaults.

One place for every default: the reference engine, the native engine and the command line all
read them from :class:`EngineConfig`. Each default cites where vLLM 0.33.0 sets it (paths are
inside the ``vllm`` package).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Optional

from osbench import _checks, _native
from osbench.errors import ArgumentError, ArgumentTypeError
from osbench.serve.vllm import tiers as kv_tiers
from osbench.serve.vllm.swap import LINKS, PREEMPTIONS, Swap

PREDICTIONS: tuple[str, ...] = ("exact", "noisy", "bucketed", "given")
"""How ``sjf`` and ``srpt`` learn output lengths (:mod:`osbench.serve.vllm.prediction`)."""

POLICIES: tuple[str, ...] = tuple(_native.SERVE_POLICIES)
"""Scheduling policies, as ``vllm/v1/core/sched/request_queue.py: SchedulingPolicy`` names them
(declared once, in the native engine's table)."""

_GIB = 1 << 30

# engine/arg_utils.py: EngineArgs.get_batch_defaults, the OPENAI_API_SERVER column: (GPU memory
# at least, max_num_batched_tokens, max_num_seqs, GPUs the tier leaves out), largest first. The
# H100 tier leaves out the A100 (larger batches lower its throughput, vLLM PR #17885) and the
# GB10 (which vLLM tells by its compute capability 12.1; here by name).
_SERVER_BATCH_TIERS = (
    (160 * _GIB, 16384, 1024, ()),
    (70 * _GIB, 8192, 1024, ("a100", "gb10")),
    (0, 2048, 256, ()),
)


def server_batch_defaults(gpu_memory_bytes: int, gpu_name: str = "") -> tuple[int, int]:
    """vLLM's default ``(max_num_batched_tokens, max_num_seqs)`` for an online server on a GPU
    with this much memory: 16384 and 1024 from 160 GiB (B200), 8192 and 1024 from 70 GiB (H100,
    H200), else 2048 and 256 (and for any A100 or GB10)."""
    memory = _checks.non_negative_int("gpu_memory_bytes", gpu_memory_bytes)
    for least, batched_tokens, seqs, left_out in _SERVER_BATCH_TIERS:
        if memory >= least and not any(name in gpu_name.lower() for name in left_out):
            return batched_tokens, seqs
    raise AssertionError("the last tier takes any memory")  # pragma: no cover


_H100_BATCHED_TOKENS, _H100_SEQS = server_batch_defaults(80 * _GIB, "h100")


@dataclass(frozen=True)
class EngineConfig:
    """How the engine runs: the KV pool, the step's token budget, the scheduling policy.

    ``num_blocks`` is vLLM's ``num_gpu_blocks``: block 0 is the null block, which vLLM's block
    pool sets aside and never hands out (``vllm/v1/core/block_pool.py: BlockPool.__init__``), so
    requests share ``num_blocks - 1`` blocks of ``block_size`` tokens.
    """

    num_blocks: int
    """KV cache blocks in the pool, the null block included. vLLM sizes it from the GPU memory
    left after the weights (``cache_config.num_gpu_blocks``); there is no default."""
    block_size: int = 16
    """Tokens per KV block: ``config/cache.py: CacheConfig.DEFAULT_BLOCK_SIZE``."""
    max_num_batched_tokens: int = _H100_BATCHED_TOKENS
    """The step's token budget. vLLM's online-server default depends on the GPU
    (:func:`server_batch_defaults`); this is the H100/H200 tier."""
    max_num_seqs: int = _H100_SEQS
    """Requests running at once. vLLM's online-server default depends on the GPU; this is the
    H100/H200 tier of :func:`server_batch_defaults`."""
    max_model_len: int = 8192
    """Longest context (prompt + output). vLLM takes it from the model's config; 8192 is
    ``config/scheduler.py: SchedulerConfig.default_factory``'s fallback (and Llama-3-8B's)."""
    enable_chunked_prefill: bool = True
    """Split prompts across steps: ``config/scheduler.py: SchedulerConfig.enable_chunked_prefill``
    (on for every decoder-only model, ``engine/arg_utils.py``)."""
    long_prefill_token_threshold: int = 0
    """Cap on one request's new tokens per step, 0 for none:
    ``config/scheduler.py: SchedulerConfig.long_prefill_token_threshold``."""
    enable_prefix_caching: bool = True
    """Reuse cached KV blocks of equal prefixes: ``config/cache.py: CacheConfig.enable_prefix_caching``."""
    policy: str = "fcfs"
    """The scheduling policy: vLLM's ``"fcfs"`` or ``"priority"`` (``config/scheduler.py:
    SchedulerConfig.policy``), or ``"sjf"``, ``"srpt"``, ``"mlfq"``, which vLLM does not have
    (:mod:`osbench.serve.vllm.policy`)."""
    watermark: float = 0.0
    """Fraction of the blocks kept free when admitting a waiting request while others run:
    ``config/scheduler.py: SchedulerConfig.watermark`` (0 disables it)."""
    scheduler_reserve_full_isl: bool = True
    """Admit a waiting request only if its whole sequence fits in the free blocks, not just its
    first chunk: ``config/scheduler.py: SchedulerConfig.scheduler_reserve_full_isl``."""
    aging: float = 0.0
    """``priority`` only: priority a request gains per second of waiting since it reached the
    engine (lecture section 2.7); 0, vLLM's priority exactly, has none."""
    mlfq_levels: int = 4
    """``mlfq`` only: the number of levels (1 to 64)."""
    mlfq_quantum: int = 64
    """``mlfq`` only: tokens of attained service (output tokens) level 0 holds before demotion."""
    mlfq_growth: int = 2
    """``mlfq`` only: each level holds this many times the quantum of the one above (1: equal
    quanta)."""
    mlfq_boost: int = 0
    """``mlfq`` only: every this many engine steps all requests return to level 0 (0: never)."""
    prediction: str = "exact"
    """``sjf``/``srpt`` only: how output lengths are predicted (:data:`~osbench.serve.vllm.prediction.PREDICTIONS`):
    ``"exact"``, ``"noisy"`` (true length times ``exp(N(0, prediction_sigma**2))``, lecture
    section 2.6), ``"bucketed"`` (the midpoint of the length's class of ``prediction_bucket``
    tokens) or ``"given"`` (the requests' ``predicted_output_len``)."""
    prediction_sigma: float = 1.0
    """``prediction="noisy"``: the sigma of the lognormal error."""
    prediction_bucket: int = 128
    """``prediction="bucketed"``: the width of a length class, in tokens."""
    prediction_seed: int = 0
    """``prediction="noisy"``: the seed of the error's draws."""
    preemption: str = "recompute"
    """How a preempted request's KV is kept: ``"recompute"`` (its blocks freed and its progress
    reset, vLLM v1's only way: ``core/sched/scheduler.py: Scheduler._preempt_request``) or
    ``"swap"`` (copied to host memory and back, vLLM v0's ``preemption_mode="swap"``, which v1
    does not have: :mod:`osbench.serve.vllm.swap`)."""
    swap_space: float = 4.0
    """``swap`` only: host memory for swapped KV blocks, GiB per GPU: vLLM v0's ``--swap-space``
    (``config.py: CacheConfig.swap_space``, 4 by default); a full host pool recomputes."""
    link: str = "pcie5"
    """``swap`` only: the host link the copies cross, ``pcie5``, ``pcie4`` or ``nvlink-c2c``
    (:data:`osbench.serve.vllm.swap.LINKS`, with their sources)."""
    swap_bandwidth: Optional[float] = None
    """``swap`` only: bytes per second each way, instead of the link's rated figure (``inf``:
    the copies take no time)."""
    kv_block_bytes: int = 0
    """Bytes one KV block takes on one GPU (``block_size`` tokens of the model's KV over its
    tensor-parallel degree); :func:`osbench.serve.simulate` sets it from the model, and
    ``preemption="swap"`` and ``kv_tiers`` need it."""
    kv_tiers: tuple[kv_tiers.KvTier, ...] = ()
    """KV tiers below the prefix cache, fastest first (:class:`~osbench.serve.KvTier`, or
    ``GIB:MEDIUM:POLICY`` strings such as ``64:pcie5:lru``): host memory and SSD holding what
    the GPU evicts, each evicting by a policy of :mod:`osbench.cache`, which vLLM does not
    have (:mod:`osbench.serve.vllm.tiers`); none by default."""
    block_flops: float = 1.0
    """``kv_tiers`` only: FLOPs to recompute a request's first KV block, the cost a cost-aware
    tier policy weighs; :func:`osbench.serve.simulate` sets it from the model."""
    block_flops_step: float = 0.0
    """``kv_tiers`` only: FLOPs each later block adds to that (its attention to the blocks
    before); :func:`osbench.serve.simulate` sets it from the model."""

    def __post_init__(self) -> None:
        for name in ("num_blocks", "block_size", "max_num_batched_tokens", "max_num_seqs", "max_model_len"):
            object.__setattr__(self, name, _checks.positive_int(name, getattr(self, name), maximum=2**62))
        if self.num_blocks < 2:
            raise ArgumentError(
                f"num_blocks={self.num_blocks} is not accepted: it must be at least 2 (block 0 is vLLM's null block)"
            )
        object.__setattr__(
            self,
            "long_prefill_token_threshold",
            _checks.non_negative_int("long_prefill_token_threshold", self.long_prefill_token_threshold),
        )
        for name in ("enable_chunked_prefill", "enable_prefix_caching", "scheduler_reserve_full_isl"):
            object.__setattr__(self, name, _checks.flag(name, getattr(self, name)))
        _checks.choice("policy", self.policy, POLICIES)
        object.__setattr__(self, "watermark", _checks.fraction("watermark", self.watermark))
        object.__setattr__(self, "aging", _checks.real("aging", self.aging, minimum=0.0))
        object.__setattr__(self, "mlfq_levels", _checks.positive_int("mlfq_levels", self.mlfq_levels, maximum=64))
        for name in ("mlfq_quantum", "mlfq_growth", "prediction_bucket"):
            object.__setattr__(self, name, _checks.positive_int(name, getattr(self, name), maximum=2**31))
        for name in ("mlfq_boost", "prediction_seed"):
            object.__setattr__(self, name, _checks.non_negative_int(name, getattr(self, name)))
        if self.mlfq_boost > 2**62:
            raise ArgumentError(f"mlfq_boost={self.mlfq_boost} is not accepted: it must be at most 2**62 steps")
        _checks.choice("prediction", self.prediction, PREDICTIONS)
        object.__setattr__(
            self, "prediction_sigma", _checks.real("prediction_sigma", self.prediction_sigma, minimum=0.0)
        )
        _checks.choice("preemption", self.preemption, PREEMPTIONS)
        object.__setattr__(self, "swap_space", _checks.real("swap_space", self.swap_space, minimum=0.0))
        _checks.choice("link", self.link, LINKS)
        if self.swap_bandwidth is not None:
            bandwidth = self.swap_bandwidth
            if isinstance(bandwidth, bool) or not isinstance(bandwidth, numbers.Real):
                raise ArgumentTypeError(
                    f"swap_bandwidth={bandwidth!r} is not accepted: it must be a number of bytes per second, or None"
                )
            if math.isnan(bandwidth) or bandwidth < 1:
                raise ArgumentError(
                    f"swap_bandwidth={bandwidth!r} is not accepted: it must be a number of bytes per second >= 1 "
                    "(inf: copies take no time), or None for the link's"
                )
            object.__setattr__(self, "swap_bandwidth", float(bandwidth))
        object.__setattr__(self, "kv_block_bytes", _checks.non_negative_int("kv_block_bytes", self.kv_block_bytes))
        if self.kv_block_bytes > 2**62:
            raise ArgumentError(f"kv_block_bytes={self.kv_block_bytes} is not accepted: it must be at most 2**62")
        object.__setattr__(self, "kv_tiers", kv_tiers.checked(self.kv_tiers, self.kv_block_bytes))
        object.__setattr__(self, "block_flops", _checks.real("block_flops", self.block_flops, minimum=0.0, above=True))
        object.__setattr__(
            self, "block_flops_step", _checks.real("block_flops_step", self.block_flops_step, minimum=0.0)
        )
        if self.preemption == "swap" and self.kv_block_bytes == 0:
            raise ArgumentError(
                "kv_block_bytes=0 is not accepted with preemption='swap': the host pool and the copies are counted in "
                "bytes; name a model (simulate sets it from the model) or give kv_block_bytes"
            )
        # The checks of config/scheduler.py: SchedulerConfig.verify_max_model_len.
        if self.max_num_batched_tokens < self.max_num_seqs:
            raise ArgumentError(
                f"max_num_batched_tokens={self.max_num_batched_tokens} is not accepted: "
                f"it must be at least max_num_seqs={self.max_num_seqs}"
            )
        if not self.enable_chunked_prefill and self.max_num_batched_tokens < self.max_model_len:
            raise ArgumentError(
                f"max_num_batched_tokens={self.max_num_batched_tokens} is not accepted without chunked prefill: "
                f"it must be at least max_model_len={self.max_model_len}, so that every prompt fits in one step"
            )
        if self.long_prefill_token_threshold > self.max_model_len:
            raise ArgumentError(
                f"long_prefill_token_threshold={self.long_prefill_token_threshold} is not accepted: "
                f"it must be at most max_model_len={self.max_model_len}"
            )

    @property
    def swap(self) -> Optional[Swap]:
        """Preemption by swap, configured; None with ``preemption="recompute"``."""
        if self.preemption != "swap":
            return None
        return Swap.of(self.swap_space, self.kv_block_bytes, self.link, self.swap_bandwidth)

    @property
    def usable_blocks(self) -> int:
        """Blocks requests can hold: all but the null block."""
        return self.num_blocks - 1

    @property
    def watermark_blocks(self) -> int:
        """Blocks the watermark keeps free: ``int(watermark * num_blocks)``, as
        ``vllm/v1/core/kv_cache_manager.py: KVCacheManager.__init__`` rounds it."""
        return int(self.watermark * self.num_blocks)
