"""osbench: the OS ideas behind LLM inference systems, runnable, exact and fast.

Topics, each a subpackage with the same shape (public functions that take
``engine="native"`` or ``engine="reference"``, a readable ``reference`` module, and the
lecture's demo in ``lecture``):

- :mod:`osbench.cache`: FIFO, LRU, LFU, CLOCK, ARC and Belady's OPT; replays and curves.
- :mod:`osbench.mem`: translation, block tables, allocators, copy-on-write, thrashing.
- :mod:`osbench.traces`: trace generators and the :class:`~osbench.traces.Trace` wrapper.
"""

from osbench import _native, cache, mem, traces

__version__: str = _native.__version__
BUILD_PROFILE: str = _native.BUILD_PROFILE

__all__ = ["cache", "mem", "traces", "__version__", "BUILD_PROFILE"]
