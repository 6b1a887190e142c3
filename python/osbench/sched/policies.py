"""The scheduling policies: names, the parameters each reads, whether it preempts.

All derived from the native core's policy table (``_native.SCHED_POLICIES``), the one place a
policy is declared; :mod:`osbench.sched.reference` keeps a registry of the same names (a test
holds the two together).
"""

from __future__ import annotations

from osbench import _native

POLICIES: tuple[str, ...] = tuple(name for name, _, _ in _native.SCHED_POLICIES)
"""Every policy name, lower case, in the order users see them."""

PARAMETERS: dict[str, frozenset[str]] = {name: frozenset(reads) for name, reads, _ in _native.SCHED_POLICIES}
"""The parameters each policy reads (any other must keep its default)."""

PREEMPTIVE: dict[str, bool] = {name: preemptive for name, _, preemptive in _native.SCHED_POLICIES}
"""Whether an arrival may preempt the running job, per policy."""

__all__ = ["PARAMETERS", "POLICIES", "PREEMPTIVE"]
