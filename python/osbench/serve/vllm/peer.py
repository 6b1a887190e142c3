"""The real vLLM 0.33.0 scheduler, driven like osbench's engine: the fidelity peer.

``run(requests, config, step_time)`` builds vLLM's own ``Scheduler`` (with its
``KVCacheManager`` and ``BlockPool``) from the same :class:`EngineConfig`, feeds it the same
requests on the same clock, and plays the model: after each ``schedule()`` it hands back a
``ModelRunnerOutput`` with one sampled token for every request whose tokens are all computed, so
requests stop at ``output_len`` (``check_stop``). The result is the :class:`EngineRun` that
:func:`osbench.serve.reference.run` returns with ``record=True``, to be compared array for array.

Prompts become token ids that carry exactly the content :meth:`Requests.prompt_block_keys`
describes: a full prompt block with key ``k`` is the tokens ``[k, 1, 2, ..., block_size - 1]``
(equal keys at equal positions give equal tokens), while the trailing partial block and the
output tokens are negative ids unique to the request and position.

vLLM is an optional peer, like ``libcachesim`` elsewhere. Only the Python sources of the
scheduler and its KV cache manager are used, unpacked from the vLLM wheel into
``$OSBENCH_PEERS_DIR/vllm-0.33.0`` (default ``~/.cache/osbench/peers``) by ``make vllm-peer``
(``python -m osbench.serve.vllm.peer fetch``, :mod:`osbench.serve.peers.fetch`); no vLLM code is
part of osbench. The modules they import that need a GPU stack (torch, CUDA kernels, the model
runner, KV connectors, metrics, multimodal inputs) are inert placeholders of the peer sandbox
(:mod:`osbench.serve.peers.sandbox`), with a working stand-in for the few names the scheduler's
path really uses (:data:`_STAND_INS`). This module is the driver: a
:class:`~osbench.serve.drive.Stepper` over vLLM's scheduler, run by the engine loop every
engine shares (:func:`osbench.serve.drive.drive`).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Optional

from osbench.errors import ArgumentError
from osbench.serve.drive import Output, Planned, drive
from osbench.serve.peers.fetch import Wheel, peers_dir
from osbench.serve.peers.sandbox import Sandbox
from osbench.serve.requests import Requests
from osbench.serve.run import Concurrency, EngineRun, Recorder, StepTimeModel, check_concurrency
from osbench.serve.steptime import StepWork
from osbench.serve.vllm.checks import check_requests
from osbench.serve.vllm.config import EngineConfig

VLLM_VERSION = "0.33.0"

SOURCES = (
    "vllm/utils/hashing.py",
    "vllm/utils/math_utils.py",
    "vllm/v1/core/block_pool.py",
    "vllm/v1/core/kv_cache_coordinator.py",
    "vllm/v1/core/kv_cache_manager.py",
    "vllm/v1/core/kv_cache_utils.py",
    "vllm/v1/core/sched/interface.py",
    "vllm/v1/core/sched/output.py",
    "vllm/v1/core/sched/request_queue.py",
    "vllm/v1/core/sched/scheduler.py",
    "vllm/v1/core/sched/utils.py",
    "vllm/v1/core/single_type_kv_cache_manager.py",
    "vllm/v1/kv_cache_interface.py",
    "vllm/v1/kv_cache_spec_registry.py",
    "vllm/v1/request.py",
)
"""The vLLM source files the peer runs; every other ``vllm`` module is a placeholder."""

_PACKAGES = ("vllm", "vllm.utils", "vllm.v1", "vllm.v1.core", "vllm.v1.core.sched")
"""Packages of the real modules, created empty (their ``__init__`` would import the world)."""

_THIRD_PARTY = ("torch", "cbor2")
"""Libraries the real modules import but do not use on the scheduler's path."""

_WHEEL = Wheel(
    "vllm",
    VLLM_VERSION,
    SOURCES,
    ("--only-binary=:all:", "--platform", "manylinux_2_28_x86_64", "--python-version", "3.12"),
)
"""Any wheel of the release has the same Python sources; this one installs on the most machines."""

__all__ = ["SOURCES", "VLLM_VERSION", "fetch", "missing_reason", "peers_dir", "run", "sources_dir"]


def sources_dir() -> Path:
    """The folder holding the vLLM sources (``vllm/...`` inside it)."""
    return _WHEEL.folder()


def missing_reason() -> Optional[str]:
    """Why the peer cannot run here, or ``None`` when it can."""
    return _WHEEL.missing_reason("vLLM", "vllm-peer")


def fetch(wheel: Optional[str] = None) -> Path:
    """Unpack :data:`SOURCES` from the vLLM wheel into :func:`sources_dir`, downloading the wheel
    from PyPI (``pip download vllm==0.33.0 --no-deps``) unless ``wheel`` names one on disk. Does
    nothing when they are already there; the folder appears whole or not at all."""
    return _WHEEL.fetch(wheel)


# --------------------------------------------------------------------------- the sandbox


class _NoGrammar:
    @staticmethod
    def from_sampling_params(sampling_params: Any) -> None:
        return None


_STAND_INS: dict[str, dict[str, Any]] = {
    # Request.__init__ reads the prompt's length through it.
    "vllm.utils": {"length_from_prompt_token_ids_or_embeds": lambda token_ids, embeds: len(token_ids)},
    # Read-only views of a request's token lists: check_stop reads the last output token.
    "vllm.v1.utils": {
        "ConstantList": lambda items: items,
        "record_function_or_nullcontext": lambda name: contextlib.nullcontext(),
    },
    # No request asks for structured output: it has no grammar to wait for.
    "vllm.v1.structured_output.request": {"StructuredOutputRequest": _NoGrammar},
}
"""Working stand-ins for the few left-out names the scheduler's path really uses."""


class _Vllm:
    """The loaded vLLM modules, kept aside and swapped into ``sys.modules`` only while in use."""

    def __init__(self) -> None:
        reason = missing_reason()
        if not _WHEEL.present():
            raise FileNotFoundError(reason)
        if reason is not None:
            raise RuntimeError(reason)
        self.sandbox = Sandbox(sources_dir(), SOURCES, _PACKAGES, _THIRD_PARTY, _STAND_INS)
        self.active = self.sandbox.active
        with self.active():
            from vllm.utils.hashing import sha256  # type: ignore[import-not-found]
            from vllm.v1 import kv_cache_interface, request  # type: ignore[import-not-found]
            from vllm.v1.core import kv_cache_utils  # type: ignore[import-not-found]
            from vllm.v1.core.sched import scheduler  # type: ignore[import-not-found]

            kv_cache_utils.init_none_hash(sha256)
        self.sha256 = sha256
        self.kv_cache_utils = kv_cache_utils
        self.scheduler = scheduler
        self.kv_cache_interface = kv_cache_interface
        self.request = request


_loaded: dict[Path, _Vllm] = {}


def _vllm() -> _Vllm:
    """The vLLM modules from :func:`sources_dir`, loaded once."""
    folder = sources_dir()
    if folder not in _loaded:
        _loaded[folder] = _Vllm()
    return _loaded[folder]


class _Namespace:
    """A stand-in for one of vLLM's config objects: only the attributes given; reading any
    other is an error, so a scheduler that reads a setting we did not model fails loudly."""

    def __init__(self, label: str, **attributes: Any) -> None:
        self.__dict__["_label"] = label
        self.__dict__.update(attributes)

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(f"the vLLM peer does not model {self._label}.{name}")


def _scheduler(v: _Vllm, config: EngineConfig) -> Any:
    """vLLM's Scheduler for a one-group full-attention model with this configuration, set up
    as ``EngineCore`` sets it up for synchronous scheduling, no speculative decoding, no KV
    connector and no statistics."""
    scheduler_config = _Namespace(
        "scheduler_config",
        max_num_seqs=config.max_num_seqs,
        max_num_active_seqs=None,
        max_num_batched_tokens=config.max_num_batched_tokens,
        max_num_scheduled_tokens=None,
        long_prefill_token_threshold=config.long_prefill_token_threshold,
        long_prefill_token_threshold_adaptive=False,
        enable_chunked_prefill=config.enable_chunked_prefill,
        policy=config.policy,
        watermark=config.watermark,
        scheduler_reserve_full_isl=config.scheduler_reserve_full_isl,
        prefill_schedule_interval=1,
    )
    vllm_config = _Namespace(
        "vllm_config",
        scheduler_config=scheduler_config,
        cache_config=_Namespace(
            "cache_config",
            num_gpu_blocks=config.num_blocks,
            block_size=config.block_size,
            enable_prefix_caching=config.enable_prefix_caching,
            enable_mamba_shared_prefix_checkpoint=False,
            mamba_cache_mode="none",
        ),
        model_config=_Namespace(
            "model_config",
            max_model_len=config.max_model_len,
            runner_type="generate",
            is_diffusion=False,
            is_encoder_decoder=False,
            uses_mrope=False,
            supports_multimodal_inputs=False,
            return_sampling_mask=False,
        ),
        parallel_config=_Namespace(
            "parallel_config",
            data_parallel_index=0,
            data_parallel_size=1,
            decode_context_parallel_size=1,
            prefill_context_parallel_size=1,
            pipeline_parallel_size=1,
        ),
        observability_config=_Namespace(
            "observability_config",
            per_request_spec_decode_metrics="none",
            kv_cache_metrics=False,
            enable_mfu_metrics=False,
            enable_logging_iteration_details=False,
        ),
        ec_manager_config=_Namespace("ec_manager_config", get_encoder_cache_manager_obj=lambda: None),
        aux_output_config=_Namespace("aux_output_config", enabled=False),
        lora_config=None,
        kv_events_config=None,
        kv_transfer_config=None,
        ec_transfer_config=None,
        speculative_config=None,
        is_mm_encoder_only=False,
        num_speculative_tokens=0,
        num_lookahead_tokens=0,
        num_prefill_lookahead_tokens=0,
        num_hash_lookahead_tokens=0,
        max_in_flight_tokens=None,
        max_concurrent_batches=1,
        use_v2_model_runner=False,
    )
    kvi = v.kv_cache_interface
    spec = kvi.FullAttentionSpec(block_size=config.block_size, num_kv_heads=1, head_size=1, dtype=None)
    kv_cache_config = kvi.KVCacheConfig(
        num_blocks=config.num_blocks, kv_cache_tensors=[], kv_cache_groups=[kvi.KVCacheGroupSpec(["layers"], spec)]
    )
    grammars = _Namespace("structured_output_manager", accept_tokens=lambda request, token_ids: True)
    return v.scheduler.Scheduler(vllm_config, kv_cache_config, grammars, block_size=config.block_size)


def _private_token(index: int, position: int) -> int:
    """A token id no other request and position has (all content keys are >= 0)."""
    return -(1 + (index << 32) + position)


def _prompt_tokens(index: int, prompt_len: int, keys: Sequence[int], block_size: int) -> list[int]:
    tokens: list[int] = []
    for key in keys:
        tokens.append(key)
        tokens.extend(range(1, block_size))
    tokens.extend(_private_token(index, position) for position in range(len(tokens), prompt_len))
    return tokens


class Stepper:
    """vLLM's scheduler as :func:`osbench.serve.drive.drive` runs it. Prompts become token ids
    that carry exactly the content of :meth:`Requests.prompt_block_keys`; the model is played:
    after each ``schedule()`` it hands back a ``ModelRunnerOutput`` with one sampled token for
    every request whose tokens are all computed."""

    def __init__(self, v: _Vllm, requests: Requests, config: EngineConfig, priority: Any) -> None:
        self.v, self.requests, self.config, self.priority = v, requests, config, priority
        block_size = config.block_size
        self.keys, self.offsets = requests.prompt_block_keys(block_size)
        self.scheduler = scheduler = _scheduler(v, config)
        self.pool = scheduler.kv_cache_manager.block_pool
        self.hasher = (
            v.kv_cache_utils.get_request_block_hasher(block_size, v.sha256) if config.enable_prefix_caching else None
        )
        self.preempted: list[Any] = []
        preempt = scheduler._preempt_request

        def logged_preempt(request: Any, *args: Any, **kwargs: Any) -> None:
            self.preempted.append(request)
            preempt(request, *args, **kwargs)

        scheduler._preempt_request = logged_preempt  # to learn the order of preemptions
        self.index_of: dict[str, int] = {}
        self.produced = [0] * len(requests)
        self.output: Any = None
        self.sampled: list[list[int]] = []
        self.high: dict[str, int] = {}
        """The most tokens each request's KV has held (its tokens computed again are counted
        from it, as the reference counts them)."""

    def add_request(self, i: int, arrival: float) -> None:
        v, requests = self.v, self.requests
        own_keys = self.keys[self.offsets[i] : self.offsets[i + 1]].tolist()
        sampling = _Namespace(
            "sampling_params",
            max_tokens=int(requests.output_len[i]),
            min_tokens=0,
            eos_token_id=None,
            stop_token_ids=None,
            repetition_detection=None,
            skip_reading_prefix_cache=None,
            num_logprobs=None,
            extra_args=None,
        )
        request_id = f"{i:012d}"  # ids order as indices: they break priority ties
        request = v.request.Request(
            request_id,
            _prompt_tokens(i, int(requests.prompt_len[i]), own_keys, self.config.block_size),
            sampling,
            None,
            arrival_time=arrival,
            priority=int(self.priority[i]),
            block_hasher=self.hasher,
        )
        self.index_of[request_id] = i
        self.scheduler.add_request(request)

    def has_unfinished_requests(self) -> bool:
        return bool(self.scheduler.get_num_unfinished_requests())

    def schedule(self) -> Planned:
        scheduler, index_of = self.scheduler, self.index_of
        running_before = {r.request_id for r in scheduler.running}
        self.preempted.clear()
        self.output = scheduler.schedule()
        num_scheduled = self.output.num_scheduled_tokens
        work = []
        self.sampled = []
        recomputed = 0
        for request_id, tokens in num_scheduled.items():
            request = scheduler.requests[request_id]
            done = request.num_computed_tokens
            cached = done - tokens
            work.append((tokens, cached, request.num_tokens - cached))
            high = self.high.get(request_id, 0)
            recomputed += max(min(done, high) - cached, 0)
            self.high[request_id] = max(high, done)
            if request.num_computed_tokens >= request.num_tokens:  # the model samples a token
                self.sampled.append([_private_token(index_of[request_id], request.num_tokens)])
            else:
                self.sampled.append([])
        admitted = [
            (index_of[rid], scheduler.requests[rid].num_computed_tokens - tokens)
            for rid, tokens in num_scheduled.items()
            if rid not in running_before
        ]
        free_blocks = self.pool.get_num_free_blocks()
        return Planned(
            StepWork.of(work),
            [(index_of[rid], tokens) for rid, tokens in num_scheduled.items()],
            [index_of[r.request_id] for r in self.preempted],
            admitted,
            len(scheduler.waiting),
            self.config.usable_blocks - free_blocks,
            free_blocks,
            recomputed_tokens=recomputed,
        )

    def update_from_output(self) -> Output:
        scheduler, sampled = self.scheduler, self.sampled
        ids = list(self.output.num_scheduled_tokens)
        model_output = _Namespace(
            "model_runner_output",
            req_ids=ids,
            req_id_to_index={rid: k for k, rid in enumerate(ids)},
            sampled_token_ids=sampled,
            logprobs=None,
            prompt_logprobs_dict={},
            prompt_token_id_logprobs_dict={},
            pooler_output=[],
            num_nans_in_logits=None,
            kv_connector_output=None,
            ec_connector_output=None,
            cudagraph_stats=None,
            aux_output_connector_output=None,
        )
        scheduler.update_from_output(self.output, model_output)
        tokens = []
        for rid, tokens_out in zip(ids, sampled):
            if tokens_out:
                i = self.index_of[rid]
                self.produced[i] += 1
                done = rid not in scheduler.requests  # a finished request is dropped at once
                tokens.append((i, self.produced[i] == 1, done))
        return Output(tokens, sum(done for _, _, done in tokens), len(self.pool.cached_block_hash_to_block))


VLLM_POLICIES = ("fcfs", "priority")
"""The policies vLLM's ``SchedulingPolicy`` has (the others are osbench's, checked against the
reference only)."""


def run(
    requests: Requests, config: EngineConfig, step_time: StepTimeModel, *, concurrency: Optional[Concurrency] = None
) -> EngineRun:
    """Serve ``requests`` with vLLM's own scheduler on osbench's clock
    (:func:`osbench.serve.drive.drive`); the result is what :func:`osbench.serve.reference.run`
    returns with ``record=True``.

    Raises ``FileNotFoundError`` when the vLLM sources are absent (``make vllm-peer``)."""
    priority = check_requests(requests, config)
    concurrency = check_concurrency(concurrency)
    if config.policy not in VLLM_POLICIES or config.aging != 0 or config.preemption != "recompute" or config.kv_tiers:
        raise ArgumentError(
            f"config is not accepted by vLLM {VLLM_VERSION}: policy={config.policy!r}, aging={config.aging!r}, "
            f"preemption={config.preemption!r}, {len(config.kv_tiers)} kv_tiers; its scheduler has policies "
            f"{', '.join(VLLM_POLICIES)}, no aging, preemption by recompute only and no KV tiers (its KV "
            "connectors are outside the scheduler)"
        )
    v = _vllm()
    recorder = Recorder(len(requests), record=True)
    with v.active():
        stepper = Stepper(v, requests, config, priority)
        return drive(requests, stepper, step_time, recorder, concurrency=concurrency)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m osbench.serve.vllm.peer", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    get = sub.add_parser("fetch", help=f"unpack the vLLM {VLLM_VERSION} sources the peer runs into {sources_dir()}")
    get.add_argument("--wheel", help="a vllm wheel already on disk (else pip downloads it)")
    args = parser.parse_args(argv)
    print(fetch(args.wheel))
    return 0


if __name__ == "__main__":
    sys.exit(main())
