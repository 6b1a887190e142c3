"""The serving engine: continuous batching bounded by a paged KV cache with prefix caching.

Lecture section 2.8: an inference engine is a batch server. "Who runs first" becomes "who
joins the batch", and the batch is bounded by the KV cache in GPU memory, which ties
scheduling (section 2) to paging (section 3) and prefix caching (sections 4-5).

- :class:`Requests`: arrivals, prompt and output lengths, and optionally the prompt's content
  as block ids, so prefix caching is real; read from the Azure and Mooncake traces or
  generated (:class:`Lognormal`, :class:`Empirical`, :class:`SystemPrompts`).
- :class:`Model`, :class:`GPU` (presets ``MODELS``, ``GPUS``) and :func:`num_blocks`: what
  is served on what, and how many KV blocks fit.
- :class:`Batch` and :class:`StepTime`: what one engine step computes, and how long it takes.
- :class:`EngineConfig`: what the scheduler reads, with vLLM 0.33.0's defaults; the engines
  return an :class:`EngineRun` (raw per-request and per-step arrays).
- :class:`ServeResult`: per-request latencies, per-step records, and their summary.
- :func:`simulate`: serve requests on a model and GPU with either engine (``"native"``, Rust,
  or ``"reference"``, readable Python), and get a :class:`ServeResult`; ``semantics`` names the
  scheduler reproduced (``ENGINES``: ``"vllm"``, in :mod:`osbench.serve.vllm`, on either
  engine; ``"sglang"``, in :mod:`osbench.serve.sglang`, on the reference engine only).
- :func:`simulate_cluster`: replicas behind a router (:mod:`osbench.serve.routers`) on one
  clock, and its :class:`ClusterResult`.
- :func:`plan`: the smallest deployment (replicas by tensor-parallel degree) that meets an SLO
  on the requests, every candidate's goodput per GPU and knee, as a :class:`Plan`.
- :func:`simulate_disaggregated`: a prefill pool handing requests to a decode pool over a
  :class:`Link` (presets ``LINKS``), and its :class:`DisaggResult`.
"""

from osbench.serve.cluster import ClusterResult, ClusterSummary, simulate_cluster
from osbench.serve.config import EngineConfig
from osbench.serve.disagg import DisaggResult, DisaggSummary, simulate_disaggregated
from osbench.serve.engines import ENGINES
from osbench.serve.links import LINKS, Link
from osbench.serve.models import GPU, GPUS, MODELS, Model, num_blocks
from osbench.serve.plan import Plan, plan
from osbench.serve.requests import Requests, RequestsSummary
from osbench.serve.result import PriorityClass, ServeResult, ServeSummary, Stats
from osbench.serve.run import Clients, EngineRun, Steps
from osbench.serve.simulate import STEP_TIME_NAMES, simulate
from osbench.serve.steptime import Batch, StepTime
from osbench.serve.vllm.tiers import MEDIA as KV_TIER_MEDIA
from osbench.serve.vllm.tiers import KvTier
from osbench.serve.workloads import Empirical, Lognormal, SystemPrompts

__all__ = [
    "ENGINES",
    "GPU",
    "GPUS",
    "KV_TIER_MEDIA",
    "LINKS",
    "MODELS",
    "STEP_TIME_NAMES",
    "Batch",
    "Clients",
    "ClusterResult",
    "ClusterSummary",
    "DisaggResult",
    "DisaggSummary",
    "Empirical",
    "EngineConfig",
    "EngineRun",
    "KvTier",
    "Link",
    "Lognormal",
    "Model",
    "Plan",
    "PriorityClass",
    "Requests",
    "RequestsSummary",
    "ServeResult",
    "ServeSummary",
    "Stats",
    "StepTime",
    "Steps",
    "SystemPrompts",
    "num_blocks",
    "plan",
    "simulate",
    "simulate_cluster",
    "simulate_disaggregated",
]
