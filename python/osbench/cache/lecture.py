"""Lecture demo 04: caching and eviction (section 4), reproduced.

1. Zipf(0.8) over 1,000 keys, 30,000 accesses, capacity 100: the hit ratio of every policy
   and the mean access cost with hit cost 1 and miss cost 100.
2. Where each policy breaks (capacity 100): a loop slightly larger than the cache, a hot set
   polluted by one-time scans, and a hot set that drifts.
3. Belady's anomaly: FIFO misses more with 4 frames than with 3; LRU and OPT do not.
"""

from __future__ import annotations

from osbench import traces
from osbench._table import Table
from osbench.cache.policies import POLICIES
from osbench.cache.replay import replay

# What the lecture prints (section 4.1 and 4.2), for the side-by-side column.
LECTURE_ZIPF_HIT_RATIO = {"lru": 0.379, "arc": 0.458, "opt": 0.627}
HIT_COST, MISS_COST = 1.0, 100.0
CAPACITY = 100


def mean_cost(hit_ratio: float, hit_cost: float = HIT_COST, miss_cost: float = MISS_COST) -> float:
    """Mean access cost = hit ratio x hit cost + (1 - hit ratio) x miss cost."""
    return hit_ratio * hit_cost + (1.0 - hit_ratio) * miss_cost


def zipf_table(engine: str = "native", seed: int = 1) -> Table:
    trace = traces.zipf(1000, 0.8, 30_000, seed=seed)
    rows = []
    for p in POLICIES:
        r = replay(trace, p, CAPACITY, engine=engine)
        lecture = LECTURE_ZIPF_HIT_RATIO.get(p)
        rows.append(
            [
                p,
                round(100 * r.hit_ratio, 1),
                round(mean_cost(r.hit_ratio), 1),
                "" if lecture is None else round(100 * lecture, 1),
            ]
        )
    return Table(
        "Demo 1: Zipf(0.8), 1,000 keys, 30,000 accesses, capacity 100",
        ["policy", "hit %", "mean cost (hit 1, miss 100)", "lecture hit %"],
        rows,
        note="The mean cost is set almost entirely by the miss ratio; OPT is the ceiling no online policy reaches.",
        key="zipf",
        setup="Zipf(0.8) over 1,000 keys, 30,000 accesses, capacity 100",
        seed=seed,
    )


def breakdown_workloads(seed: int = 1) -> dict[str, traces.Trace]:
    """The three access patterns of demo 2, each 30,000 accesses."""
    return {
        "loop of 110 keys": traces.loop(110, 30_000),
        "hot 80 + one-off scans of 200": traces.scan(80, 30_000, scan_length=200, period=400, seed=seed),
        "hot set of 80 drifting, 5 phases": traces.drift(1000, 30_000, n_hot=80, phases=5, seed=seed),
    }


def breakdown_table(engine: str = "native", seed: int = 1) -> Table:
    rows = []
    for name, trace in breakdown_workloads(seed).items():
        rows.append([name] + [round(100 * replay(trace, p, CAPACITY, engine=engine).hit_ratio, 1) for p in POLICIES])
    return Table(
        "Demo 2: where each policy breaks (capacity 100, hit %)",
        ["workload", *list(POLICIES)],
        rows,
        note=(
            "A loop just larger than the cache defeats every online policy; scans flush LRU's hot set "
            "while LFU and ARC keep it; when the hot set drifts LFU clings to stale counts, LRU follows "
            "and ARC adapts."
        ),
        key="breakdown",
        setup="30,000 accesses each, capacity 100",
        seed=seed,
    )


def belady_table(engine: str = "native") -> Table:
    seq = traces.belady_sequence()
    rows = [
        [p, replay(seq, p, 3, engine=engine).misses, replay(seq, p, 4, engine=engine).misses]
        for p in ("fifo", "lru", "opt")
    ]
    return Table(
        "Demo 3: Belady's anomaly on 1,2,3,4,1,2,5,1,2,3,4,5 (misses)",
        ["policy", "3 frames", "4 frames"],
        rows,
        note="FIFO misses more with more room; LRU and OPT are stack algorithms and never do.",
        key="belady",
    )


def tables(quick: bool = False, engine: str = "native") -> list[Table]:
    """Every table of demo 04 (all are lecture scale, so ``quick`` changes nothing)."""
    return [zipf_table(engine), breakdown_table(engine), belady_table(engine)]
