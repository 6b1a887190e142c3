"""What a run found, in sentences: computed from the results (``results.json``), never written by
hand.

Each finding is one sentence with its numbers (through the one formatter) and a link to the
table or figure behind it. Where the lecture or theory disagrees with the measurement, the
finding says so (``against`` names which, ``agrees`` says whether it does).

A finding reads only ``results.json``-level data, so that two saved runs can be compared
(:mod:`osbench.report.compare`). A finding whose data is absent or damaged is left out, and the
others still stand.
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Callable, Optional

from osbench._format import duration, duration_ns, number, percent, ratio, size
from osbench._record import Record
from osbench.cache.policies import OFFLINE
from osbench.report.model import figure_anchor, table_anchor
from osbench.serve.disagg_study import KEY as DISAGG_KEY
from osbench.serve.lecture import span, tier_conclusion
from osbench.serve.slo import highest_within_slo

Results = dict[str, Any]


@dataclass(frozen=True)
class Finding(Record):
    """One sentence of the summary. ``key`` names it across runs; ``target`` is the anchor of the
    table or figure behind it, ``target_title`` that table's or figure's title."""

    key: str
    section: str
    label: str
    text: str
    target: str
    target_title: str
    against: str = ""
    """What the measurement is held to: "theory", "the lecture", or "" (nothing)."""
    agrees: Optional[bool] = None


class _Data:
    """Read access to a results dict: sections, tables by key, rows as records."""

    def __init__(self, results: Results) -> None:
        self.sections: dict[str, Any] = results["sections"]

    def section(self, key: str) -> dict[str, Any]:
        return self.sections[key]

    def table(self, section: str, key: str) -> dict[str, Any]:
        for t in self.sections[section]["tables"]:
            if t.get("key") == key:
                return t
        raise KeyError(f"{section}/{key}")

    def records(self, section: str, key: str) -> list[dict[str, Any]]:
        """The table's rows as dicts by column name (a repeated name gets " 2", " 3")."""
        t = self.table(section, key)
        names: list[str] = []
        for c in t["columns"]:
            n = sum(1 for x in names if x == c or x.startswith(f"{c} ")) + 1
            names.append(c if n == 1 else f"{c} {n}")
        return [dict(zip(names, row)) for row in t["rows"]]

    def link(self, section: str, key: str) -> tuple[str, str]:
        return table_anchor(section, key), self.table(section, key)["title"]

    def figure(self, section: str, name: str, title: str) -> tuple[str, str]:
        if name not in self.sections[section]["figures"]:
            raise KeyError(name)
        return figure_anchor(name), title


def _num(v: Any) -> float:
    """A number from the results, or ValueError (text such as "-" where none applies)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ValueError(f"not a number: {v!r}")
    x = float(v)
    if not math.isfinite(x):
        raise ValueError(f"not finite: {x}")
    return x


def _close(a: float, b: float, rel: float) -> bool:
    return abs(a - b) <= rel * abs(b)


# --- noise, ties and the impossible ------------------------------------------------------------


def leading(scores: dict[str, float], tie: float = 1e-9) -> list[str]:
    """The names with the highest score, in their order: more than one when they tie (equal to
    within ``tie``)."""
    top = max(scores.values())
    return [name for name, v in scores.items() if top - v <= tie]


def names(items: list[str]) -> str:
    """``A``, ``A and B``, ``A, B and C``."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def _load(report: dict[str, Any]) -> float:
    """The highest load average the host section recorded around its measurements."""
    return max(_num(x) for x in report["load_average"])


def _resolved(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Two measured spreads tell their medians apart: their interquartile ranges do not overlap."""
    return _num(a["p75"]) < _num(b["p25"]) or _num(b["p75"]) < _num(a["p25"])


def _spread_words(s: dict[str, Any]) -> str:
    return f"{duration_ns(_num(s['p25']))}-{duration_ns(_num(s['p75']))}"


# --- the host --------------------------------------------------------------------------------


def _round_trip(d: _Data, mechanism: str, placement: str = "same CPU") -> dict[str, Any]:
    for rt in d.section("01-host")["report"]["round_trips"]:
        if rt["mechanism"] == mechanism and rt["placement"] == placement and rt.get("spread"):
            return dict(rt)
    raise KeyError(f"{mechanism} at {placement}")


def thread_hop(d: _Data) -> Finding:
    same, cross = _round_trip(d, "thread-pipe"), _round_trip(d, "thread-pipe", "different CPUs")
    calls = [_num(same["ratio_to_call"]), _num(cross["ratio_to_call"])]
    # "Hundreds of function calls", read as the lecture's order of magnitude: within a factor of two.
    hundreds = all(50 <= c < 2000 for c in calls)
    verdict = (
        "in line with the lecture's hundreds of function calls"
        if hundreds
        else "the lecture says hundreds of function calls"
        + (", this host is cheaper" if min(calls) < 100 else ", this host is dearer")
    )
    return Finding(
        "host.thread_hop",
        "01-host",
        "A thread hop",
        f"A pipe round trip between two Python threads costs {duration_ns(_num(same['spread']['median']))} on one CPU, "
        f"about {number(calls[0], 2)} function calls, and {duration_ns(_num(cross['spread']['median']))} on different "
        f"CPUs ({number(calls[1], 2)} calls): {verdict}.",
        *d.link("01-host", "round_trips"),
        against="the lecture",
        agrees=hundreds,
    )


def process_hop(d: _Data) -> Finding:
    same, cross = _round_trip(d, "process-pipe"), _round_trip(d, "process-pipe", "different CPUs")
    native = _round_trip(d, "native-process-pipe")
    py, rust = _num(same["spread"]["median"]), _num(native["spread"]["median"])
    share = (py - rust) / py
    load = _load(d.section("01-host")["report"])
    spreads = f"Python {_spread_words(same['spread'])}, Rust {_spread_words(native['spread'])}"
    if not 0 <= share <= 1:
        # Rust's hop does less than Python's: a negative share (or above 100%) is not physical.
        share_words = (
            f"Python's share of it came out at {percent(share)}, which cannot be: a measurement problem on this "
            f"machine (load {number(load)}; interquartile ranges {spreads}), not a finding"
        )
    elif not _resolved(same["spread"], native["spread"]):
        share_words = (
            f"Python's share of it is not resolved on this machine (load {number(load)}; the interquartile ranges "
            f"overlap: {spreads})"
        )
    else:
        share_words = f"so Python's share of it is {percent(share)}"
    return Finding(
        "host.process_hop",
        "01-host",
        "A process hop",
        f"Between two processes a pipe round trip costs {duration_ns(py)} on one CPU and "
        f"{duration_ns(_num(cross['spread']['median']))} across CPUs; the same hop in Rust takes {duration_ns(rust)}, "
        f"{share_words}.",
        *d.link("01-host", "round_trips"),
    )


IMPOSSIBLE_THREADS = 1.1
"""Pure-Python threads measured above this multiple of the sequential speed: a measurement
problem (the GIL allows at most 1x), flagged as such."""


def gil(d: _Data) -> Finding:
    report = d.section("01-host")["report"]
    speed = {(r["workload"], r["way"]): _num(r["speedup"]) for r in report["gil"]["rows"]}
    cpus = int(_num(report["gil"]["usable_cpus"]))
    units = 4
    ceiling = min(units, cpus)
    threads, processes = speed[("python", "threads")], speed[("python", "processes")]
    # The lecture: pure-Python threads do not speed up; processes run in parallel.
    agrees = threads < 1.5 and processes >= 0.75 * ceiling
    load = _load(report)
    if threads > IMPOSSIBLE_THREADS:
        # The GIL runs one thread of Python at a time: faster than sequential is noise in the
        # sequential baseline, not a speed-up.
        agrees = False
        verdict = (
            f"threads faster than one thread cannot be under the GIL: a measurement problem on this machine (load "
            f"{number(load)} on {cpus} CPUs), not a finding"
        )
    elif agrees:
        verdict = "as the lecture says, only processes run Python in parallel"
    elif processes < 0.75 * ceiling and load > cpus:
        verdict = (
            f"the lecture expects processes near {ratio(ceiling)}; they fall short here, where the load average "
            f"({number(load)}) exceeded the {cpus} usable CPUs"
        )
    else:
        verdict = f"the lecture expects threads near 1x and processes near {ratio(ceiling)}; this run disagrees"
    return Finding(
        "host.gil",
        "01-host",
        "The GIL",
        f"Pure Python on {units} threads runs at {ratio(threads)} the sequential speed and on {units} processes at "
        f"{ratio(processes)}: {verdict}.",
        *d.link("01-host", "gil"),
        against="the lecture",
        agrees=agrees,
    )


def page_faults(d: _Data) -> Finding:
    by = {p["prefault"]: _num(p["ns_per_page"]["median"]) for p in d.section("01-host")["report"]["page_faults"]}
    others = [
        f"{label} {duration_ns(by[k])}"
        for k, label in (("populate", "MAP_POPULATE"), ("hugepage", "huge pages"))
        if k in by
    ]
    return Finding(
        "host.page_faults",
        "01-host",
        "Page faults",
        f"A first touch of fresh memory costs {duration_ns(by['none'])} a page, one minor fault each"
        + (f"; per page, {' and '.join(others)}" if others else "")
        + ".",
        *d.link("01-host", "page_faults"),
    )


def memory_latency(d: _Data) -> Finding:
    points = [p for p in d.section("01-host")["report"]["memory_latency"] if p.get("ns")]
    small = [p for p in points if p["pages"] == "4 KiB"]
    first, last = small[0], small[-1]
    a, b = _num(first["ns"]["median"]), _num(last["ns"]["median"])
    huge = [p for p in points if p["pages"] == "huge" and p["bytes"] == last["bytes"]]
    return Finding(
        "host.memory_latency",
        "01-host",
        "Memory latency",
        f"A dependent load takes {duration_ns(a)} in a {size(first['bytes'])} working set ({first['fits']}) and "
        f"{duration_ns(b)} in a {size(last['bytes'])} one, {ratio(b / a)} as long"
        + (f"; huge pages bring the latter to {duration_ns(_num(huge[0]['ns']['median']))}" if huge else "")
        + ".",
        *d.link("01-host", "memory_latency"),
    )


# --- scheduling ------------------------------------------------------------------------------


def srpt_vs_fcfs(d: _Data) -> Finding:
    rows = {(r["sizes"].split()[0], r["policy"]): r for r in d.records("02-sched", "distributions")}
    srpt, fcfs = rows[("lognormal", "srpt")], rows[("lognormal", "fcfs")]

    def fits(r: dict[str, Any]) -> bool:
        """Within the run's 95% confidence interval of theory, or 2% of it."""
        sim, th = _num(r["mean response"]), _num(r["theory"])
        return abs(sim - th) <= max(_num(r["95% CI +/-"]), 0.02 * th)

    agrees = fits(srpt) and fits(fcfs)
    s, f = _num(srpt["mean response"]), _num(fcfs["mean response"])
    th = f"M/G/1 theory says {number(_num(srpt['theory']))} and {number(_num(fcfs['theory']))}"
    return Finding(
        "sched.srpt_vs_fcfs",
        "02-sched",
        "SRPT vs FCFS",
        f"At load 0.8 with lognormal sizes, SRPT's mean response is {number(s)} against FCFS's {number(f)}, "
        f"{ratio(f / s)} lower; {th}" + (" (theory agrees)." if agrees else ", outside this run's 95% interval."),
        *d.link("02-sched", "distributions"),
        against="theory",
        agrees=agrees,
    )


_FIGURE_NAMES = {"slowdown largest 1%": "slowdown of the largest 1% of jobs"}
"""The lecture-vs-theory table's figures as a sentence names them."""


def lecture_schedules(d: _Data) -> Finding:
    rows = d.records("02-sched", "lecture_vs_theory")
    off = []
    for r in rows:
        lecture, ours = _num(r["lecture"]), _num(r["osbench"])
        off.append((abs(lecture - ours) / abs(ours), r))
    near = sum(1 for e, _ in off if e <= 0.1)
    worst = max(off, key=lambda x: x[0])[1]
    theory = worst["theory"]
    th = f", theory {number(_num(theory))}" if isinstance(theory, (int, float)) else ""
    return Finding(
        "sched.lecture_figures",
        "02-sched",
        "The lecture's figures",
        f"{near} of the lecture's {len(rows)} printed scheduling figures are within 10% of this run; the furthest off "
        f"is {worst['policy'].upper()}'s {_FIGURE_NAMES.get(worst['figure'], worst['figure'])} with {worst['sizes']} "
        "sizes: lecture "
        f"{number(_num(worst['lecture']))}, osbench {number(_num(worst['osbench']))}{th}.",
        *d.link("02-sched", "lecture_vs_theory"),
        against="the lecture",
        agrees=near == len(rows),
    )


def quantum(d: _Data) -> Finding:
    rows = [r for r in d.records("02-sched", "quantum_sweep") if isinstance(r["quantum"], (int, float))]
    best = min(rows, key=lambda r: _num(r["mean response"]))
    smallest = min(rows, key=lambda r: _num(r["quantum"]))
    return Finding(
        "sched.quantum",
        "02-sched",
        "The quantum",
        f"Round robin does best at quantum {number(_num(best['quantum']))} (mean response "
        f"{number(_num(best['mean response']))}); at {number(_num(smallest['quantum']))} it spends "
        f"{percent(_num(smallest['time switching']))} of the time switching and the mean response climbs to "
        f"{number(_num(smallest['mean response']))}.",
        *d.link("02-sched", "quantum_sweep"),
    )


# --- memory ----------------------------------------------------------------------------------

_LECTURE_FIGURE = re.compile(r"([\d.]+) % (\w+)")
_LECTURE_COLUMN = {"rejected": "rejected %", "internal": "internal %", "data": "holds data %"}


def reserve_vs_paging(d: _Data) -> Finding:
    rows = {r["strategy"]: r for r in d.records("03-mem", "allocation")}
    held = []

    def lecture(strategy: str) -> str:
        """The lecture's figures for a strategy, as "lecture: 86%, 12%" (each checked against ours)."""
        printed = []
        for value, word in _LECTURE_FIGURE.findall(str(rows[strategy].get("lecture", ""))):
            theirs, ours = float(value), _num(rows[strategy][_LECTURE_COLUMN[word]])
            held.append(abs(ours - theirs) <= max(0.5, 0.1 * theirs))
            printed.append(f"{number(theirs)}%")
        return f" (lecture: {', '.join(printed)})" if printed else ""

    reserve, paged = rows["reserve 400"], rows["paged, page 16"]
    text = (
        f"Reserving 400 units per request rejects {number(_num(reserve['rejected %']))}% of requests while memory "
        f"holds {number(_num(reserve['holds data %']))}% data{lecture('reserve 400')}; paging by 16 rejects "
        f"{number(_num(paged['rejected %']))}% and wastes {number(_num(paged['internal %']))}% inside pages"
        f"{lecture('paged, page 16')}; first fit rejects {number(_num(rows['first fit']['rejected %']))}%"
        f"{lecture('first fit')}."
    )
    return Finding(
        "mem.reserve_vs_paging",
        "03-mem",
        "Paging vs reserving",
        text,
        *d.link("03-mem", "allocation"),
        against="the lecture" if held else "",
        agrees=all(held) if held else None,
    )


def thrashing(d: _Data) -> Finding:
    t = d.table("03-mem", "thrashing")
    working_set = _num(t["figure"]["vline"])
    rows = sorted(d.records("03-mem", "thrashing"), key=lambda r: _num(r["memory (pages)"]))
    below = max((r for r in rows if _num(r["memory (pages)"]) <= 0.75 * working_set), key=lambda r: r["memory (pages)"])
    above = min((r for r in rows if _num(r["memory (pages)"]) >= 1.25 * working_set), key=lambda r: r["memory (pages)"])
    faults, slow = _num(above["faults %"]), _num(above["slowdown x"])
    # The lecture: above the knee about 5% still fault, and the mean access stays tens of times slower.
    agrees = 3 <= faults <= 7 and 10 <= slow < 100
    return Finding(
        "mem.thrashing",
        "03-mem",
        "Thrashing",
        f"With memory for {number(_num(below['memory (pages)']))} of a {number(working_set)}-page working set, "
        f"{number(_num(below['faults %']))}% of accesses fault and the mean access is {ratio(_num(below['slowdown x']))} "
        f"slower; with {number(_num(above['memory (pages)']))} pages {number(faults)}% still fault ({ratio(slow)} slower), "
        + (
            "as the lecture says (about 5%, tens of times slower)."
            if agrees
            else "where the lecture says about 5%, tens of times slower."
        ),
        *d.link("03-mem", "thrashing"),
        against="the lecture",
        agrees=agrees,
    )


# --- caching ---------------------------------------------------------------------------------


def best_vs_lru(d: _Data) -> Finding:
    z = d.section("04-cache")["zipf_curves"]
    caps = [_num(c) for c in z["capacities"]]
    n_keys = _num(z["trace"]["n_keys"])
    # The size nearest (on a log scale) to room for 0.1% of the keys.
    i = min(range(len(caps)), key=lambda k: abs(math.log(caps[k] / (0.001 * n_keys))))
    hits = {p: _num(v[i]) for p, v in z["hit_ratio"].items()}
    online = {p: h for p, h in hits.items() if p not in OFFLINE}
    top = leading(online)
    best = top[0]
    lru = hits["lru"]
    if "lru" in top:
        others = [p.upper() for p in top if p != "lru"]
        lead = "LRU is the best online policy" + (f" (tied with {names(others)})" if others else "")
    else:
        who = f"{names([p.upper() for p in top])} {'tie and ' if len(top) > 1 else ''}"
        lead = f"{who}hit{'' if len(top) > 1 else 's'} {number(100 * (online[best] - lru))} points more than LRU ({percent(online[best])} vs {percent(lru)})"
    return Finding(
        "cache.best_vs_lru",
        "04-cache",
        "Which policy",
        f"With room for {percent(caps[i] / n_keys)} of the {number(int(n_keys))} keys of a Zipf(1.0) trace "
        f"({number(int(caps[i]))} objects), {lead}; OPT, the ceiling, hits {percent(hits['opt'])}.",
        *d.figure("04-cache", "cache-zipf-curves", "Hit ratio by cache size, every policy, Zipf(1.0)"),
    )


def lecture_zipf(d: _Data) -> Finding:
    rows = [r for r in d.records("04-cache", "zipf") if isinstance(r["lecture hit %"], (int, float))]
    pairs = [(r["policy"], _num(r["hit %"]), _num(r["lecture hit %"])) for r in rows]
    agrees = all(abs(ours - lec) <= 0.5 for _, ours, lec in pairs)
    ours = ", ".join(f"{p.upper()} {number(h)}%" for p, h, _ in pairs)
    lecture = ", ".join(f"{number(lec)}%" for _, _, lec in pairs)
    return Finding(
        "cache.lecture_zipf",
        "04-cache",
        "The lecture's Zipf table",
        f"On the lecture's Zipf(0.8) trace at capacity 100 the hit ratios are {ours}; the lecture prints {lecture}"
        + (" (agrees within half a point)." if agrees else " (differs by more than half a point)."),
        *d.link("04-cache", "zipf"),
        against="the lecture",
        agrees=agrees,
    )


def cloudphysics(d: _Data) -> Finding:
    c = d.section("04-cache")["cloudphysics_curves"]
    caps = [_num(x) for x in c["capacities"]]
    objects = caps[-1]  # the curve runs up to every distinct object
    i = min(range(len(caps)), key=lambda k: abs(math.log(caps[k] / (0.01 * objects))))
    online = {p: _num(v[i]) for p, v in c["hit_ratio"].items() if p not in OFFLINE}
    top = leading(online)
    best = top[0]
    if len(top) == len(online):
        lead = f"every online policy hits the same ({percent(online[best])})"
    elif len(top) > 1:
        lead = f"{names([p.upper() for p in top])} tie for the most hits ({percent(online[best])})"
    else:
        lead = f"{best.upper()} hits most ({percent(online[best])})"
    return Finding(
        "cache.cloudphysics",
        "04-cache",
        "A real block trace",
        f"On the CloudPhysics block I/O trace with room for {percent(caps[i] / objects)} of its objects "
        f"({number(int(caps[i]))}), {lead}, {number(100 * (online[best] - online['lru']))} points more than LRU.",
        *d.figure("04-cache", "cache-cloudphysics-curves", "Hit ratio by cache size on the CloudPhysics trace"),
    )


def wins_where(d: _Data) -> Finding:
    t = d.table("04-cache", "wins")
    winners, second = t["winners"], t["runner_up"]
    every = set.intersection(*(set(w) for w in winners.values()))
    where = "; ".join(
        f"{names([p.upper() for p in w])} on {name}"
        + (
            f" ({number(int(_num(second[name]['more_hits'])))} more hits than {second[name]['policy'].upper()})"
            if second[name]["policy"]
            else ""
        )
        for name, w in winners.items()
    )
    lead = (
        f"{names(sorted(p.upper() for p in every))} hits most on all {len(winners)} workloads"
        if every
        else f"No online policy hits most on all {len(winners)} workloads"
    )
    return Finding(
        "cache.wins_where",
        "04-cache",
        "Which policy wins where",
        f"{lead}: {where}.",
        *d.link("04-cache", "wins"),
        against="the lecture",
        agrees=not every,
    )


# --- radix trees -----------------------------------------------------------------------------


def sharing(d: _Data) -> Finding:
    rows = {r[""]: r for r in d.records("05-radix", "05-2")}
    ours, lecture = rows["osbench"], rows["lecture"]
    saving, printed = _num(ours["saving (x)"]), _num(lecture["saving (x)"])
    agrees = _close(saving, printed, 0.1)
    return Finding(
        "radix.sharing",
        "05-radix",
        "Prefix sharing",
        f"Sharing prefixes in a radix tree stores {ratio(saving)} fewer tokens than one copy per request "
        f"({number(int(_num(ours['tokens, shared prefixes'])))} vs {number(int(_num(ours['tokens, one copy per request'])))} "
        f"for {number(int(_num(ours['requests'])))} requests); the lecture's workload saves {ratio(printed)}"
        + (" (agrees within 10%)." if agrees else " (differs by more than 10%)."),
        *d.link("05-radix", "05-2"),
        against="the lecture",
        agrees=agrees,
    )


def prefix_vs_whole(d: _Data) -> Finding:
    curves = d.table("05-radix", "05-4")["curves"]
    caps = curves["capacities"]
    at500, unlimited = caps.index(500), caps.index(None)
    prefix, whole = _num(curves["prefix"][at500]), _num(curves["whole"][at500])
    big = _num(curves["prefix_outputs"][unlimited])
    # The lecture: whole 0%; prefix 63% at 500 tokens, 89% when large.
    agrees = abs(prefix - 0.63) <= 0.05 and abs(big - 0.89) <= 0.05 and whole == 0
    return Finding(
        "radix.prefix_vs_whole",
        "05-radix",
        "Prefix vs whole prompt",
        f"With 500 tokens of room a prefix cache hits {percent(prefix)} of prompt tokens where whole-prompt matching "
        f"hits {percent(whole)}, and {percent(big)} when unlimited (outputs stored too); the lecture prints 63% and 89%"
        + (" (agrees within 5 points)." if agrees else " (differs by more than 5 points)."),
        *d.link("05-radix", "05-4"),
        against="the lecture",
        agrees=agrees,
    )


def mooncake(d: _Data) -> Finding:
    m = d.section("05-radix")["mooncake"]["mooncake-conversation"]
    caps = [_num(c) for c in m["capacities_blocks"]]
    i = caps.index(10_000)
    return Finding(
        "radix.mooncake",
        "05-radix",
        "A production trace",
        f"On Mooncake's conversation trace a prefix cache of {number(10_000)} blocks ({number(10_000 * 512)} tokens) "
        f"hits {percent(_num(m['hit_ratio'][i]))} of prompt blocks, and {percent(_num(m['hit_ratio'][-1]))} with "
        f"{number(int(caps[-1]))}.",
        *d.figure("05-radix", "radix-mooncake-curve", "Hit ratio of a block-level prefix cache on Mooncake's traces"),
    )


# --- serving ---------------------------------------------------------------------------------


def _slo(t: dict[str, Any]) -> tuple[float, float, str]:
    ttft, tpot = _num(t["slo_ttft"]), _num(t["slo_tpot"])
    return ttft, tpot, f"TTFT at most {duration(ttft)} and TPOT at most {duration(tpot)}"


def serve_rate(d: _Data) -> Finding:
    t = d.table("06-serve", "rate_sweep")
    slo_ttft, slo_tpot, words = _slo(t)
    rows = sorted(d.records("06-serve", "rate_sweep"), key=lambda r: _num(r["requests/s"]))
    best = highest_within_slo(rows, slo_ttft, slo_tpot, value=_num)
    beyond = [r for r in rows if best is None or _num(r["requests/s"]) > _num(best["requests/s"])]
    lead = f"On {t['workload']}, {t['served_on']}"
    if best is None:
        text = f"{lead} misses the p99 SLO ({words}) even at {number(_num(rows[0]['requests/s']))} requests/s."
    else:
        text = (
            f"{lead} keeps the p99 latencies within the SLO ({words}) up to {number(_num(best['requests/s']))} requests/s "
            f"(p99 TTFT {duration(_num(best['TTFT p99']))}, p99 TPOT {duration(_num(best['TPOT p99']))})"
            + (
                f"; at {number(_num(beyond[0]['requests/s']))} requests/s the p99 TTFT is "
                f"{duration(_num(beyond[0]['TTFT p99']))}."
                if beyond
                else "."
            )
        )
    return Finding(
        "serve.rate",
        "06-serve",
        "Latency against load",
        text,
        *d.figure("06-serve", "serve-latency-vs-rate", "TTFT and TPOT against the request rate"),
    )


def serve_goodput(d: _Data) -> Finding:
    t = d.table("06-serve", "rate_sweep")
    _, _, words = _slo(t)
    rows = sorted(d.records("06-serve", "rate_sweep"), key=lambda r: _num(r["requests/s"]))
    peak = max(rows, key=lambda r: _num(r["goodput"]))
    last = rows[-1]
    return Finding(
        "serve.goodput",
        "06-serve",
        "Goodput",
        f"Goodput ({words}) peaks at {number(_num(peak['goodput']))} requests/s at an offered "
        f"{number(_num(peak['requests/s']))} and falls to {number(_num(last['goodput']))} at "
        f"{number(_num(last['requests/s']))}, where the engine still finishes {number(_num(last['throughput']))} "
        "requests/s: past the knee the queue, not the step, breaks the SLO.",
        *d.figure("06-serve", "serve-goodput-vs-rate", "Goodput and throughput against the request rate"),
    )


def serve_kv_bound(d: _Data) -> Finding:
    t = d.table("06-serve", "06-1")
    rows = d.records("06-serve", "06-1")
    full = [r for r in rows if _num(r["KV blocks in use"]) >= 0.95]
    limit = _num(t["max_num_seqs"])
    # Lecture 2.8: the batch is bounded by the KV cache: once it is full, requests wait although
    # the scheduler would take more of them.
    agrees = bool(full) and any(_num(r["waiting at the end"]) > 0 for r in full)
    agrees = agrees and all(_num(r["largest batch"]) < limit for r in full)
    if full:
        text = (
            f"Once the KV cache is full ({percent(min(_num(r['KV blocks in use']) for r in full))} of the blocks or "
            f"more) the batch stops at about {number(_num(t['plateau_batch']))} requests, under the scheduler's "
            f"{number(int(limit))}, while up to {number(int(_num(t['peak_waiting'])))} requests wait"
            + (": the batch is bounded by the KV cache, as lecture 2.8 says." if agrees else ".")
        )
    else:
        text = "In table 06-1 the KV cache never fills, so it cannot show the bound lecture 2.8 describes."
    return Finding(
        "serve.kv_bound",
        "06-serve",
        "Who joins the batch",
        text,
        *d.link("06-serve", "06-1"),
        against="the lecture",
        agrees=agrees,
    )


def serve_preemption(d: _Data) -> Finding:
    rows = d.records("06-serve", "06-2")
    whole = rows[0]
    # The pool nearest a quarter of the whole.
    quarter = min(rows, key=lambda r: abs(_num(r["share of the pool"]) - 0.25))
    return Finding(
        "serve.preemption",
        "06-serve",
        "Preemption",
        f"On {percent(_num(quarter['share of the pool']))} of the KV pool the same load is preempted "
        f"{number(int(_num(quarter['preemptions'])))} times ({percent(_num(quarter['requests preempted']))} of the "
        f"requests), {percent(_num(quarter['tokens recomputed']))} more tokens are computed, and the p99 TTFT grows "
        f"from {duration(_num(whole['TTFT p99']))} to {duration(_num(quarter['TTFT p99']))}.",
        *d.link("06-serve", "06-2"),
    )


def serve_prefix_caching(d: _Data) -> Finding:
    rows = d.records("06-serve", "06-3")
    off = next(r for r in rows if r["prefix caching"] == "off")
    on = next(r for r in rows if r["prefix caching"] == "on" and r["requests/s"] == off["requests/s"])
    return Finding(
        "serve.prefix_caching",
        "06-serve",
        "Prefix caching",
        f"On Mooncake's conversation trace at its own rate ({number(_num(on['requests/s']))} requests/s) prefix "
        f"caching serves {percent(_num(on['prompt tokens from the cache']))} of prompt tokens from the cache and cuts "
        f"the p50 TTFT from {duration(_num(off['TTFT p50']))} to {duration(_num(on['TTFT p50']))} (p99: "
        f"{duration(_num(off['TTFT p99']))} to {duration(_num(on['TTFT p99']))}).",
        *d.link("06-serve", "06-3"),
    )


def serve_chunked_prefill(d: _Data) -> Finding:
    rows = d.records("06-serve", "06-4")
    whole = next(r for r in rows if r["chunked prefill"] == "off")
    small = min((r for r in rows if r["chunked prefill"] == "on"), key=lambda r: _num(r["tokens a step"]))
    return Finding(
        "serve.chunked_prefill",
        "06-serve",
        "Chunked prefill",
        f"Chunked prefill at {number(int(_num(small['tokens a step'])))} tokens a step brings the p99 TPOT from "
        f"{duration(_num(whole['TPOT p99']))} (whole prompts) to {duration(_num(small['TPOT p99']))} and moves the "
        f"p99 TTFT from {duration(_num(whole['TTFT p99']))} to {duration(_num(small['TTFT p99']))}.",
        *d.link("06-serve", "06-4"),
    )


def serve_capacity(d: _Data) -> Finding:
    t = d.table("06-serve", "06-6")
    _, _, words = _slo(t)
    rows = [r for r in d.records("06-serve", "06-6") if r["GPUs"] is not None]
    low, high = rows[0], rows[-1]
    if low is high:
        raise ValueError("one rate planned: nothing to compare")
    grows = _num(high["knee per GPU"]) > _num(low["knee per GPU"])
    return Finding(
        "serve.capacity",
        "06-serve",
        "Capacity planning",
        f"Within {words} at p99, {t['served_on']} needs {number(int(_num(low['GPUs'])))} GPU"
        f"{'s' if _num(low['GPUs']) != 1 else ''} at {number(_num(low['requests/s']))} requests/s and "
        f"{number(int(_num(high['GPUs'])))} ({high['deployment']}) at {number(_num(high['requests/s']))}, where each "
        f"GPU sustains {number(_num(high['knee per GPU']))} requests/s at the knee against "
        f"{number(_num(low['knee per GPU']))} for the smallest deployment"
        + (": more replicas absorb the bursts that queue on fewer." if grows else "."),
        *d.link("06-serve", "06-6"),
    )


def serve_semantics(d: _Data) -> Finding:
    rows = [r for r in d.records("06-serve", "06-8") if r["trace"] == "mooncake-conversation"]
    by = {r["engine"]: r for r in rows}
    vllm, sglang = by["vLLM 0.33.0"], by["SGLang 0.5.23, fcfs"]
    mixed = by["SGLang 0.5.23, fcfs, mixed chunk"]
    return Finding(
        "serve.semantics",
        "06-serve",
        "vLLM against SGLang",
        f"On Mooncake's conversation trace SGLang's prefill-first steps give a p99 TPOT of "
        f"{duration(_num(sglang['TPOT p99']))} against vLLM's {duration(_num(vllm['TPOT p99']))}, and "
        f"{duration(_num(mixed['TPOT p99']))} with its mixed chunk, which puts prefill into the decode steps as "
        "vLLM's chunked prefill does.",
        *d.link("06-serve", "06-8"),
    )


def serve_kv_tiers(d: _Data) -> Finding:
    t = d.table("06-serve", "06-9")
    c = tier_conclusion(d.records("06-serve", "06-9"), tie=_num(t["tie"]))
    if c.bound <= c.gpu:
        raise ValueError("06-9 needs a gap to the unbounded cache")
    one, top = c.one, c.top
    if len(top) == len(one):
        lead = f"serves about the same share under every policy ({span(list(one.values()))} of them)"
    else:
        rest = span([v for p, v in one.items() if p not in top])
        who = names([p.upper() for p in top]) + (", which tie" if len(top) > 1 else "")
        lead = f"serves the most under {who} ({span([one[p] for p in top])} of them, against {rest} under the others)"
    b = c.best_row
    under = (
        "under any policy alike"
        if len(c.best) == len(c.four)
        else f"under {names([p.upper() for p in c.best])}" + (" (a tie)" if len(c.best) > 1 else "")
    )
    return Finding(
        "serve.kv_tiers",
        "06-serve",
        "KV tiers below the GPU",
        f"On Mooncake's conversation trace, where the prefix cache of {t['served_on']} serves {percent(c.gpu)} of "
        f"the prompt tokens, a host tier the size of its KV cache {lead}; a 4x tier ({size(_num(b['tier size']))}) "
        f"{under} brings the total to {percent(_num(b['from either']))}, closing {percent(c.closed)} of the gap to the "
        f"{percent(c.bound)} an unbounded cache would serve, and the mean TTFT from {duration(_num(c.none['TTFT mean']))} "
        f"to {duration(_num(b['TTFT mean']))}.",
        *d.link("06-serve", "06-9"),
    )


def serve_swap(d: _Data) -> Finding:
    rows = d.records("06-serve", "06-7")
    parts = []
    for trace in dict.fromkeys(r["trace"] for r in rows):
        own = [r for r in rows if r["trace"] == trace]
        smallest = min(_num(r["share of the pool"]) for r in own)
        again, swap = (r for r in own if _num(r["share of the pool"]) == smallest)
        change = _num(swap["E2E mean"]) / _num(again["E2E mean"]) - 1
        effect = (
            "leaves the mean E2E within 0.1%"
            if abs(change) < 1e-3
            else f"{'lowers' if change < 0 else 'raises'} the mean E2E by {percent(abs(change))}"
        )
        parts.append(
            f"on the {trace} trace {effect} "
            f"({number(int(_num(again['tokens recomputed'])))} tokens recomputed against "
            f"{number(_num(swap['swapped GiB']))} GiB copied each way)"
        )
    share = min(_num(r["share of the pool"]) for r in rows)
    return Finding(
        "serve.swap",
        "06-serve",
        "Swap or recompute",
        f"On {percent(share)} of the KV pool, preemption by swap instead of recompute " + "; ".join(parts) + ".",
        *d.link("06-serve", "06-7"),
    )


def serve_routers(d: _Data) -> Finding:
    t = d.table("06-serve", "routers")
    by = {r["router"]: r for r in d.records("06-serve", "routers")}
    aware, rr, lt = by["prefix-aware"], by["round-robin"], by["least-tokens"]
    return Finding(
        "serve.routers",
        "06-serve",
        "Routers",
        f"Over {number(int(_num(t['replicas'])))} replicas on Mooncake's conversation trace, prefix-aware routing "
        f"serves {percent(_num(aware['prompt tokens from the cache']))} of prompt tokens from the replicas' caches "
        f"against {percent(_num(rr['prompt tokens from the cache']))} for round-robin, for a p99 TTFT of "
        f"{duration(_num(aware['TTFT p99']))} against {duration(_num(rr['TTFT p99']))} (least-tokens: "
        f"{duration(_num(lt['TTFT p99']))}), at a worst-stretch imbalance of "
        f"{ratio(_num(aware['imbalance, worst stretch']))} against round-robin's "
        f"{ratio(_num(rr['imbalance, worst stretch']))} and least-tokens' {ratio(_num(lt['imbalance, worst stretch']))}.",
        *d.link("06-serve", "routers"),
    )


def serve_disaggregation(d: _Data) -> Finding:
    rows = d.records("06-serve", DISAGG_KEY)
    code = [r for r in rows if r["trace"] == "Azure code"]
    best = max(code, key=lambda r: _num(r["goodput"]))
    agg = next(r for r in code if r["deployment"] == "aggregated")
    split = max((r for r in code if r["deployment"].startswith("disaggregated")), key=lambda r: _num(r["goodput"]))
    return Finding(
        "serve.disaggregation",
        "06-serve",
        "Disaggregated prefill and decode",
        f"On Azure's code trace over 4 GPUs the best prefill:decode split ({split['deployment']}) cuts the p99 TPOT "
        f"from {duration(_num(agg['TPOT p99']))} to {duration(_num(split['TPOT p99']))} but its p99 TTFT is "
        f"{duration(_num(split['TTFT p99']))} against {duration(_num(agg['TTFT p99']))}, and the most goodput comes "
        f"from {best['deployment']} ({number(_num(best['goodput']))} requests/s against "
        f"{number(_num(split['goodput']))} for the split).",
        *d.link("06-serve", DISAGG_KEY),
    )


# --- engines ---------------------------------------------------------------------------------


def engines(d: _Data) -> Finding:
    rows = d.records("engines", "engines")
    speedups = [_num(r["native / reference"]) for r in rows]
    return Finding(
        "engines.speedup",
        "engines",
        "The Rust core",
        f"The native engine runs the {len(rows)} hot loops {ratio(min(speedups))} to {ratio(max(speedups))} as fast as "
        f"the reference (median {ratio(statistics.median(speedups))}), with results checked equal.",
        *d.link("engines", "engines"),
    )


FINDINGS: tuple[Callable[[_Data], Finding], ...] = (
    thread_hop,
    process_hop,
    gil,
    page_faults,
    memory_latency,
    srpt_vs_fcfs,
    lecture_schedules,
    quantum,
    reserve_vs_paging,
    thrashing,
    best_vs_lru,
    lecture_zipf,
    cloudphysics,
    wins_where,
    sharing,
    prefix_vs_whole,
    mooncake,
    serve_rate,
    serve_goodput,
    serve_kv_bound,
    serve_preemption,
    serve_prefix_caching,
    serve_chunked_prefill,
    serve_capacity,
    serve_swap,
    serve_semantics,
    serve_kv_tiers,
    serve_routers,
    serve_disaggregation,
    engines,
)
"""Every finding, in the report's order."""

# What missing or damaged data raises while a finding reads it (StopIteration: a row looked for
# with next() in a table left empty, as the dataset tables are when their dataset is absent).
_DATA_ERRORS = (KeyError, IndexError, TypeError, ValueError, AttributeError, ZeroDivisionError, StopIteration)


def _each(results: Results) -> Iterator[Finding]:
    try:
        data = _Data(results)
    except _DATA_ERRORS:
        return
    for make in FINDINGS:
        try:
            yield make(data)
        except _DATA_ERRORS:
            continue  # its data is absent (a left-out section, a dataset not here) or damaged


def compute(results: Results) -> list[Finding]:
    """Every finding the results support, in the report's order."""
    return list(_each(results))


__all__ = ["FINDINGS", "Finding", "compute"]
