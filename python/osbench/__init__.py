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

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from osbench import _native, _startup

_startup.install()  # first: Ctrl-C while the osbench command starts exits 130, in one line

if TYPE_CHECKING:
    from osbench import cache, datasets, host, mem, progress, radix, report, sched, serve, traces

__version__: str = _native.__version__
BUILD_PROFILE: str = _native.BUILD_PROFILE

TOPICS = ("cache", "datasets", "host", "mem", "progress", "radix", "report", "sched", "serve", "traces")
"""The subpackages, each imported on first use (``ob.cache``): ``import osbench`` stays fast, and a
command pays only for the topics it uses."""


def __getattr__(name: str) -> Any:
    if name in TOPICS:
        return importlib.import_module(f"osbench.{name}")
    raise AttributeError(f"module 'osbench' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *TOPICS])


__all__ = [
    "BUILD_PROFILE",
    "TOPICS",
    "__version__",
    "cache",
    "datasets",
    "host",
    "mem",
    "progress",
    "radix",
    "report",
    "sched",
    "serve",
    "traces",
]
