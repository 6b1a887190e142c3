"""``prefix-aware``: SGLang's cache-aware routing (sgl-model-gateway, ``sgl-router/src/
policies/cache_aware.rs: CacheAwarePolicy::select_worker``, its approximate tree
``sgl-router/src/policies/tree.rs: Tree``), at the engine's block granularity.

The router keeps, per replica, an approximate record of the prompts it routed there (SGLang's
multi-tenant radix tree over the request text; here over the chained content keys of the
prompts' full blocks, :meth:`Requests.prompt_block_keys`, so a match is a whole-block prefix).
For each request, with the loads of its own book (outstanding requests, SGLang's ``load()``):

1. the load is **imbalanced** when ``max - min > balance_abs_threshold`` and
   ``max > min * balance_rel_threshold``: the request goes to the least loaded replica
   (``min_by_key``: the lowest index on ties), and its prompt still enters that replica's
   record;
2. else the longest prefix of the prompt any record holds is found, its **match rate** being
   the matched tokens over the prompt's tokens (SGLang: matched characters over the text's);
   above ``cache_threshold`` the request goes to a replica holding that prefix (SGLang takes
   the first tenant of the deepest matched node; here the one that was routed it last, a
   deterministic choice), else to the replica of the **smallest record** (``get_smallest_
   tenant``: the fewest blocks, the lowest index on ties);
3. the prompt enters the chosen replica's record.

Defaults are SGLang's: ``cache_threshold=0.3``, ``balance_abs_threshold=64``,
``balance_rel_threshold=1.5``. Left out: the record's periodic LRU eviction (every
``eviction_interval_secs``, down to ``max_tree_size`` characters per worker, 2**26 by
default), so the record here only grows.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Optional

import numpy as np

from osbench import _checks
from osbench.serve.hashing import ROOT_HASH, block_hash
from osbench.serve.requests import Requests
from osbench.serve.routers.base import Replica, Request, Router


class PrefixAware(Router):
    """SGLang's cache-aware routing (see the module). ``block_size``: the granularity of the
    record, in tokens (None: the engine's block size)."""

    name = "prefix-aware"

    def __init__(
        self,
        cache_threshold: float = 0.3,
        balance_abs_threshold: int = 64,
        balance_rel_threshold: float = 1.5,
        block_size: Optional[int] = None,
    ) -> None:
        self.cache_threshold = _checks.probability("cache_threshold", cache_threshold)
        self.balance_abs_threshold = _checks.non_negative_int("balance_abs_threshold", balance_abs_threshold)
        self.balance_rel_threshold = _checks.real("balance_rel_threshold", balance_rel_threshold, minimum=0.0)
        self.block_size = None if block_size is None else _checks.positive_int("block_size", block_size, 2**20)
        self._granularity = 1
        self._keys = np.zeros(0, dtype=np.uint64)
        self._offsets = np.zeros(1, dtype=np.int64)
        self.record: dict[int, dict[int, int]] = {}
        """Chained block hash -> {replica: the last request routed there with that prefix}."""
        self.sizes: list[int] = []
        """Blocks in each replica's record."""

    def start(self, replicas: int, requests: Requests, block_size: int) -> None:
        self._granularity = block_size if self.block_size is None else self.block_size
        self._keys, self._offsets = requests.prompt_block_keys(self._granularity)
        self.record = {}
        self.sizes = [0] * replicas

    def imbalanced(self, loads: Sequence[int]) -> bool:
        """SGLang's test: both thresholds passed."""
        hi, lo = max(loads), min(loads)
        return hi - lo > self.balance_abs_threshold and hi > lo * self.balance_rel_threshold

    def route(self, request: Request, replicas: Sequence[Replica]) -> int:
        i = request.index
        hashes = []
        parent = ROOT_HASH
        for key in self._keys[self._offsets[i] : self._offsets[i + 1]].tolist():
            parent = block_hash(parent, key)
            hashes.append(parent)
        loads = [r.outstanding for r in replicas]
        if self.imbalanced(loads):
            chosen = min(range(len(replicas)), key=lambda k: (loads[k], k))
        else:
            matched, holders = 0, {}
            for h in hashes:  # a record holding a prefix holds every shorter one
                found = self.record.get(h)
                if found is None:
                    break
                matched, holders = matched + 1, found
            rate = matched * self._granularity / request.prompt_len
            if rate > self.cache_threshold:
                chosen = max(holders, key=lambda k: (holders[k], -k))
            else:
                chosen = min(range(len(replicas)), key=lambda k: (self.sizes[k], k))
        for h in hashes:
            holders = self.record.setdefault(h, {})
            if chosen not in holders:
                self.sizes[chosen] += 1
            holders[chosen] = i
        return chosen

    def __repr__(self) -> str:
        return (
            f"PrefixAware(cache_threshold={self.cache_threshold}, balance_abs_threshold={self.balance_abs_threshold}, "
            f"balance_rel_threshold={self.balance_rel_threshold}, block_size={self.block_size})"
        )
