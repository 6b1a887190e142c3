"""SGLang's scheduler configuration: the options its scheduler reads, under SGLang's names, with
SGLang 0.5.23's defaults.

Each default cites where SGLang 0.5.23 sets it (paths inside the ``sglang/srt`` package). The
pool is given in tokens (``max_total_tokens``, SGLang's ``--max-total-tokens``): SGLang sizes it
from ``mem_fraction_static`` of the GPU memory left after the weights, which depends on the
model and the GPU; :func:`pool_tokens` does that arithmetic for a given KV footprint.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from osbench import _checks
from osbench.errors import ArgumentError
from osbench.serve.engines import ENGINES

POLICIES: tuple[str, ...] = ENGINES["sglang"].policies
"""Queue policies (the core's table, ``serve/sglang/mod.rs: POLICIES``) reproduced, by ``arg_groups/fields/schedule.py: schedule_policy``'s names
(``managers/schedule_policy.py: CacheAwarePolicy, CacheAgnosticPolicy``;
``shortest-prefill-first`` is marked experimental there). SGLang 0.5.23 also has ``priority``
and ``routing-key``; they are not reproduced here and are refused by name."""

_MIB = 1 << 20

# arg_groups/memory_hook.py: the GPU-dependent capacity defaults, (GPU memory below, in MiB,
# chunked_prefill_size), smallest first; at 160 GiB and above SGLang takes 16384.
_CHUNK_TIERS = ((20 * 1024, 2048), (35 * 1024, 4096), (60 * 1024, 4096), (90 * 1024, 8192), (160 * 1024, 8192))


def default_chunked_prefill_size(gpu_memory_bytes: int) -> int:
    """SGLang's ``chunked_prefill_size`` for a GPU of this much memory
    (``arg_groups/memory_hook.py``): 2048 below 20 GiB, 4096 below 60 GiB, 8192 below 160 GiB
    (A100 80 GB, H100, H200), else 16384."""
    memory = _checks.non_negative_int("gpu_memory_bytes", gpu_memory_bytes)
    for below, size in _CHUNK_TIERS:
        if memory < below * _MIB:
            return size
    return 16384


# arg_groups/memory_hook.py: the decode CUDA graph's largest batch by GPU memory (MiB below,
# (max_bs with tp < 4, with tp >= 4)), smallest first; at 160 GiB and above 512.
_DECODE_GRAPH_TIERS = ((20 * 1024, (8, 8)), (35 * 1024, (48, 160)), (60 * 1024, (32, 160)), (160 * 1024, (256, 512)))


def prefill_graph_sizes(max_bs: int) -> list[int]:
    """The token counts SGLang captures prefill CUDA graphs for, up to ``max_bs``
    (``arg_groups/cuda_graph_hook.py: generate_prefill_cuda_graph_batch_sizes``)."""
    sizes = [
        *range(4, 33, 4),
        *range(48, 257, 16),
        *range(288, 513, 32),
        *range(576, 1025, 64),
        *range(1280, 4097, 256),
        *range(4608, max_bs + 1, 512),
    ]
    return [s for s in sizes if s <= max_bs]


def default_mem_fraction_static(
    gpu_memory_bytes: int,
    chunked_prefill_size: int,
    *,
    tp: int = 1,
    max_prefill_tokens: int = 16384,
    max_running_requests: Optional[int] = None,
) -> float:
    """SGLang's ``mem_fraction_static`` when unset (``arg_groups/memory_hook.py:
    handle_gpu_memory_settings``), for a text model on CUDA with SGLang's default graphs
    (decode graphs, and the breakable prefill graph ``model_executor/cuda_graph_config.py:
    default_prefill_backend`` enables on CUDA), no data-parallel attention, no pipeline
    parallelism: with ``M`` the GPU's MiB, ``(M - reserved) / M`` to 3 decimals, where
    ``reserved = 512 + 1.5 x max(chunked_prefill_size, 2048) + tp / 8 x 1024 + 2 x
    decode max_bs + 8 x prefill graph sizes`` MiB (``max_prefill_tokens`` in place of the
    chunk without chunking; the prefill graph up to the chunk), at least 10 GiB above 60 GiB.
    The decode ``max_bs`` is the GPU tier's (:data:`_DECODE_GRAPH_TIERS`), capped at
    ``max_running_requests``."""
    memory = _checks.positive_int("gpu_memory_bytes", gpu_memory_bytes)
    tp = _checks.positive_int("tp", tp)
    gpu_mem = memory / _MIB  # utils: get_device_memory_capacity, in MiB
    max_bs = 512
    for below, (small, large) in _DECODE_GRAPH_TIERS:
        if gpu_mem < below:
            max_bs = small if tp < 4 else large
            break
    if max_running_requests is not None:
        max_bs = min(max_bs, max_running_requests)
    activation = max(chunked_prefill_size if chunked_prefill_size > 0 else max_prefill_tokens, 2048)
    reserved = 512 + activation * 1.5 + tp / 8 * 1024
    reserved += max_bs * 2 + len(prefill_graph_sizes(chunked_prefill_size)) * 8  # reserve_for_graph_mb
    if gpu_mem > 60 * 1024:
        reserved = max(reserved, 10 * 1024)
    return round((gpu_mem - reserved) / gpu_mem, 3)


def pool_tokens(free_gpu_bytes: int, mem_fraction_static: float, weight_bytes: int, kv_bytes_per_token: int) -> int:
    """Tokens of SGLang's KV pool: what ``mem_fraction_static`` of the GPU leaves after the
    weights, in tokens of ``kv_bytes_per_token`` (``mem_cache/kv_cache_configurator.py``
    reserves ``free * (1 - mem_fraction_static)`` for activations and the rest, weights
    aside, is the pool)."""
    free = _checks.positive_int("free_gpu_bytes", free_gpu_bytes)
    fraction = _checks.fraction("mem_fraction_static", mem_fraction_static)
    weights = _checks.non_negative_int("weight_bytes", weight_bytes)
    per_token = _checks.positive_int("kv_bytes_per_token", kv_bytes_per_token)
    rest = free * fraction - weights
    if rest < per_token:
        raise ArgumentError(
            f"mem_fraction_static={mem_fraction_static!r} is not accepted: it leaves no room for one KV token "
            f"after {weights} bytes of weights in {free} bytes"
        )
    return int(rest // per_token)


@dataclass(frozen=True)
class EngineConfig:
    """How SGLang's scheduler runs (``arg_groups/fields/schedule.py``), for one GPU with no
    data, pipeline or context parallelism, the radix cache on, and no speculative decoding."""

    max_total_tokens: int
    """Tokens of KV in the pool (``--max-total-tokens``; SGLang derives it from
    ``mem_fraction_static``, see :func:`pool_tokens`). No default: it depends on the GPU and model."""
    page_size: int = 1
    """Tokens per KV page (``--page-size``; unset means 1 for the default attention backends)."""
    schedule_policy: str = "fcfs"
    """The waiting queue's order (``--schedule-policy``, default ``fcfs``), one of :data:`POLICIES`."""
    max_running_requests: Optional[int] = None
    """Requests running at once (``--max-running-requests``). None: SGLang's own choice
    (``mem_cache/kv_cache_configurator.py: resolve_max_num_reqs``), see :attr:`running_cap`."""
    max_prefill_tokens: int = 16384
    """Token budget of one prefill batch (``--max-prefill-tokens``, default 16384)."""
    chunked_prefill_size: int = default_chunked_prefill_size(80 * 1024 * _MIB)
    """Largest chunk of a prompt in one prefill (``--chunked-prefill-size``); -1 disables
    chunking. The default depends on the GPU (:func:`default_chunked_prefill_size`); this is
    the 80 GB tier (A100 80 GB, H100)."""
    schedule_conservativeness: float = 1.0
    """Scales the initial ``new_token_ratio`` (``--schedule-conservativeness``, default 1.0)."""
    enable_mixed_chunk: bool = False
    """Run the decoding requests inside a prefill batch (``--enable-mixed-chunk``, off)."""
    context_len: int = 8192
    """The model's context length (Llama-3-8B's), which SGLang reads from the model's config;
    it sizes the default :attr:`running_cap`."""
    random_seed: int = 0
    """Seeds the ``random`` policy's shuffles (``--random-seed``; SGLang draws one when unset)."""

    def __post_init__(self) -> None:
        for name in ("max_total_tokens", "page_size", "max_prefill_tokens", "context_len"):
            object.__setattr__(self, name, _checks.positive_int(name, getattr(self, name), maximum=2**62))
        if self.max_total_tokens % self.page_size:
            raise ArgumentError(
                f"max_total_tokens={self.max_total_tokens} is not accepted: it must be a whole number of pages "
                f"of page_size={self.page_size} tokens"
            )
        if self.max_total_tokens < 2 * self.page_size:
            raise ArgumentError(
                f"max_total_tokens={self.max_total_tokens} is not accepted: it must hold at least two pages"
            )
        if self.max_running_requests is not None:
            object.__setattr__(
                self,
                "max_running_requests",
                _checks.positive_int("max_running_requests", self.max_running_requests, maximum=2**31),
            )
        chunk = self.chunked_prefill_size
        if isinstance(chunk, bool) or not isinstance(chunk, int) or not (chunk == -1 or chunk > 0):
            raise ArgumentError(
                f"chunked_prefill_size={chunk!r} is not accepted: it must be a positive integer, or -1 for no chunking"
            )
        if 0 < chunk < self.page_size:
            raise ArgumentError(
                f"chunked_prefill_size={chunk!r} is not accepted: a chunk must hold at least one page of "
                f"page_size={self.page_size} tokens (chunks end on page boundaries: a smaller one never admits a "
                "prompt longer than it)"
            )
        _checks.choice("schedule_policy", self.schedule_policy, POLICIES)
        ratio = _checks.positive_float("schedule_conservativeness", self.schedule_conservativeness)
        object.__setattr__(self, "schedule_conservativeness", ratio)
        object.__setattr__(self, "enable_mixed_chunk", _checks.flag("enable_mixed_chunk", self.enable_mixed_chunk))
        object.__setattr__(self, "random_seed", _checks.non_negative_int("random_seed", self.random_seed))

    @property
    def chunk_tokens(self) -> Optional[int]:
        """The chunk budget, None without chunking (``managers/scheduler.py: init_chunked_prefill``)."""
        return None if self.chunked_prefill_size <= 0 else self.chunked_prefill_size

    @property
    def is_mixed_chunk(self) -> bool:
        """Mixed chunks need chunking (``init_chunked_prefill``)."""
        return self.chunk_tokens is not None and self.enable_mixed_chunk

    @property
    def running_cap(self) -> int:
        """Requests that may run at once (``resolve_max_num_reqs``): the option capped at half
        the pool's tokens; unset, ``int(pool / context_len * 512)`` clamped to [2048, 4096], then
        the same cap."""
        tokens = self.max_total_tokens
        if self.max_running_requests is not None:
            return max(1, min(self.max_running_requests, tokens // 2))
        estimated = max(min(int(tokens / self.context_len * 512), 4096), 2048)
        return max(1, min(estimated, tokens // 2))

    @property
    def init_new_token_ratio(self) -> float:
        """``scheduler_components/new_token_ratio_tracker.py: NewTokenRatioTracker.from_config``:
        ``min(SGLANG_INIT_NEW_TOKEN_RATIO (0.7) x schedule_conservativeness, 1)``."""
        return min(0.7 * self.schedule_conservativeness, 1.0)

    @property
    def num_pages(self) -> int:
        return self.max_total_tokens // self.page_size

    @property
    def usable_blocks(self) -> int:
        """The pool in the units a router sees of a replica (:mod:`osbench.serve.cluster`): pages."""
        return self.num_pages

    @property
    def block_size(self) -> int:
        """Tokens per unit of :attr:`usable_blocks`: a page."""
        return self.page_size


def ceil_pages(tokens: int, page_size: int) -> int:
    """Pages holding ``tokens`` tokens."""
    return -(-tokens // page_size) if tokens > 0 else 0


__all__ = [
    "POLICIES",
    "EngineConfig",
    "ceil_pages",
    "default_chunked_prefill_size",
    "default_mem_fraction_static",
    "pool_tokens",
    "prefill_graph_sizes",
]
