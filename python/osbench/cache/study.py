"""Which policy wins where: every policy of the catalogue on the access patterns of the
lecture's section 4.3 and on real traces, side by side.

The lecture's point ("every policy breaks somewhere; look at the access pattern first") is only
as good as the set of policies one can put side by side. :func:`wins_table` replays every
policy (:data:`osbench.cache.POLICIES`, OPT and Belady-size included as the ceiling) on each
workload of :func:`workloads` at one capacity per workload, and names the winners among the
online policies. A randomised policy is replayed at :data:`SEEDS` seeds: its cell is the mean,
and it counts as a winner when its best seed reaches the top (one seed alone does not resolve
it from the others). Deterministic policies tie only when their hit counts are equal.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from osbench import datasets, traces
from osbench._format import number
from osbench._table import Table
from osbench.cache.policies import OFFLINE, POLICIES, RANDOMISED
from osbench.cache.replay import replay_grid
from osbench.serve.requests import Requests

SEEDS = (1, 2, 3)
"""The seeds each randomised policy is replayed at."""


@dataclass(frozen=True)
class Workload:
    """One column of the table: a trace and the capacity (objects) it is replayed at."""

    name: str
    trace: traces.Trace
    capacity: int
    source: str
    """Where the trace comes from: the generator's call, or the dataset's name."""


def workloads(quick: bool = False, seed: int = 1) -> tuple[list[Workload], list[str]]:
    """The workloads of :func:`wins_table`, and a note for each real dataset that is not
    available here. Synthetic ones hold 10,000 keys (a hot set of 800) at capacity 1,000; the
    real ones are replayed at a tenth of their distinct objects."""
    length = 100_000 if quick else 1_000_000
    capacity = 1_000
    keys, accesses = number(10_000), number(length)
    found = [
        Workload(
            "Zipf(0.8)",
            traces.zipf(10_000, 0.8, length, seed=seed),
            capacity,
            f"Zipf(0.8) over {keys} keys, {accesses} accesses",
        ),
        Workload(
            "Zipf(1.2)",
            traces.zipf(10_000, 1.2, length, seed=seed),
            capacity,
            f"Zipf(1.2) over {keys} keys, {accesses} accesses",
        ),
        Workload(
            "loop of 1,100",
            traces.loop(1_100, length),
            capacity,
            f"keys 0 to {number(1_099)} in a cycle, {accesses} accesses",
        ),
        Workload(
            "hot 800 + scans",
            traces.scan(800, length, scan_length=2_000, period=4_000, seed=seed),
            capacity,
            f"800 hot keys, a one-off scan of {number(2_000)} every {number(4_000)} accesses, {accesses} accesses",
        ),
        Workload(
            "hot 800 drifting",
            traces.drift(10_000, length, n_hot=800, phases=5, seed=seed),
            capacity,
            f"800 hot keys of {keys} moving in 5 phases, {accesses} accesses",
        ),
    ]
    missing = []
    path, _ = datasets.try_fetch("cloudphysics")
    if path is None:
        missing.append("cloudphysics")
    else:
        t = traces.read_oracle_general(path)
        found.append(Workload("CloudPhysics block I/O", t, max(1, t.n_distinct // 10), "the cloudphysics dataset"))
    kv = _kv_blocks("mooncake-conversation")
    if kv is None:
        missing.append("mooncake-conversation")
    else:
        found.append(
            Workload("Mooncake KV blocks", kv, max(1, kv.n_distinct // 10), "the mooncake-conversation dataset")
        )
    return found, missing


def _kv_blocks(name: str) -> Optional[traces.Trace]:
    """The KV blocks a prefix cache is asked for, in arrival order: each request's prompt
    blocks (Mooncake's ``hash_ids``, one id per 512-token block) one after another."""
    if datasets.try_fetch(name)[0] is None:
        return None
    requests = Requests.read(name)
    return traces.Trace(np.asarray(requests.block_ids, dtype=np.int64), name=f"{name} KV blocks")


def hit_ratios(workload: Workload, policies: tuple[str, ...] = POLICIES) -> dict[str, list[float]]:
    """Every policy's hit ratio on ``workload``: one per seed of :data:`SEEDS` for a randomised
    policy, one otherwise."""
    fixed = [p for p in policies if p not in RANDOMISED]
    ratios = {r.policy: [r.hit_ratio] for r in replay_grid(workload.trace, fixed, [workload.capacity])}
    for seed in SEEDS:
        for r in replay_grid(workload.trace, [p for p in policies if p in RANDOMISED], [workload.capacity], seed=seed):
            ratios.setdefault(r.policy, []).append(r.hit_ratio)
    return {p: ratios[p] for p in policies}


def winners(ratios: dict[str, list[float]]) -> list[str]:
    """The online policies that hit most: every deterministic one at the top hit ratio, and
    every randomised one whose best seed reaches it."""
    online = {p: r for p, r in ratios.items() if p not in OFFLINE}
    top = max(_score(p, r) for p, r in online.items())
    return [p for p, r in online.items() if max(r) >= top]


def _score(policy: str, ratios: list[float]) -> float:
    return float(np.mean(ratios)) if policy in RANDOMISED else ratios[0]


def runner_up(ratios: dict[str, list[float]]) -> tuple[str, float]:
    """The online policy that hits most after the winners, and the winners' lead over it in
    points; ``("", 0.0)`` when every online policy wins."""
    top = winners(ratios)
    rest = {p: _score(p, r) for p, r in ratios.items() if p not in OFFLINE and p not in top}
    if not rest:
        return "", 0.0
    second = max(rest, key=lambda p: rest[p])
    return second, 100 * (max(_score(p, ratios[p]) for p in top) - rest[second])


def wins_table(quick: bool = False, seed: int = 1) -> Table:
    """Every policy's hit ratio (%) on every workload of :func:`workloads`, with the winners of
    each; the note names the winners and says whether one policy wins everywhere."""
    found, missing = workloads(quick, seed)
    results = {w.name: hit_ratios(w) for w in found}
    best = {name: winners(r) for name, r in results.items()}
    rows: list[list[object]] = [
        [p + (" (offline)" if p in OFFLINE else "")] + [float(np.mean(results[w.name][p])) for w in found]
        for p in POLICIES
    ]
    rows.append(["wins"] + [", ".join(best[w.name]) for w in found])
    seconds = {name: runner_up(r) for name, r in results.items()}
    # The lead in hits: exact for deterministic policies, where points can read as a tie.
    more = {w.name: round(seconds[w.name][1] / 100 * len(w.trace)) for w in found}
    rows.append(
        ["lead over the next"] + [f"{number(more[n])} hits over {p}" if p else "" for n, (p, _) in seconds.items()]
    )
    everywhere = set.intersection(*(set(b) for b in best.values())) if best else set()
    verdict = (
        f"{', '.join(sorted(everywhere))} hits most on every workload here"
        if everywhere
        else "No online policy hits most on every workload"
    )
    where = "; ".join(
        f"{', '.join(b)} on {name}"
        + (f" ({number(more[name])} more hits than {seconds[name][0]})" if seconds[name][0] else "")
        for name, b in best.items()
    )
    note = (
        f"{verdict}: {where}. Each column is one trace at one capacity (the header says which); "
        f"randomised policies ({', '.join(RANDOMISED)}) are the mean over seeds {', '.join(map(str, SEEDS))}, "
        "and win when their best seed reaches the top."
    )
    if missing:
        note += " " + datasets.missing_note(missing)
    return Table(
        "Which policy wins where (hit %, every policy)",
        ["policy", *(f"{w.name} (capacity {number(w.capacity)})" for w in found)],
        rows,
        note=note,
        key="wins",
        units={f"{w.name} (capacity {number(w.capacity)})": "%" for w in found},
        setup="; ".join(f"{w.name}: {w.source}" for w in found),
        seed=seed,
        extra={
            "workloads": [{"name": w.name, "source": w.source, "capacity": w.capacity} for w in found],
            "winners": best,
            "runner_up": {
                name: {"policy": p, "lead_points": lead, "more_hits": more[name]} for name, (p, lead) in seconds.items()
            },
            "hit_ratio_by_seed": results,
        },
    )
