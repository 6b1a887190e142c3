"""Cache replacement: replay a trace through a policy, hit-ratio curves, online caches.

Lecture section 4. The policies (``POLICIES``, from the native core's one table: see
:mod:`osbench.cache.policies` for what each takes) are the classic FIFO, LRU, LFU, CLOCK, ARC
and OPT and the modern ones, with libCacheSim's definitions and defaults, miss for miss. Their
definitions, tie-breaks included, are in :mod:`osbench.cache.reference`, the readable engine,
one file per policy; the native engine runs the same algorithms in Rust on dense ids and
agrees hit for hit.

- :func:`replay` (:mod:`.replay`), :func:`stream`: one policy, one capacity, in memory or
  streamed from a file; :func:`replay_grid`: many policies and capacities at once, on every CPU.
- :func:`curve` (:mod:`.curve`): many capacities at once, exact or sampled
  (:func:`spatial_sample`, SHARDS, :mod:`.shards`).
- :func:`new` (:mod:`.online`): an online cache, one access at a time.
- :mod:`.sweep`: studies over many (trace, policy, capacity) cells, resumable.
- ``admission=`` on each of them: an admission filter in front of the cache (``ADMISSIONS``,
  :mod:`.admission`: size, probabilistic, size-probabilistic, one-hit-wonder, AdaptSize).

>>> import osbench as ob
>>> ob.cache.replay(ob.traces.belady_sequence(), "fifo", 3).misses
9
"""

from osbench.cache import reference, sweep
from osbench.cache.admission import (
    ADMISSION_LIBCACHESIM_NAMES,
    ADMISSION_PARAMETERS,
    ADMISSION_TABLE,
    ADMISSIONS,
    AdmissionInfo,
)
from osbench.cache.curve import curve
from osbench.cache.online import OnlineCache, new
from osbench.cache.policies import (
    COSTED_POLICIES,
    HASHES_KEYS,
    LIBCACHESIM_NAMES,
    LIBCACHESIM_STATISTICAL,
    MIN_CAPACITY,
    OFFLINE,
    PARAMETERS,
    POLICIES,
    RANDOMISED,
    TABLE,
    PolicyInfo,
)
from osbench.cache.replay import Replay, replay, replay_grid, stream
from osbench.cache.shards import SAMPLE_BITS, SHARDS_MIN_OBJECTS, spatial_sample

__all__ = [
    "ADMISSIONS",
    "ADMISSION_LIBCACHESIM_NAMES",
    "ADMISSION_PARAMETERS",
    "ADMISSION_TABLE",
    "COSTED_POLICIES",
    "HASHES_KEYS",
    "LIBCACHESIM_NAMES",
    "LIBCACHESIM_STATISTICAL",
    "MIN_CAPACITY",
    "OFFLINE",
    "PARAMETERS",
    "POLICIES",
    "RANDOMISED",
    "SAMPLE_BITS",
    "SHARDS_MIN_OBJECTS",
    "TABLE",
    "AdmissionInfo",
    "OnlineCache",
    "PolicyInfo",
    "Replay",
    "curve",
    "new",
    "reference",
    "replay",
    "replay_grid",
    "spatial_sample",
    "stream",
    "sweep",
]
