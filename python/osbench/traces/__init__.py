"""Traces: the :class:`Trace` wrapper and the generators the lecture uses.

A trace is a sequence of keys. Every cache function takes a :class:`Trace` or any 1-D
array-like of integers (the full int64 and uint64 range; the reference engine also takes any
hashable keys). A :class:`Trace` maps its keys to dense ids and computes each access's next use
once, and keeps them, so one trace replayed through many policies and capacities pays for that
once.

Every generator takes a ``seed`` and draws from ``numpy.random.default_rng(seed)``: the same
seed gives the same trace, whichever engine replays it.
"""

from osbench.traces.formats import ORACLE_GENERAL, TraceFileError
from osbench.traces.formats.registry import FORMATS, read, read_oracle_general, write, write_oracle_general
from osbench.traces.generators import belady_sequence, drift, loop, scan, zipf
from osbench.traces.trace import NEVER, Trace, as_trace, next_use_reference

__all__ = [
    "FORMATS",
    "NEVER",
    "ORACLE_GENERAL",
    "Trace",
    "TraceFileError",
    "as_trace",
    "belady_sequence",
    "drift",
    "loop",
    "next_use_reference",
    "read",
    "read_oracle_general",
    "scan",
    "write",
    "write_oracle_general",
    "zipf",
]
