"""The serving engine's configuration: vLLM's, the engine semantics osbench follows by default
(:mod:`osbench.serve.vllm.config`). Kept under this name so that code importing
``osbench.serve.config.EngineConfig`` goes on working."""

from __future__ import annotations

from osbench.serve.vllm.config import POLICIES, PREDICTIONS, EngineConfig, server_batch_defaults

__all__ = ["POLICIES", "PREDICTIONS", "EngineConfig", "server_batch_defaults"]
