"""vLLM's semantics as ``osbench.serve.ENGINES`` runs it: its configuration and its run on either
engine, the native one (:mod:`osbench.serve.native`) or the reference
(:mod:`osbench.serve.reference`), with the same arguments and equal results. Imported by name
(:meth:`osbench.serve.engines.Semantics.module`), after both engines."""

from __future__ import annotations

from typing import Any, Optional

from osbench.serve import native, reference
from osbench.serve.requests import Requests
from osbench.serve.run import EngineRun, check_requests
from osbench.serve.vllm.config import EngineConfig
from osbench.serve.vllm.prediction import predicted_output_len

Config = EngineConfig
"""The configuration of this semantics."""


def run(
    requests: Requests,
    config: EngineConfig,
    step_time: Any,
    *,
    engine: str = "native",
    record: bool = False,
    concurrency: Optional[int] = None,
) -> EngineRun:
    """Serve ``requests`` with vLLM 0.33.0's scheduler on ``engine`` (checked by the caller)."""
    run_engine = native.run if engine == "native" else reference.run
    return run_engine(requests, config, step_time, record=record, concurrency=concurrency)


def stepper(requests: Requests, config: EngineConfig) -> tuple[reference.Stepper, reference.LivelockGuard]:
    """The reference scheduler as one engine of a loop that drives several
    (:mod:`osbench.serve.cluster`), with its livelock guard; ``requests`` checked against
    ``config`` first, as :func:`osbench.serve.reference.run` checks them."""
    priority = check_requests(requests, config)
    s = reference.Stepper(requests, config, priority, predicted_output_len(requests, config))
    return s, reference.LivelockGuard(s.state, s.livelock_error)
