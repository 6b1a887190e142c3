"""Admission filters and what each takes, from the core's one table; the check of the
``admission=`` and ``admission_params=`` arguments every cache function takes.

A filter is a second axis beside the policy: on each miss it decides whether the object may
enter the cache at all (a rejected object is a miss left out of the cache). Every policy takes
every filter, in libCacheSim's order (``cache_get_base``): the policy looks the object up, the
filter sees the access, and on a miss the filter is asked, before the cache's size check.
The native core declares each filter once (``rust/osbench-core/src/cache/admission/mod.rs``):
its name, its parameters (with defaults and ranges), the libCacheSim admissioner it reproduces
and whether it draws random numbers; every list and check here is derived from that table.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Optional

from osbench import _checks, _native
from osbench.cache.policies import Parameter, from_row, parse_spec
from osbench.errors import ArgumentError, ArgumentTypeError


@dataclass(frozen=True)
class AdmissionInfo:
    """One row of the filter table."""

    name: str
    """The name users give (``admission=``), lower case."""
    params: dict[str, Parameter]
    """Its parameters by name (``admission_params=``): the others are refused."""
    libcachesim: str
    """The admissioner class of libCacheSim's Python package it reproduces."""
    seeded: bool
    """It draws random numbers from its ``seed``: equal to libCacheSim in distribution (over
    runs), not miss for miss; the others are equal miss for miss."""
    doc: str
    """What it admits, in a line."""


ADMISSION_TABLE: dict[str, AdmissionInfo] = {
    row["name"]: from_row(AdmissionInfo, row) for row in _native.CACHE_ADMISSIONS
}
"""Every filter's row, by name, in the order users see them."""

ADMISSIONS: tuple[str, ...] = tuple(ADMISSION_TABLE)
"""Every admission filter's name: ``size``, ``prob``, ``sizeprob``, ``bloom``, ``adaptsize``."""

ADMISSION_PARAMETERS: dict[str, tuple[str, ...]] = {f.name: tuple(f.params) for f in ADMISSION_TABLE.values()}
"""The parameters each filter reads (``admission_params=`` keys)."""

ADMISSION_LIBCACHESIM_NAMES: dict[str, str] = {f.name: f.libcachesim for f in ADMISSION_TABLE.values()}
"""Each filter's admissioner class in libCacheSim's Python package (``libcachesim``)."""

_KINDS = {
    "flag": lambda v: isinstance(v, bool),
    "int": lambda v: isinstance(v, numbers.Integral) and not isinstance(v, bool),
    "real": lambda v: isinstance(v, numbers.Real) and not isinstance(v, bool),
}


def check(admission: Any, admission_params: Any) -> tuple[Optional[str], dict[str, Any]]:
    """The filter named by ``admission`` (None: no filter) and its parameters resolved by its
    row: those in ``admission_params`` (each one it reads, of its kind, in its range), the
    others at their defaults."""
    if admission is None:
        if admission_params:
            raise ArgumentError(
                f"admission_params={admission_params!r} is not accepted without admission: name the filter "
                f"(one of {', '.join(ADMISSIONS)})"
            )
        return None, {}
    name = _checks.choice("admission", admission, ADMISSIONS)
    if admission_params is None:
        admission_params = {}
    if not isinstance(admission_params, Mapping):
        raise ArgumentTypeError(
            f"admission_params={admission_params!r} is not accepted: a dict of the filter's parameters"
        )
    row = ADMISSION_TABLE[name]
    kept: dict[str, Any] = {}
    for key, value in admission_params.items():
        declared = row.params.get(key)
        if declared is None:
            reads = ", ".join(row.params) or "none"
            raise ArgumentError(
                f"admission_params[{key!r}]={value!r} is not accepted: admission {name!r} reads {reads}"
            )
        if not _KINDS[declared.kind](value):
            raise ArgumentTypeError(f"admission_params[{key!r}]={value!r} is not accepted: {declared.accepts}")
        kept[key] = int(value) if declared.kind == "int" else float(value) if declared.kind == "real" else value
    return name, dict(_native.cache_admission_parameters(name, kept))


def parse(spec: str) -> tuple[str, dict[str, Any]]:
    """A filter and its parameters from a command line's ``NAME[:KEY=VALUE,...]``
    (``prob:prob=0.1,seed=3``), each value taken as its declared kind."""
    return parse_spec("--admission", spec, {name: row.params for name, row in ADMISSION_TABLE.items()})
