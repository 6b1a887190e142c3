"""Radix-tree prefix caching with reference counts and LRU leaf eviction (RadixAttention).

Lecture section 5. :class:`RadixCache` is SGLang's RadixCache over token ids, in two engines
that agree exactly (same return values, sizes, tree and last-access clock):
``engine="native"`` (Rust, an arena of nodes with integer handles) and
``engine="reference"`` (:mod:`osbench.radix.reference`, readable Python).

>>> import osbench as ob
>>> t = ob.radix.RadixCache()
>>> [t.insert(s) for s in ([1, 2, 3], [1, 2, 3], [1, 2, 4, 5], [1, 2, 4, 5, 6, 7], [8, 9, 10, 11, 12])]
[0, 3, 2, 4, 0]

:func:`replay` serves a request stream through a cache of a given capacity (``prefix``: the
radix tree; ``whole``: an exact-match cache of whole prompts), in one native call;
:func:`curve` gives hit ratios over capacities; :func:`conversations` generates the lecture's
multi-turn workload and :func:`mooncake` reads the Mooncake traces as block-level requests.
"""

from osbench.radix import reference
from osbench.radix.replay import MODES, ReplayResult, curve, replay
from osbench.radix.tree import Match, NodeInfo, RadixCache
from osbench.radix.workloads import MOONCAKE_BLOCK_TOKENS, Requests, Vocabulary, conversations, mooncake

__all__ = [
    "MODES",
    "MOONCAKE_BLOCK_TOKENS",
    "Match",
    "NodeInfo",
    "RadixCache",
    "ReplayResult",
    "Requests",
    "Vocabulary",
    "conversations",
    "curve",
    "mooncake",
    "reference",
    "replay",
]
