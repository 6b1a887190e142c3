"""Cache replacement, the readable way: one class per policy, one file per policy (lecture
section 4).

This is the teaching code and the oracle for the native engine, which must agree with it
hit for hit. Every class has the same interface::

    cache = LRU(capacity=3)
    cache.access(key)          # True on a hit; a miss inserts the key (demand paging)
    len(cache), key in cache

Objects have unit size and ``capacity`` counts objects, unless ``access(key, next_use, size)``
gives sizes: the capacity then counts bytes (``used`` holds the bytes cached), as in
libCacheSim. :class:`GDSF` also takes a ``cost``. :class:`OPT` is offline: ``access(key,
next_use)`` also needs the time of the key's next access. A class takes, beside the capacity,
exactly the keyword parameters its row of the policy table lists (:data:`osbench.cache.PARAMETERS`).

Half of the classes take their access from :class:`osbench.cache._parts.DemandPaging` (look
up; on a miss, evict until the newcomer fits, then insert it) and define only what makes them
that policy: what a hit does, which object leaves, where a newcomer goes. The other pieces
several policies share (a ghost of evicted ids, the keys a random draw picks from) are in
:mod:`osbench.cache._parts` too.

:data:`POLICY_CLASSES` is the registry: one row per policy, the same names as the core's table
(a test holds them together).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any, Optional

from osbench.cache.policies import OFFLINE
from osbench.cache.reference.arc import ARC
from osbench.cache.reference.belady_size import BeladySize
from osbench.cache.reference.cacheus import Cacheus
from osbench.cache.reference.clock import Clock
from osbench.cache.reference.clock2qplus import Clock2QPlus
from osbench.cache.reference.clockpro import ClockPro
from osbench.cache.reference.fifo import FIFO
from osbench.cache.reference.flashprob import FlashProb
from osbench.cache.reference.gdsf import GDSF, GDSF_SCALE
from osbench.cache.reference.hyperbolic import Hyperbolic
from osbench.cache.reference.lecar import LeCaR
from osbench.cache.reference.lfu import LFU
from osbench.cache.reference.lfuda import LFUDA
from osbench.cache.reference.lhd import LHD
from osbench.cache.reference.lirs import LIRS
from osbench.cache.reference.lru import LRU
from osbench.cache.reference.lruk import LRUK
from osbench.cache.reference.lruprob import LRUProb
from osbench.cache.reference.mq import MQ
from osbench.cache.reference.opt import OPT
from osbench.cache.reference.random import Random
from osbench.cache.reference.s3fifo import S3FIFO
from osbench.cache.reference.sieve import Sieve
from osbench.cache.reference.size import Size
from osbench.cache.reference.slru import SLRU
from osbench.cache.reference.twoq import TwoQ
from osbench.cache.reference.wtinylfu import WTinyLFU
from osbench.traces import NEVER, next_use_reference

POLICY_CLASSES: dict[str, Any] = {
    "fifo": FIFO,
    "lru": LRU,
    "lfu": LFU,
    "clock": Clock,
    "arc": ARC,
    "opt": OPT,
    "belady-size": BeladySize,
    "sieve": Sieve,
    "s3fifo": S3FIFO,
    "twoq": TwoQ,
    "lirs": LIRS,
    "clockpro": ClockPro,
    "clock2qplus": Clock2QPlus,
    "gdsf": GDSF,
    "size": Size,
    "random": Random,
    "hyperbolic": Hyperbolic,
    "lecar": LeCaR,
    "cacheus": Cacheus,
    "lhd": LHD,
    "slru": SLRU,
    "lruk": LRUK,
    "lruprob": LRUProb,
    "flashprob": FlashProb,
    "mq": MQ,
    "wtinylfu": WTinyLFU,
    "lfuda": LFUDA,
}
"""Each policy's class, by the name the policy table gives it."""


def make(policy: str, capacity: int, **parameters: Any) -> Any:
    """A fresh cache of the named policy, with the parameters it reads (``bit_on_insert``
    for ``clock``)."""
    return POLICY_CLASSES[policy](capacity, **parameters)


def replay(
    keys: Sequence[Hashable],
    policy: str,
    capacity: int,
    sizes: Optional[Sequence[int]] = None,
    costs: Optional[Sequence[float]] = None,
    **parameters: Any,
) -> list[bool]:
    """Replay ``keys`` through a fresh cache; one hit flag per access. ``sizes``: one object
    size per access (capacity in bytes); ``costs``: one cost per access, for the policies that
    take costs (:data:`osbench.cache.COSTED_POLICIES`)."""
    cache = make(policy, capacity, **parameters)
    if costs is not None:
        unit = [1] * len(keys)
        return [
            cache.access(k, None, int(s), float(c)) for k, s, c in zip(keys, unit if sizes is None else sizes, costs)
        ]
    future: Sequence[Optional[int]] = next_use_reference(keys) if policy in OFFLINE else [None] * len(keys)
    if sizes is not None:
        return [cache.access(k, n, int(s)) for k, n, s in zip(keys, future, sizes)]
    if policy in OFFLINE:
        return [cache.access(k, n) for k, n in zip(keys, future)]
    return [cache.access(k) for k in keys]


# The classes are exported by their registry rows: a new policy needs no line here.
__all__ = [
    "GDSF_SCALE",
    "NEVER",
    "POLICY_CLASSES",
    "make",
    "replay",
    *(cls.__name__ for cls in POLICY_CLASSES.values()),
]
