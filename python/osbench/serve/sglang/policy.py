"""SGLang's queue policies (``managers/schedule_policy.py: SchedulePolicy.calc_priority``): the
order in which the waiting queue is tried, re-sorted in place before every prefill."""

from __future__ import annotations

import random

from osbench.radix.reference import Node, RadixTree
from osbench.serve.sglang.kv import KVCache
from osbench.serve.sglang.request import Req

IN_BATCH_PREFIX_CACHING_CHECK_THRESHOLD = 32
"""``schedule_policy.py``: a request whose cached prefix is at most this long is checked
against the other waiting requests."""

IN_BATCH_PREFIX_CACHING_DEPRIORITIZE_THRESHOLD = 32
"""``schedule_policy.py``: such a request sharing at least this many tokens with one before it
waits until that one has been computed."""

WAITING_QUEUE_PREFIX_MATCH_MAX = 128
"""``schedule_policy.py``: above this many waiting requests, ``lpm`` (and ``hrrn``) sort nothing
(``_determine_active_policy`` falls back to ``fcfs``)."""

WAITING_PREFIX_REFRESH_INTERVAL = 32
"""``schedule_policy.py``: under the cache-agnostic policies, every 32nd sort refreshes the
waiting requests' prefixes in the tree (``SGLANG_ENABLE_WAITING_PREFIX_REFRESH``, on)."""

CACHE_AWARE = ("lpm", "dfs-weight")


class SchedulePolicy:
    """``schedule_policy.py: SchedulePolicy`` over the radix cache (no priorities)."""

    def __init__(self, policy: str, kv: KVCache, seed: int) -> None:
        self.policy = policy
        self.kv = kv
        self.rng = random.Random(seed)
        """The ``random`` policy's shuffles (SGLang shuffles with the seeded global ``random``)."""
        self.refresh_calls = 0

    def active_policy(self, waiting: list[Req]) -> str:
        """``_determine_active_policy``."""
        if self.policy == "lpm" and len(waiting) > WAITING_QUEUE_PREFIX_MATCH_MAX:
            return "fcfs"
        return self.policy

    def calc_priority(self, waiting: list[Req]) -> None:
        """``calc_priority``: sort ``waiting`` in place. ``fcfs`` keeps the queue's order
        (arrivals and retractions are appended); the cache-aware policies first match every
        waiting request against the tree (which refreshes the matched nodes' access times);
        the sorts are stable."""
        policy = self.active_policy(waiting)
        if self.policy == "fcfs":
            pass
        elif policy in CACHE_AWARE:
            deprioritized = self._compute_prefix_matches(waiting)
            if policy == "lpm":
                # _sort_by_longest_prefix
                waiting.sort(key=lambda r: float("inf") if r.index in deprioritized else -r.num_matched)
            else:
                order = dfs_weight_order(self.kv.tree.root, [r.last_node for r in waiting])
                waiting[:] = [waiting[i] for i in order]
        elif policy == "lof":
            waiting.sort(key=lambda r: -r.max_new_tokens)  # _sort_by_longest_output
        elif policy == "random":
            self.rng.shuffle(waiting)  # _sort_randomly
        # fcfs (lpm above the threshold): the queue as it stands, as last sorted.
        self._touch_waiting_prefixes(policy, waiting)

    def _touch_waiting_prefixes(self, policy: str, waiting: list[Req]) -> None:
        """``_touch_waiting_prefixes``: under a cache-agnostic policy, on every 32nd sort (the
        first included), touch the prefixes of the first 128 waiting requests in the tree, the
        queue's head last, so that LRU evicts them in reverse queue order (a touch is a match:
        it stamps the path and may split a node)."""
        if policy in CACHE_AWARE or not waiting:
            return
        refresh = self.refresh_calls % WAITING_PREFIX_REFRESH_INTERVAL == 0
        self.refresh_calls += 1
        if refresh:
            for r in reversed(waiting[:WAITING_QUEUE_PREFIX_MATCH_MAX]):
                self.kv.tree.match_prefix(r.fill)

    def _compute_prefix_matches(self, waiting: list[Req]) -> set[int]:
        """``_compute_prefix_matches``: match each request's whole fill against the tree; a
        request with a short match that shares a long prefix with an earlier waiting one (a
        scratch tree of the waiting queue, ``waiting_queue_radix_tree``, page size 1) is
        deprioritized, so that one of them computes the prefix and the others then hit it."""
        scratch = RadixTree(1)
        deprioritized: set[int] = set()
        for r in waiting:
            self.kv.match(r)
            if r.prefix_len <= IN_BATCH_PREFIX_CACHING_CHECK_THRESHOLD:
                shared, _ = scratch.match_prefix(r.fill)
                if shared >= IN_BATCH_PREFIX_CACHING_DEPRIORITIZE_THRESHOLD:
                    deprioritized.add(r.index)
                else:
                    scratch.insert(r.fill)
        return deprioritized


def dfs_weight_order(root: Node, nodes: list) -> list[int]:
    """``mem_cache/base_prefix_cache.py: _dfs_weight_order``: the requests in depth-first
    order of the tree, heavier subtrees (more waiting requests ending in them) first, a node's
    children before its own requests."""
    at: dict[Node, list[int]] = {}
    for i, node in enumerate(nodes):
        at.setdefault(node, []).append(i)
    weight: dict[Node, int] = {node: len(indices) for node, indices in at.items()}
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, visited = stack.pop()
        if visited:
            weight[node] = weight.get(node, 0) + sum(weight.get(c, 0) for c in node.children.values())
            continue
        stack.append((node, True))
        stack.extend((c, False) for c in reversed(list(node.children.values())))
    order: list[int] = []
    stack = [(root, False)]
    while stack:
        node, visited = stack.pop()
        if visited:
            order.extend(at.get(node, ()))
            continue
        children = sorted(node.children.values(), key=lambda c: -weight.get(c, 0))
        stack.append((node, True))
        stack.extend((c, False) for c in reversed(children))
    return order
