"""Aggregated against disaggregated serving at equal GPU count, on Azure's 2023 code and
conversation traces (issue 26; Splitwise and DistServe's question): the same four GPUs as four
engines that each prefill and decode (vLLM's defaults, and with small prefill chunks), or split
into a prefill pool and a decode pool joined by InfiniBand, each trace at the same multiple of
its own rate. Which wins on TTFT, TPOT and goodput, and why: in an aggregated engine a decode
step waits for the prefill chunks batched with it (the interference chunked prefill bounds by
its token budget, trading TTFT for TPOT); a decode pool has no prefill to wait for, but its
prefill pool is fewer GPUs for every prompt."""

from __future__ import annotations

from typing import Any

from osbench import datasets
from osbench._format import duration, number
from osbench._table import Table
from osbench.serve.cluster import simulate_cluster
from osbench.serve.disagg import simulate_disaggregated
from osbench.serve.lecture import RATE_PRESET, SLO_TPOT, SLO_TTFT, slo_words
from osbench.serve.models import MODELS
from osbench.serve.requests import Requests
from osbench.serve.source import fit

TRACES = {"azure-code-2023": "Azure code", "azure-conv-2023": "Azure conversation"}
"""The traces compared, by dataset name, with their names in the table."""
GPUS = 4
"""GPUs in every deployment: one engine each (the preset's model fits one)."""
SPEEDUP = 6.0
"""Each trace at this multiple of its own rate (loaded as one engine is near its knee)."""
LINK = "ib-ndr-400g"
SMALL_CHUNK = 512
"""The aggregated engines' prefill token budget in the row that bounds interference harder."""
ROUTER = "least-requests"
TIE = 0.01
"""Goodputs within this share of the highest tie."""
KEY = "06-disagg"
"""The table's key in the report's serving section."""

COLUMNS = [
    "trace",
    "deployment",
    "TTFT p50",
    "TTFT p99",
    "TPOT p50",
    "TPOT p99",
    "goodput",
    "throughput",
    "transfer mean",
    "KV moved",
]
UNITS = dict.fromkeys(("TTFT p50", "TTFT p99", "TPOT p50", "TPOT p99", "transfer mean"), "s")
UNITS.update({"goodput": "/s", "throughput": "/s", "KV moved": "B"})


def deployments() -> list[tuple[str, dict[str, Any]]]:
    """Every deployment compared, by name, with how it is simulated."""
    aggregated = {"replicas": GPUS, "router": ROUTER}
    rows: list[tuple[str, dict[str, Any]]] = [
        ("aggregated", aggregated),
        # vLLM holds the step's sequences to its token budget.
        (
            f"aggregated with {SMALL_CHUNK}-token chunks",
            {**aggregated, "max_num_batched_tokens": SMALL_CHUNK, "max_num_seqs": SMALL_CHUNK},
        ),
    ]
    for p in range(1, GPUS):
        split = {"prefill": p, "decode": GPUS - p, "router": ROUTER, "decode_router": ROUTER, "kv_link": LINK}
        rows.append((f"disaggregated {p}:{GPUS - p}", split))
    return rows


def aggregated_vs_disaggregated(quick: bool = False) -> Table:
    """The table: each deployment of :func:`deployments` on each trace of :data:`TRACES` (the
    requests that fit the model's context; ``quick``: the first 3,000) at :data:`SPEEDUP` times
    its rate, on :data:`~osbench.serve.lecture.RATE_PRESET` with vLLM 0.33.0's defaults, the
    native engine; goodput at the lecture's SLO."""
    title = f"Aggregated against disaggregated serving on {GPUS} GPUs"
    rows: list[list[Any]] = []
    shas: dict[str, str] = {}
    missing = []
    sizes = []
    for name, label in TRACES.items():
        path, _ = datasets.try_fetch(name)
        if path is None:
            missing.append(name)
            continue
        shas[name] = datasets.sha256(path)
        reqs = Requests.read(name)
        if quick:
            reqs = reqs[:3_000]
        reqs, _ = fit(reqs, MODELS[RATE_PRESET["model"]].max_model_len)
        at = reqs.at_rate(reqs.rate * SPEEDUP)
        sizes.append(f"{label} {number(len(reqs))} requests at {number(at.rate)}/s")
        for deployment, how in deployments():
            if "replicas" in how:
                s = simulate_cluster(at, **how, **RATE_PRESET).summary(SLO_TTFT, SLO_TPOT).merged
                transfer, moved = None, None
            else:
                d = simulate_disaggregated(at, **how, **RATE_PRESET).summary(SLO_TTFT, SLO_TPOT)
                s, transfer, moved = d.merged, d.transfer.mean, d.bytes_moved
            rows.append(
                [
                    label,
                    deployment,
                    s.ttft.p50,
                    s.ttft.p99,
                    s.tpot.p50,
                    s.tpot.p99,
                    s.goodput,
                    s.request_throughput,
                    "-" if transfer is None else transfer,
                    "-" if moved is None else moved,
                ]
            )
    note = finding(rows) if rows else ""
    if missing:
        note += (" " if note else "") + f"Not shown: {datasets.missing_note(missing)}"
    return Table(
        title=title,
        columns=COLUMNS,
        rows=rows,
        note=note,
        key=KEY,
        units=UNITS,
        setup=(
            (
                "; ".join(sizes)
                + f" ({SPEEDUP:g} x each trace's own rate"
                + (", its first 3,000 requests" if quick else "")
            )
            + f"); {GPUS} x {RATE_PRESET['model']} on {RATE_PRESET['gpu']}, vLLM 0.33.0's defaults, {ROUTER} "
            f"routers; disaggregated: KV over {LINK} after each prefill; goodput within {slo_words()}"
        ),
        extra={"sha256": shas},
    )


def finding(rows: list[list[Any]]) -> str:
    """What the rows show, in words computed from them: per trace, the deployment of the
    highest goodput (or those that tie with it) against the others, and the p99 TPOT and TTFT
    of the best split against the aggregated engines'."""
    out = []
    for label in dict.fromkeys(r[0] for r in rows):
        mine = {r[1]: r for r in rows if r[0] == label}
        top = max(r[6] for r in mine.values())
        leaders = [name for name, r in mine.items() if r[6] >= top * (1 - TIE)]
        agg = mine["aggregated"]
        split = max((r for r in mine.values() if r[1].startswith("disaggregated")), key=lambda r: r[6])
        if len(leaders) == 1:
            lead = (
                f"On {label} {leaders[0]} gives the most goodput ({number(top)}/s, against {number(agg[6])}/s for "
                f"vLLM's defaults and {number(split[6])}/s for the best split, {split[1]})"
            )
        else:
            lead = f"On {label} {len(leaders)} deployments tie on goodput near {number(top)}/s ({', '.join(leaders)})"
        out.append(
            f"{lead}: {split[1]} has a p99 TPOT of {duration(split[5])} against {duration(agg[5])} aggregated and a "
            f"p99 TTFT of {duration(split[3])} against {duration(agg[3])}."
        )
    return (
        " ".join(out)
        + " A decode step of an aggregated engine waits for the prefill chunks batched with it, which long prompts "
        "make long and a small chunk budget shortens at some cost in TTFT; a decode pool never waits for a prefill, "
        "but its prefill pool is fewer GPUs for every prompt, so where prompts dominate the work they queue there."
    )


__all__ = ["COLUMNS", "GPUS", "KEY", "SPEEDUP", "TRACES", "aggregated_vs_disaggregated", "deployments", "finding"]
