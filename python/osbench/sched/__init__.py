"""CPU scheduling on one server: workloads, every policy of the lecture, theory beside them.

Lecture section 2. Policies: ``POLICIES`` (from the native core's table; the parameters each
reads in ``PARAMETERS``); their rules, tie-breaks included, are in
:mod:`osbench.sched.reference`, the readable engine. The native engine runs the same event
loop in Rust and gives bit-equal completion times.

>>> import osbench as ob
>>> s = ob.sched.simulate(ob.sched.Workload.batch([8, 4, 2, 1]), "rr", quantum=1.0)
>>> float(s.completion.mean())
9.25
"""

from osbench.sched import reference
from osbench.sched.dists import DISTRIBUTIONS, SizeDist, size_dist
from osbench.sched.policies import PARAMETERS, POLICIES, PREEMPTIVE
from osbench.sched.schedule import Schedule, Summary, simulate, timeline
from osbench.sched.theory import THEORY_POLICIES, slowdown_largest, theory
from osbench.sched.workload import Workload, workload

__all__ = [
    "DISTRIBUTIONS",
    "PARAMETERS",
    "POLICIES",
    "PREEMPTIVE",
    "THEORY_POLICIES",
    "Schedule",
    "SizeDist",
    "Summary",
    "Workload",
    "reference",
    "simulate",
    "size_dist",
    "slowdown_largest",
    "theory",
    "timeline",
    "workload",
]
