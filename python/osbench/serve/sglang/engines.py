"""SGLang's semantics as ``osbench.serve.ENGINES`` runs it: its configuration, built from a
model and GPU as SGLang sizes its own, and its run on the engines its row lists: the
reference (:func:`osbench.serve.sglang.stepper.run`) and the native one
(:func:`osbench.serve.sglang.native.run`), equal step for step. Imported by name
(:meth:`osbench.serve.engines.Semantics.module`)."""

from __future__ import annotations

from typing import Any, Optional

from osbench.errors import ArgumentError
from osbench.serve.models import GPU, Model
from osbench.serve.requests import Requests
from osbench.serve.run import Concurrency, EngineRun
from osbench.serve.sglang import native
from osbench.serve.sglang import stepper as sglang_stepper
from osbench.serve.sglang.config import (
    POLICIES,
    EngineConfig,
    default_chunked_prefill_size,
    default_mem_fraction_static,
    pool_tokens,
)

Config = EngineConfig
"""The configuration of this semantics."""

CHOICES: dict[str, tuple[str, ...]] = {"schedule_policy": POLICIES}
"""The configuration fields that take one of a few names, and those names."""


def configure(
    config: dict[str, Any], model: Optional[Model], gpu: Optional[GPU], tp: Optional[int], num_blocks: Optional[int]
) -> EngineConfig:
    """The configuration :func:`osbench.serve.simulate` runs: ``config``'s fields (filled in
    place) with SGLang's defaults from the presets: ``context_len`` the model's,
    ``chunked_prefill_size`` the GPU's tier (:func:`~osbench.serve.sglang.config.
    default_chunked_prefill_size`), and ``max_total_tokens`` what
    :func:`~osbench.serve.sglang.config.default_mem_fraction_static` of the GPU leaves after
    the model's weights, in KV tokens (:func:`~osbench.serve.sglang.config.pool_tokens`),
    rounded down to whole pages. ``num_blocks`` (vLLM's pool) is refused: this pool is
    ``max_total_tokens``."""
    if num_blocks is not None:
        raise ArgumentError(
            f"num_blocks={num_blocks!r} is not accepted with semantics='sglang': its KV pool is max_total_tokens "
            "(tokens, SGLang's --max-total-tokens)"
        )
    if model is not None:
        config.setdefault("context_len", model.max_model_len)
    if gpu is not None:
        config.setdefault("chunked_prefill_size", default_chunked_prefill_size(gpu.memory_bytes))
    if "max_total_tokens" not in config:
        if model is None or gpu is None:
            raise ArgumentError(
                f"{'model' if model is None else 'gpu'}=None is not accepted without max_total_tokens: name a model "
                "and a GPU (presets: osbench.serve.MODELS, osbench.serve.GPUS), or give max_total_tokens"
            )
        fraction = default_mem_fraction_static(
            gpu.memory_bytes,
            config["chunked_prefill_size"],
            tp=model._tp(tp),
            max_prefill_tokens=config.get("max_prefill_tokens", EngineConfig.max_prefill_tokens),
            max_running_requests=config.get("max_running_requests"),
        )
        tokens = pool_tokens(gpu.memory_bytes, fraction, model.weight_bytes(tp), model.kv_bytes_per_token(tp))
        page = config.get("page_size", EngineConfig.page_size)
        config["max_total_tokens"] = tokens // page * page if isinstance(page, int) and page > 0 else tokens
    return EngineConfig(**config)


def pool_blocks(config: EngineConfig) -> int:
    """The KV pool in the blocks the runs count: pages of ``page_size`` tokens."""
    return config.num_pages


def run(
    requests: Requests,
    config: EngineConfig,
    step_time: Any,
    *,
    engine: str = "reference",
    record: bool = False,
    concurrency: Optional[Concurrency] = None,
) -> EngineRun:
    """Serve ``requests`` with SGLang 0.5.23's scheduler on ``engine``, ``"reference"`` or
    ``"native"`` (checked by the caller against the row's engines)."""
    if engine == "native":
        return native.run(requests, config, step_time, record=record, concurrency=concurrency)
    if engine != "reference":
        raise ArgumentError(f"engine={engine!r} is not accepted with semantics='sglang': use 'reference' or 'native'")
    return sglang_stepper.run(requests, config, step_time, record=record, concurrency=concurrency)


def run_alone(requests: Requests, config: EngineConfig, step_time: Any, engine: str) -> None:
    """Not given for this semantics (so ``ServeResult.slowdown`` is nan): each request served
    alone, with a cold radix cache, is not built for SGLang's scheduler."""
    return None


def stepper(requests: Requests, config: EngineConfig) -> tuple[sglang_stepper.Stepper, None]:
    """SGLang's reference scheduler as one engine of a loop that drives several
    (:mod:`osbench.serve.cluster`), ``requests`` checked against ``config`` first, as
    :func:`osbench.serve.sglang.stepper.run` checks them; no livelock guard (that function's
    docstring says why every run ends)."""
    sglang_stepper.check_requests(requests, config)
    return sglang_stepper.Stepper(requests, config), None


__all__ = ["CHOICES", "Config", "configure", "pool_blocks", "run", "run_alone", "stepper"]
