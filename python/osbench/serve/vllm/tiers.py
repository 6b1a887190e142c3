"""KV tiers below the prefix cache (lecture sections 3.6 and 4.5): host memory, then SSD, each a
cache of blocks under one of :mod:`osbench.cache`'s policies, as vLLM's KV offloading
connector, LMCache and Mooncake's store keep KV that the GPU no longer holds.

vLLM 0.33.0 keeps the prefix cache in GPU blocks only; its KV connectors
(``vllm/distributed/kv_transfer``: ``OffloadingConnector``, ``LMCacheConnectorV1``) add tiers
under it. osbench adds them to vLLM's loop (``kv_tiers=``), changing only these rules:

- **Store.** When the GPU's prefix cache evicts a content (the last block cached under its
  hash is reused, ``BlockPool._maybe_evict_cached_block``), the content goes to every tier,
  as LMCache's storage manager puts a chunk in each backend it has (the tiers are inclusive):
  an access of the tier's cache, which inserts it (evicting by the tier's policy) or, if the
  tier holds it already, refreshes it. The contents a step evicts reach the tiers once the
  step is decided: an admission later in the same step does not find them there. Blocks of
  prompts without content (:func:`~osbench.serve.vllm.request.private_tag`) are not stored:
  no other request could hit them.
- **Lookup.** An admission (not a swapped request's) looks past the GPU's run of hits, block
  by block: each block is found in the first tier, fastest first, that holds it; the first
  block no tier holds ends the run. The hit tokens of the GPU and the tiers together are at
  most ``num_tokens - 1``, as the GPU's alone (the last token is computed for its logits).
- **Load.** The tiers' hit tokens are taken as computed, in fresh GPU blocks, outside the
  token budget, as a KV connector's ``get_num_new_matched_tokens`` are
  (``Scheduler.schedule``); vLLM's admission rule counts their blocks. Once admitted, each
  block found is read, then an access of its tier's cache (a hit) in the request's order; a block
  that an earlier block's hit pushed out meanwhile (``slru``'s and ``wtinylfu``'s hits can evict)
  is read all the same, as the lookup found it, and is not put back.
- **Time.** A step's loads block it, as LMCache's connector loads before the forward pass
  (``start_load_kv``): each tier the step loads from costs ``latency + bytes / bandwidth``,
  the tiers one after the other, added to the model's step time. ``bytes`` is
  ``kv_block_bytes`` a block: one GPU's share under tensor parallelism.
- **Cost.** A policy that weighs costs (``gdsf``) is given each block's recompute FLOPs:
  ``block_flops + block_flops_step * k`` for block ``k`` of its request
  (:func:`block_flops`, from the model: the linear layers over the block's tokens and their
  attention to the ``k`` blocks before). Every block has the same size, so the tiers count
  blocks.
- **Livelock guard.** The contents a tier newly took and the contents it holds are part of the
  engine's state: with both unchanged it holds the same contents, and every lookup answers the
  same (a refresh's reordering changes no answer).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Optional, Union

from osbench import _checks, _native
from osbench.cache import new as new_cache
from osbench.cache.policies import COSTED_POLICIES, MIN_CAPACITY, OFFLINE, TABLE
from osbench.errors import ArgumentError, ArgumentTypeError


@dataclass(frozen=True)
class Medium:
    """Where a tier keeps its blocks: bytes per second each way, seconds per load, and the
    figures' source."""

    name: str
    bandwidth: float
    latency: float
    source: str


MEDIA: dict[str, Medium] = {name: Medium(name, bw, lat, src) for name, bw, lat, src in _native.SERVE_TIER_MEDIA}
"""The tiers' media (declared once, in the native engine's table): host DRAM over ``pcie5``
(the default), ``pcie4`` or the GH200's ``nvlink-c2c`` (the bandwidths of swap's host links),
and NVMe SSDs ``nvme-gen4`` and ``nvme-gen5`` at their datasheets' sequential reads; the
latencies are stated assumptions."""

MAX_TIERS = 8
"""At most this many tiers (``rust/osbench-core/src/serve/vllm/tiers.rs: MAX_TIERS``)."""


@dataclass(frozen=True)
class KvTier:
    """One KV tier: ``gib`` GiB per GPU on ``medium`` (:data:`MEDIA`), evicting by ``policy``
    (an online policy of :mod:`osbench.cache`); ``bandwidth`` (bytes per second) and
    ``latency`` (seconds a load) instead of the medium's; ``costs``: give the policy each
    block's recompute FLOPs (None: exactly when the policy takes costs)."""

    gib: float
    medium: str = "pcie5"
    policy: str = "lru"
    bandwidth: Optional[float] = None
    latency: Optional[float] = None
    costs: Optional[bool] = None

    @classmethod
    def parse(cls, text: str, name: str = "kv_tiers") -> KvTier:
        """A tier from ``GIB[:MEDIUM[:POLICY]]``, as ``--kv-tiers`` takes it: ``64``,
        ``64:pcie5:s3fifo``, ``1024:nvme-gen4:gdsf``; ``name``: the argument it came in, for
        errors."""
        parts = text.split(":")
        if not 1 <= len(parts) <= 3 or not parts[0]:
            raise ArgumentError(f"{name}={text!r} is not accepted: it must be GIB[:MEDIUM[:POLICY]], e.g. 64:pcie5:lru")
        try:
            gib = float(parts[0])
        except ValueError:
            raise ArgumentError(f"{name}={text!r} is not accepted: its GIB must be a number") from None
        medium = parts[1] if len(parts) > 1 else cls.medium  # the fields' defaults
        return cls(gib, medium, parts[2] if len(parts) > 2 else cls.policy)

    def blocks(self, kv_block_bytes: int) -> int:
        """The blocks it holds: ``floor(gib * 2**30 / kv_block_bytes)``."""
        return min(math.floor(self.gib * float(1 << 30) / float(kv_block_bytes)), 2**62)


def _number(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ArgumentTypeError(f"{name}={value!r} is not accepted: it must be a number")
    return float(value)


def checked(tiers: Any, kv_block_bytes: int) -> tuple[KvTier, ...]:
    """``kv_tiers`` as given (a sequence of :class:`KvTier` or their ``GIB[:MEDIUM[:POLICY]]``
    strings), checked, each with its medium's figures and its ``costs`` filled in."""
    if isinstance(tiers, str) or not isinstance(tiers, Sequence):
        raise ArgumentTypeError(
            f"kv_tiers={tiers!r} is not accepted: it must be a sequence (a list or tuple, fastest tier first) of "
            "KvTier or 'GIB:MEDIUM:POLICY' strings"
        )
    tiers = [KvTier.parse(t, f"kv_tiers[{i}]") if isinstance(t, str) else t for i, t in enumerate(tiers)]
    if len(tiers) > MAX_TIERS:
        raise ArgumentError(f"kv_tiers is not accepted: it has {len(tiers)} tiers, at most {MAX_TIERS}")
    if tiers and kv_block_bytes == 0:
        raise ArgumentError(
            "kv_block_bytes=0 is not accepted with kv_tiers: the tiers and their loads are counted in bytes; name a "
            "model (simulate sets it from the model) or give kv_block_bytes"
        )
    out = []
    for i, tier in enumerate(tiers):
        name = f"kv_tiers[{i}]"
        if not isinstance(tier, KvTier):
            raise ArgumentTypeError(f"{name}={tier!r} is not accepted: it must be a KvTier or a 'GIB:MEDIUM:POLICY'")
        gib = _number(f"{name}.gib", tier.gib)
        if not (math.isfinite(gib) and gib > 0):
            raise ArgumentError(f"{name}.gib={tier.gib!r} is not accepted: it must be a finite number of GiB > 0")
        _checks.choice(f"{name}.medium", tier.medium, MEDIA)
        medium = MEDIA[tier.medium]
        _checks.choice(f"{name}.policy", tier.policy, [p for p in TABLE if p not in OFFLINE])
        bandwidth = medium.bandwidth if tier.bandwidth is None else _number(f"{name}.bandwidth", tier.bandwidth)
        if math.isnan(bandwidth) or bandwidth < 1:
            raise ArgumentError(
                f"{name}.bandwidth={tier.bandwidth!r} is not accepted: it must be a number of bytes per second >= 1 "
                "(inf: loads take no time)"
            )
        latency = medium.latency if tier.latency is None else _number(f"{name}.latency", tier.latency)
        if not (math.isfinite(latency) and latency >= 0):
            raise ArgumentError(f"{name}.latency={tier.latency!r} is not accepted: it must be a number of seconds >= 0")
        takes_costs = tier.policy in COSTED_POLICIES
        costs = takes_costs if tier.costs is None else _checks.flag(f"{name}.costs", tier.costs)
        if costs and not takes_costs:
            raise ArgumentError(
                f"{name}.costs=True is not accepted with policy={tier.policy!r}: it takes no costs; the policies that "
                f"weigh each block's recompute FLOPs are {', '.join(COSTED_POLICIES)}"
            )
        resolved = replace(tier, gib=gib, bandwidth=bandwidth, latency=latency, costs=costs)
        blocks = resolved.blocks(kv_block_bytes)
        least = max(1, MIN_CAPACITY.get(tier.policy, 1))
        if blocks < least:
            raise ArgumentError(
                f"{name}.gib={tier.gib!r} is not accepted: it holds {blocks} KV blocks of {kv_block_bytes} bytes, and "
                f"policy={tier.policy!r} needs at least {least}"
            )
        out.append(resolved)
    return tuple(out)


def block_flops(model: Any, block_size: int) -> tuple[float, float]:
    """``(block_flops, block_flops_step)`` of ``model`` (a :class:`~osbench.serve.Model`): the
    FLOPs to recompute block ``k`` of a request are ``block_flops + block_flops_step * k``. The
    block's ``B`` tokens go through the layers' weights (``2 * weights * B``, the roofline's
    ``linear_flops``) and attend to every token up to their own (``4 * layers * heads *
    head_dim`` a pair, the roofline's ``attention_flops``): ``B * k * B + B * (B + 1) / 2``
    pairs."""
    weights = model.active_parameters - model.embedding_parameters - model.lm_head_parameters
    pair = 4.0 * model.layers * model.heads * model.head_dim
    b = float(block_size)
    return 2.0 * weights * b + pair * b * (b + 1.0) / 2.0, pair * b * b


Tier = Union[KvTier, str]


class Tiers:
    """The tiers of a running engine (the reference's): a cache of :mod:`osbench.cache` each,
    and what each did."""

    def __init__(self, tiers: tuple[KvTier, ...], kv_block_bytes: int, flops: tuple[float, float]) -> None:
        self.tiers = tiers
        self.block_bytes = kv_block_bytes
        self.flops = flops
        self.caches = [
            new_cache(t.policy, t.blocks(kv_block_bytes), engine="reference", costs=bool(t.costs)) for t in tiers
        ]
        self.counts = [[0, 0, 0] for _ in tiers]
        """Per tier: blocks loaded from it, evicted contents stored in it, of those the new ones."""
        self.step_loads = [0] * len(tiers)

    def find(self, key: int) -> Optional[int]:
        """The first tier holding the content ``key``, if any."""
        return next((t for t, cache in enumerate(self.caches) if key in cache), None)

    def _cost(self, t: int, position: int) -> Optional[float]:
        return self.flops[0] + self.flops[1] * float(position) if self.tiers[t].costs else None

    def load(self, t: int, key: int, position: int) -> None:
        """An admission loads ``key`` (block ``position`` of its request) from tier ``t``, which
        held it at the lookup: a hit of its cache, unless an earlier block's hit pushed it out."""
        if key in self.caches[t]:
            self.caches[t].access(key, cost=self._cost(t, position))
        self.counts[t][0] += 1
        self.step_loads[t] += 1

    def store(self, key: int, position: int) -> None:
        """The GPU evicted ``key`` (block ``position`` of its request): every tier stores it."""
        for t, cache in enumerate(self.caches):
            held = cache.access(key, cost=self._cost(t, position))
            self.counts[t][1] += 1
            self.counts[t][2] += not held

    def state(self) -> tuple[int, ...]:
        """The part of the tiers the livelock guard sees: per tier the new contents it took and
        the contents it holds. Equal twice, nothing was inserted between (the first only
        grows), so nothing left either: the same contents, the same lookups' answers."""
        return tuple(n for t, cache in enumerate(self.caches) for n in (self.counts[t][2], len(cache)))

    def take_step_loads(self) -> tuple[int, float]:
        """The step's loads as ``(bytes, seconds)``; a new step begins."""
        nbytes, seconds = 0, 0.0
        for t, loads in enumerate(self.step_loads):
            if loads:
                b = loads * self.block_bytes
                nbytes += b
                seconds += self.tiers[t].latency + float(b) / self.tiers[t].bandwidth  # type: ignore[operator]
                self.step_loads[t] = 0
        return nbytes, seconds
