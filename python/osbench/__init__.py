"""osbench: the OS ideas behind LLM inference systems, runnable, exact and fast.

Topics, in the lecture's order, each a subpackage with the same shape (public functions that
take ``engine="native"`` or ``engine="reference"``, a readable ``reference`` module, and the
lecture's demo in ``lecture``):

- :mod:`osbench.host`: threads, processes, the GIL, page faults and memory latency, measured here.
- :mod:`osbench.sched`: one server under each policy of ``osbench.sched.POLICIES``; M/G/1 theory.
- :mod:`osbench.mem`: address translation, block tables, allocators, copy-on-write, thrashing.
- :mod:`osbench.cache`: cache replacement (``osbench.cache.POLICIES``); replays, curves, online caches.
- :mod:`osbench.radix`: the radix-tree prefix cache (RadixAttention); request replays.
- :mod:`osbench.serve`: an LLM serving engine: continuous batching, paged KV cache, prefix caching.
- :mod:`osbench.traces`: trace generators, readers and writers, the :class:`~osbench.traces.Trace` wrapper.
- :mod:`osbench.datasets`: the public traces, fetched once and checked by their SHA-256.
- :mod:`osbench.progress`: the progress of long native calls, for progress bars.
"""

from osbench import _native, cache, datasets, host, mem, progress, radix, sched, serve, traces

__version__: str = _native.__version__
BUILD_PROFILE: str = _native.BUILD_PROFILE

__all__ = [
    "BUILD_PROFILE",
    "__version__",
    "cache",
    "datasets",
    "host",
    "mem",
    "progress",
    "radix",
    "sched",
    "serve",
    "traces",
]
