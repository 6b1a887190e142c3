"""The cache policies and what is known about each, from the core's one table.

The native core declares every policy once, in one table (``rust/osbench-core/src/cache/
policies/mod.rs``): its name, the smallest capacity it takes, whether it is offline, whether it
takes costs, the parameters it reads (each with its default and what it accepts), and the
libCacheSim class that agrees with it miss for miss. Every list and check in Python is derived
from that table here; nothing is written twice.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Optional, TypeVar, Union

from osbench import _checks, _native
from osbench.errors import ArgumentError

_Info = TypeVar("_Info")


@dataclass(frozen=True)
class Parameter:
    """One parameter a policy reads, as the core's table declares it."""

    name: str
    """The keyword users give."""
    kind: str
    """``"flag"`` (True or False), ``"int"`` or ``"real"`` (an int is taken as the same real)."""
    default: Union[bool, int, float]
    accepts: str
    """What it accepts, in words (``"an integer from 1 to 64"``)."""
    doc: str
    """What it sets."""


@dataclass(frozen=True)
class PolicyInfo:
    """One row of the policy table."""

    name: str
    """The name users give, lower case."""
    min_capacity: int
    """The smallest capacity: below it a queue of the policy would hold no object."""
    offline: bool
    """It needs each access's next use (the future), so it has no online form."""
    takes_costs: bool
    """It takes one cost per access (the price of bringing the object in)."""
    params: dict[str, Parameter]
    """The keyword parameters it reads, by name (``bit_on_insert``, ``k``...); it refuses the
    others."""
    libcachesim: Optional[str]
    """The class of libCacheSim (and its Python package ``libcachesim``) whose miss counts
    agrees with ours: miss for miss, or in distribution when :attr:`randomised`; if there is one."""
    randomised: bool
    """It draws random numbers from its ``seed`` parameter: one seed, one sequence of misses in
    both engines; its libCacheSim class (another generator) agrees with it in distribution only."""
    hashes_keys: bool
    """It hashes the trace's own keys, as libCacheSim hashes its object ids (W-TinyLFU's
    sketch): the native engine hands it the key of each dense id."""

    @property
    def reads(self) -> tuple[str, ...]:
        """The names of the parameters it reads."""
        return tuple(self.params)


def from_row(info: type[_Info], row: Mapping[str, Any]) -> _Info:
    """The ``info`` dataclass (:class:`PolicyInfo`, :class:`osbench.cache.AdmissionInfo`) of one
    row of a table the core exports: each field is the row's entry of its name, ``params`` made
    :class:`Parameter` rows (the row's other entries are left out)."""
    fields = {f.name: row[f.name] for f in dataclasses.fields(info)}  # type: ignore[arg-type]
    fields["params"] = {p["name"]: Parameter(**p) for p in row["params"]}
    return info(**fields)


TABLE: dict[str, PolicyInfo] = {row["name"]: from_row(PolicyInfo, row) for row in _native.CACHE_POLICIES}
"""Every policy's row, by name, in the order users see them."""

POLICIES: tuple[str, ...] = tuple(TABLE)
"""Every policy name, lower case. Every policy takes object sizes (``sizes=``)."""

MIN_CAPACITY: dict[str, int] = {p.name: p.min_capacity for p in TABLE.values() if p.min_capacity > 1}
"""Policies refusing small capacities at their default parameters: S3-FIFO's small queue (10%)
and 2Q's Ain (25%) must hold at least one object (libCacheSim aborts, or caches nothing, below
these). Some minimums move with a parameter (SLRU's with its segment count)."""

OFFLINE: frozenset[str] = frozenset(p.name for p in TABLE.values() if p.offline)
"""Policies that need the future (each access's next use) and so have no online form."""

COSTED_POLICIES: tuple[str, ...] = tuple(p.name for p in TABLE.values() if p.takes_costs)
"""Policies that take ``costs=`` (one cost per access: the price of bringing the object in,
e.g. the prefill recompute cost of a KV block; GDSF keeps objects by cost per byte)."""

PARAMETERS: dict[str, tuple[str, ...]] = {p.name: p.reads for p in TABLE.values()}
"""The keyword parameters each policy reads (``bit_on_insert`` for CLOCK, ``k`` for LRU-K...);
the others refuse them. Their defaults and ranges: ``TABLE[policy].params``."""

PARAMETER_NAMES: frozenset[str] = frozenset(name for names in PARAMETERS.values() for name in names)
"""Every policy parameter's name (the keywords the cache functions take besides their own)."""

LIBCACHESIM_NAMES: dict[str, str] = {
    p.name: p.libcachesim for p in TABLE.values() if p.libcachesim and not p.randomised
}
"""Each policy's class in libCacheSim (and its Python package ``libcachesim``), whose miss
counts equal ours request by request (sizes in bytes: give unit sizes for object counts)."""

RANDOMISED: tuple[str, ...] = tuple(p.name for p in TABLE.values() if p.randomised)
"""Policies that draw random numbers, from their ``seed`` parameter (splitmix64): one seed gives
one sequence of misses, the same in both engines."""

HASHES_KEYS: frozenset[str] = frozenset(p.name for p in TABLE.values() if p.hashes_keys)
"""Policies that hash the trace's own keys (libCacheSim's object ids): given a trace, the
native engine hands them the key of each dense id (:meth:`osbench.traces.Trace.id_keys`)."""

LIBCACHESIM_STATISTICAL: dict[str, str] = {
    p.name: p.libcachesim for p in TABLE.values() if p.libcachesim and p.randomised
}
"""Each randomised policy's class in libCacheSim, which draws from its own generator: its hit
ratios agree with ours in distribution (over seeds), not miss for miss."""


def parse_spec(flag: str, spec: str, params_of: Mapping[str, Mapping[str, Parameter]]) -> tuple[str, dict[str, Any]]:
    """A name and its parameters from a command line's ``NAME[:KEY=VALUE,...]`` (``lruk:k=3``,
    ``prob:prob=0.1,seed=3``), each value taken as its declared kind; ``params_of`` maps each
    accepted name to the parameters it reads. Errors name ``flag``."""
    name, _, rest = spec.partition(":")
    name = _checks.choice(flag, name.strip().lower(), tuple(params_of))
    declared_params = params_of[name]
    params: dict[str, Any] = {}
    for item in filter(None, (p.strip() for p in rest.split(","))):
        key, eq, text = item.partition("=")
        key = key.strip().lower().replace("-", "_")
        declared = declared_params.get(key)
        if not eq or declared is None:
            reads = ", ".join(declared_params) or "none"
            raise ArgumentError(f"{flag} {spec!r} is not accepted: {item!r} is not KEY=VALUE of {name} ({reads})")
        try:
            params[key] = (
                int(text) if declared.kind == "int" else float(text) if declared.kind == "real" else _flag(text)
            )
        except ValueError:
            raise ArgumentError(f"{flag} {spec!r} is not accepted: {key}={text!r}: {declared.accepts}") from None
    return name, params


def parse(spec: str) -> tuple[str, dict[str, Any]]:
    """A policy and its parameters from a command line's ``--policy NAME[:KEY=VALUE,...]``
    (``lruk:k=3``, ``slru:segments=2``)."""
    return parse_spec("--policy", spec, {name: row.params for name, row in TABLE.items()})


def _flag(text: str) -> bool:
    if text.lower() in ("true", "1", "yes"):
        return True
    if text.lower() in ("false", "0", "no"):
        return False
    raise ValueError(text)
