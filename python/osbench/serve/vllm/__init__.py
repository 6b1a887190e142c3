"""vLLM 0.33.0's v1 scheduler (synchronous scheduling), one module per component, as
``rust/osbench-core/src/serve/vllm/`` has them: :mod:`~osbench.serve.vllm.config` (what it
reads, vLLM's defaults), :mod:`~osbench.serve.vllm.request`, :mod:`~osbench.serve.vllm.block_pool`,
:mod:`~osbench.serve.vllm.kv_cache_manager`, :mod:`~osbench.serve.vllm.queue`,
:mod:`~osbench.serve.vllm.policy`, :mod:`~osbench.serve.vllm.scheduler`, and
:mod:`~osbench.serve.vllm.stepper` (the scheduler under the engine loop), and
:mod:`~osbench.serve.vllm.engines` (its run on either engine). The row ``vllm`` of
``osbench.serve.ENGINES``; every rule is stated, with its vLLM source, in
:mod:`osbench.serve.reference`."""

from osbench.serve.vllm.config import POLICIES, EngineConfig

__all__ = ["POLICIES", "EngineConfig"]
