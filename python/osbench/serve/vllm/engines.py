"""vLLM's semantics as ``osbench.serve.ENGINES`` runs it: its configuration and its run on either
engine, the native one (:mod:`osbench.serve.native`) or the reference
(:mod:`osbench.serve.reference`), with the same arguments and equal results. Imported by name
(:meth:`osbench.serve.engines.Semantics.module`), after both engines."""

from __future__ import annotations

import dataclasses
from typing import Any, Optional

import numpy as np

from osbench.errors import ArgumentError
from osbench.serve import native, reference
from osbench.serve.models import GPU, Model
from osbench.serve.models import num_blocks as model_blocks
from osbench.serve.requests import Requests
from osbench.serve.run import Concurrency, EngineRun
from osbench.serve.steptime import StepTime
from osbench.serve.vllm.checks import check_requests
from osbench.serve.vllm.config import POLICIES, PREDICTIONS, EngineConfig, server_batch_defaults
from osbench.serve.vllm.prediction import predicted_output_len
from osbench.serve.vllm.swap import LINKS, PREEMPTIONS
from osbench.serve.vllm.tiers import KvTier, block_flops

Config = EngineConfig
"""The configuration of this semantics."""

CHOICES: dict[str, tuple[str, ...]] = {
    "policy": POLICIES,
    "prediction": tuple(PREDICTIONS),
    "preemption": PREEMPTIONS,
    "link": tuple(LINKS),
}
"""The configuration fields that take one of a few names, and those names."""

REPEATED: dict[str, Any] = {"kv_tiers": KvTier.parse}
"""The configuration fields given as a list, a flag per item (``--kv-tiers 64:pcie5:lru
--kv-tiers 1024:nvme-gen4:s3fifo``), and what reads an item's text."""


def configure(
    config: dict[str, Any], model: Optional[Model], gpu: Optional[GPU], tp: Optional[int], num_blocks: Optional[int]
) -> EngineConfig:
    """The configuration :func:`osbench.serve.simulate` runs: ``config``'s fields (filled in
    place) with vLLM's defaults from the presets: ``max_model_len`` the model's,
    ``kv_block_bytes`` a block of the model's KV on one GPU, ``block_flops`` and
    ``block_flops_step`` its recompute FLOPs (:func:`~osbench.serve.vllm.tiers.block_flops`), the step's
    token and sequence budgets the GPU's tier (:func:`~osbench.serve.vllm.config.
    server_batch_defaults`) when they are not named, and ``num_blocks`` what the model leaves
    on the GPU (:func:`osbench.serve.num_blocks`)."""
    if model is not None:
        config.setdefault("max_model_len", model.max_model_len)
        block_size = config.get("block_size", EngineConfig.block_size)
        config.setdefault("kv_block_bytes", block_size * model.kv_bytes_per_token(tp))
        flops, flops_step = block_flops(model, block_size)
        config.setdefault("block_flops", flops)
        config.setdefault("block_flops_step", flops_step)
    if gpu is not None and ("max_num_batched_tokens" not in config or "max_num_seqs" not in config):
        batched_tokens, seqs = server_batch_defaults(gpu.memory_bytes, gpu.name)
        config.setdefault("max_num_batched_tokens", batched_tokens)
        config.setdefault("max_num_seqs", seqs)
    if num_blocks is None:
        if model is None or gpu is None:
            raise ArgumentError(
                f"{'model' if model is None else 'gpu'}=None is not accepted without num_blocks: name a model and a "
                "GPU (presets: osbench.serve.MODELS, osbench.serve.GPUS), or give num_blocks"
            )
        num_blocks = model_blocks(model, gpu, tp=tp, block_size=config.get("block_size", EngineConfig.block_size))
    return EngineConfig(num_blocks=num_blocks, **config)


def pool_blocks(config: EngineConfig) -> int:
    """The KV pool in the blocks the runs count: ``num_blocks``."""
    return config.num_blocks


def run(
    requests: Requests,
    config: EngineConfig,
    step_time: Any,
    *,
    engine: str = "native",
    record: bool = False,
    concurrency: Optional[Concurrency] = None,
) -> EngineRun:
    """Serve ``requests`` with vLLM 0.33.0's scheduler on ``engine`` (checked by the caller)."""
    run_engine = native.run if engine == "native" else reference.run
    return run_engine(requests, config, step_time, record=record, concurrency=concurrency)


def run_alone(requests: Requests, config: EngineConfig, step_time: Any, engine: str) -> EngineRun:
    """Every request alone on the engine ``config`` describes, with a cold prefix cache, under
    any policy: one request at a time, prefix caching off (the same engine run with one
    client). The native engine runs it whenever it can take the step time (it equals the
    reference)."""
    alone_config = dataclasses.replace(config, enable_prefix_caching=False, policy="fcfs")
    if isinstance(step_time, StepTime):
        # No step rows: one a step of every request's run, 96 bytes each (5 GB at 400k requests).
        return native.run(requests, alone_config, step_time, concurrency=1, steps=False)
    return run(requests, alone_config, step_time, engine=engine, concurrency=1)


def stepper(requests: Requests, config: EngineConfig) -> tuple[reference.Stepper, reference.LivelockGuard]:
    """The reference scheduler as one engine of a loop that drives several
    (:mod:`osbench.serve.cluster`), with its livelock guard; ``requests`` checked against
    ``config`` first, as :func:`osbench.serve.reference.run` checks them."""
    priority = check_requests(requests, config)
    s = reference.Stepper(requests, config, priority, predicted_output_len(requests, config))
    return s, reference.LivelockGuard(s.state, s.livelock_error)


def decode_stepper(
    requests: Requests, config: EngineConfig, external: np.ndarray
) -> tuple[reference.Stepper, reference.LivelockGuard]:
    """:func:`stepper` as a decode instance of a disaggregated deployment
    (:mod:`osbench.serve.disagg`): request ``i`` comes with the KV of its first ``external[i]``
    prompt tokens computed elsewhere, which its first admission takes as computed, as vLLM's
    scheduler takes a KV connector's remote prefill (``v1/core/sched/scheduler.py:
    Scheduler.schedule``, ``num_external_computed_tokens``). Its requests come in any order:
    it numbers them as it receives them (``add_request`` takes a request's index in
    ``requests``, the steps report its number)."""
    priority = check_requests(requests, config)
    s = reference.Stepper(requests, config, priority, predicted_output_len(requests, config), external)
    return s, reference.LivelockGuard(s.state, s.livelock_error)
