"""SGLang 0.5.23's scheduler as an engine semantics (the reference engine, in Python):
radix-tree KV, prefill-first batches, retraction, cache-aware queues.

One module per SGLang component: :mod:`~osbench.serve.sglang.config` (its options, by SGLang's
names, with its defaults), :mod:`~osbench.serve.sglang.request` (``Req``),
:mod:`~osbench.serve.sglang.kv` (the token pool and the radix tree, which is
:class:`osbench.radix.reference.RadixTree` itself), :mod:`~osbench.serve.sglang.policy` (the
queue policies), :mod:`~osbench.serve.sglang.adder` (prefill admission and its budget),
:mod:`~osbench.serve.sglang.scheduler` (``get_next_batch_to_run`` and the batch results) and
:mod:`~osbench.serve.sglang.stepper` (the scheduler under the shared engine loop, and
:func:`run`).

What exists: the reference engine (``osbench.serve.sglang.run``) and its row in
``osbench.serve.ENGINES``, which offers that engine alone: ``osbench.serve.simulate(requests,
semantics="sglang", ...)`` runs it (:mod:`~osbench.serve.sglang.engines` builds the
configuration from a model and GPU as SGLang sizes its own). Not yet: a native engine
(``engine="native"`` is refused).

What it follows, and what it leaves out. SGLang's non-overlapped loop
(``--disable-overlap-schedule``; SGLang overlaps scheduling with the GPU by default), one GPU,
no priorities or priority preemption, no speculative decoding, no LoRA, no host or storage
cache, no sliding-window or Mamba pools, the ``length`` retraction policy, the only stop being
``max_new_tokens``. The tree follows ``mem_cache/radix_cache.py: RadixCache``; SGLang 0.5.23
builds a ``UnifiedRadixCache`` by default (``mem_cache/registry.py: create_tree_cache``), taken
here to behave as ``RadixCache`` for full attention.

Held to SGLang's own code: with ``page_size=1`` the reference makes the same steps as SGLang
0.5.23's scheduling code driven by :mod:`osbench.serve.sglang.peer` (every regime of
``tests/serve/test_sglang_fidelity.py``, and random small workloads). Pages of more than one
token follow the reading of ``mem_cache/allocation.py`` (the paged allocator is not driven by
the peer).
"""

from osbench.serve.sglang.config import POLICIES, EngineConfig
from osbench.serve.sglang.stepper import run

__all__ = ["POLICIES", "EngineConfig", "run"]
