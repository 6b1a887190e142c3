"""Preemption by swap (lecture section 3.6): a preempted request's KV goes to host memory and
comes back when it runs again, instead of being recomputed.

vLLM v1 only recomputes (``vllm/v1/core/sched/scheduler.py: Scheduler._preempt_request``). vLLM
v0 could swap (``preemption_mode="swap"``, ``vllm/core/scheduler.py: Scheduler._preempt_by_swap``,
``_swap_out`` and ``_swap_in`` in vLLM 0.6, into a CPU pool of ``swap_space`` GiB per GPU,
``CacheConfig.swap_space``). osbench puts v0's swap into v1's loop (``preemption="swap"``),
changing only these rules:

- **Swap out.** A preempted request's blocks are freed as by recompute (they stay in the
  prefix cache until evicted), but first the blocks of its computed tokens,
  ``cdiv(num_computed_tokens, block_size)``, are copied to the host pool, and its progress is
  kept. A request scheduled earlier in the same step has blocks for this step's tokens too;
  they hold nothing yet and are not copied.
- **Full host pool.** When the host pool has fewer free blocks than that, the request is
  recomputed instead (vLLM v0 aborted the engine: "Aborted due to the lack of CPU swap space").
- **Swap in.** A swapped request waits in the waiting queue where the policy puts a preempted
  request (under ``fcfs`` at the front, as v0 served its swapped queue before new requests) and
  is admitted by vLLM's admission rule (budget, ``max_num_seqs``, watermark, full-sequence
  reserve), its blocks counted as the blocks of all its tokens so far; on admission its whole
  block table comes back into new GPU blocks, its host blocks are freed, and it goes on from
  where it stopped. It makes no prefix lookup and counts no prefix hit: as v0 did, the whole
  block table is copied both ways, even blocks the GPU prefix cache still holds. The blocks
  copied back enter the prefix-cache map again, as any block scheduled (vLLM caches equal
  content twice rather than de-duplicate).
- **Time.** A step's copies block it: their time, ``bytes / bandwidth``, is added to the
  model's step time, as v0's ``CacheEngine.swap_out`` / ``swap_in`` copied before the forward
  pass (``Worker.execute_worker``). A step that preempts admits nothing, so a step copies one
  way only. ``bytes`` is ``kv_block_bytes`` a block: one GPU's share under tensor parallelism,
  each GPU copying over its own link at the same time.

``recomputed_tokens`` counts, under either preemption, the tokens a step computes that the
request's KV had held before (lost to a recompute, less what the prefix cache gave back):
with every preempted request swapped, none.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

from osbench import _native

PREEMPTIONS: tuple[str, ...] = tuple(_native.SERVE_PREEMPTIONS)
"""The ways to preempt: ``recompute`` (vLLM v1's) and ``swap`` (vLLM v0's)."""


@dataclass(frozen=True)
class Link:
    """A host link: its rated bandwidth each way, in bytes per second, and the figure's source."""

    name: str
    bandwidth: float
    source: str


LINKS: dict[str, Link] = {name: Link(name, bandwidth, source) for name, bandwidth, source in _native.SERVE_LINKS}
"""The host links (declared once, in the native engine's table): PCIe 5.0 x16 (the default),
PCIe 4.0 x16 and the GH200's NVLink-C2C, at their specifications' rates; a real copy reaches
less (``swap_bandwidth`` sets a measured figure)."""

MAX_HOST_BLOCKS = 2**62


@dataclass(frozen=True)
class Swap:
    """Preemption by swap, configured: the host pool's blocks, a block's bytes, the bandwidth."""

    host_blocks: int
    """``floor(swap_space * 2**30 / kv_block_bytes)``, as vLLM v0 counts its CPU blocks
    (``Worker.determine_num_available_blocks``), at most 2**62."""
    block_bytes: int
    bandwidth: float
    """Bytes per second each way (infinity: the copies take no time)."""

    @classmethod
    def of(cls, swap_space: float, kv_block_bytes: int, link: str, swap_bandwidth: Optional[float]) -> Swap:
        """The swap of checked options (``EngineConfig``'s)."""
        blocks = math.floor(swap_space * float(1 << 30) / float(kv_block_bytes))
        bandwidth = LINKS[link].bandwidth if swap_bandwidth is None else swap_bandwidth
        return cls(min(blocks, MAX_HOST_BLOCKS), kv_block_bytes, bandwidth)

    def seconds(self, nbytes: int) -> float:
        """Seconds to copy ``nbytes`` over the link."""
        return float(nbytes) / self.bandwidth
