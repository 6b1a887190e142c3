"""Lecture demo 06: section 2.8 in action, the serving engine where scheduling meets paging.

Section 2.8 says: an inference engine is a batch server; one step serves many requests at once,
so "who runs first" becomes "who joins the batch", and the batch is bounded by GPU memory (the
KV cache), which ties scheduling to memory management (section 3). The introduction adds that
preemption and swapping are "process scheduling plus swap". These tables show it, on the engine
as vLLM 0.33.0 schedules (:func:`osbench.serve.simulate`); ``tables()`` computes them, nothing
here prints or writes files.

1. Batch size and KV use over time: the batch grows while the KV cache has room, then stops,
   and the queue grows.
2. Preemptions as the KV cache shrinks: the same load on smaller and smaller pools.
3. Prefix caching on and off on Mooncake's conversation trace (when the trace can be had).
4. Chunked prefill: the step's token budget trades TTFT against TPOT.
5. Section 2.6 in a batch server: SRPT on exact and on noisy predicted output lengths against
   FCFS and MLFQ, on Azure's conversation trace (generated chat requests without it).
7. Section 3.6: preemption by swap against recompute as the KV pool shrinks, on Azure's code and
   conversation traces.
8. Section 2.8 again: vLLM's scheduler against SGLang's on the same requests and memory.
9. Sections 3.6 and 4.5: a host KV tier below the GPU's prefix cache on Mooncake's conversation
   trace, by its size and eviction policy, against an unbounded cache.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Callable, Optional

import numpy as np

from osbench import datasets
from osbench._format import duration, number, percent, ratio, size
from osbench._table import Table
from osbench.serve import KV_TIER_MEDIA as MEDIA
from osbench.serve import KvTier
from osbench.serve.models import GPUS, MODELS, num_blocks
from osbench.serve.plan import plan
from osbench.serve.requests import Requests, mix64_array
from osbench.serve.result import ServeResult, ServeSummary
from osbench.serve.simulate import simulate
from osbench.serve.slo import RATE, highest_within_slo
from osbench.serve.source import fit
from osbench.serve.workloads import Lognormal

SEED = 1
"""The seed of every generated workload here."""

SLO_TTFT = 2.0
SLO_TPOT = 0.1
"""The SLO goodput is counted at (seconds): the first token within 2 s, then at least ten tokens a
second (an interactive chat; our choice, stated wherever goodput is shown)."""

CHAT_PROMPT = Lognormal(1024, 1.0, 6000)
CHAT_OUTPUT = Lognormal(256, 1.0, 2000)
"""Chat-like lengths (tokens): lognormal, long-tailed, clipped below Llama-3-8B's 8,192."""

SMALL_GPU: dict[str, Any] = {"model": "llama-3-8b", "gpu": "l40s"}
"""A model on a 48 GB GPU: about 200k tokens of KV cache, so that KV binds before the scheduler's
limit of 256 requests a step does."""

SERIES_POINTS = 240
"""Time bins of the batch-and-KV series kept for the report's figure."""


def _chat(n: int, rate: float) -> Requests:
    return Requests.poisson(n, rate, prompt_len=CHAT_PROMPT, output_len=CHAT_OUTPUT, seed=SEED)


def _lengths_setup() -> str:
    return (
        f"prompts lognormal (mean {number(CHAT_PROMPT.mean)}, sigma {CHAT_PROMPT.sigma}, at most "
        f"{number(CHAT_PROMPT.max)} tokens), outputs lognormal (mean {number(CHAT_OUTPUT.mean)}, sigma "
        f"{CHAT_OUTPUT.sigma}, at most {number(CHAT_OUTPUT.max)})"
    )


def _preset_setup(model: str, gpu: str, result: ServeResult, tp: int = 1) -> str:
    cfg = result.config
    return (
        f"{MODELS[model].name} on {'one' if tp == 1 else tp} {GPUS[gpu].name}: {number(cfg.num_blocks)} KV blocks of "
        f"{cfg.block_size} tokens, {number(cfg.max_num_batched_tokens)} tokens and {number(cfg.max_num_seqs)} "
        "requests a step (vLLM's defaults)"
    )


def _weighted(values: np.ndarray, weights: np.ndarray) -> float:
    return float(np.average(values, weights=weights)) if weights.sum() > 0 else float(values.mean())


def _series(result: ServeResult, points: int = SERIES_POINTS) -> dict[str, list[float]]:
    """The run's steps in ``points`` equal time bins: time-weighted means of the batch, the queue
    and the KV blocks (bins without a step left out)."""
    st = result.steps
    edges = np.linspace(0.0, float(st.end[-1]), points + 1)
    which = np.clip(np.searchsorted(edges, st.start, side="right") - 1, 0, points - 1)
    weight = np.bincount(which, weights=st.duration, minlength=points)
    keep = weight > 0
    out: dict[str, list[float]] = {"time": ((edges[:-1] + edges[1:]) / 2)[keep].tolist()}
    for name, values in (
        ("batch", st.num_seqs),
        ("waiting", st.num_waiting),
        ("blocks_used", st.blocks_used),
        ("blocks_cached", st.blocks_cached),
    ):
        sums = np.bincount(which, weights=values * st.duration, minlength=points)
        out[name] = (sums[keep] / weight[keep]).tolist()
    return out


def batch_over_time(quick: bool = False) -> Table:
    """06-1: the batch grows while the KV cache has room; once it is full, the queue grows."""
    n, rate = (600, 8.0) if quick else (1_500, 8.0)
    reqs = _chat(n, rate)
    r = simulate(reqs, **SMALL_GPU)
    st, cfg = r.steps, r.config
    edges = np.linspace(0.0, float(st.end[-1]), 11)
    rows: list[list[Any]] = []
    for a, b in zip(edges[:-1], edges[1:]):
        m = (st.start >= a) & (st.start < b)
        if not m.any():
            continue
        w = st.duration[m]
        rows.append(
            [
                float(a),
                float(b),
                int(((reqs.arrival >= a) & (reqs.arrival < b)).sum()),
                int(m.sum()),
                _weighted(st.num_seqs[m], w),
                int(st.num_seqs[m].max()),
                _weighted(st.blocks_used[m], w) / cfg.num_blocks,
                int(st.num_waiting[m][-1]),
                int(st.num_preempted[m].sum()),
            ]
        )
    full = [row for row in rows if row[6] >= 0.95]
    plateau = float(np.mean([row[4] for row in full])) if full else float("nan")
    peak_waiting = max(row[7] for row in rows)
    takeaway = (
        f"The batch grows while the KV cache has room; once the cache is full ({percent(min(row[6] for row in full))} "
        f"of the blocks or more, from {number(full[0][0])} s) the batch stops at about {number(plateau)} requests, "
        f"under the {number(cfg.max_num_seqs)} the scheduler allows, and up to {number(peak_waiting)} requests wait."
        if full
        else f"The KV cache never fills here: the batch is bounded by the arrivals, not by memory (peak "
        f"{percent(max(row[6] for row in rows))} of the blocks)."
    )
    return Table(
        title="06-1  Batch size and KV use over time: who joins the batch is bounded by the KV cache",
        columns=[
            "from (s)",
            "to (s)",
            "arrivals",
            "steps",
            "mean batch",
            "largest batch",
            "KV blocks in use",
            "waiting at the end",
            "preemptions",
        ],
        rows=rows,
        note=(
            f'{takeaway} Lecture 2.8: an inference engine is a batch server; "who runs first" becomes "who joins '
            'the batch", and the batch is bounded by GPU memory, the KV cache, which ties scheduling to memory '
            "management (section 3). Each request holds blocks for its prompt and every token it has generated; a "
            "waiting request is admitted only when its whole prompt fits in the free blocks, and when a running "
            "request needs a block and none is free, the last one admitted is preempted. Means are over time."
        ),
        key="06-1",
        units={"KV blocks in use": "%"},
        setup=(
            f"{number(n)} requests, Poisson arrivals at {number(rate)}/s, {_lengths_setup()}; "
            f"{_preset_setup(SMALL_GPU['model'], SMALL_GPU['gpu'], r)}"
        ),
        seed=SEED,
        extra={
            "series": _series(r),
            "num_blocks": cfg.num_blocks,
            "max_num_seqs": cfg.max_num_seqs,
            "kv_full_from": full[0][0] if full else None,
            "plateau_batch": plateau if full else None,
            "peak_waiting": peak_waiting,
        },
    )


def recomputed_share(result: ServeResult) -> float:
    """Tokens computed beyond what the requests needed, over what they needed: the work
    preemption by recompute throws away. A request needs its prompt less the prefix-cache hit
    at its first scheduling, and one token per output token after the first."""
    reqs = result.requests
    computed = int(result.steps.prefill_tokens.sum() + result.steps.decode_seqs.sum())
    needed = int((reqs.prompt_len - result.cached_tokens).sum() + (reqs.output_len - 1).sum())
    return (computed - needed) / needed


def preemption_vs_kv(quick: bool = False) -> Table:
    """06-2: the same load on smaller and smaller KV pools."""
    n, rate = (600, 4.0) if quick else (1_500, 4.0)
    reqs = _chat(n, rate)
    full = num_blocks(SMALL_GPU["model"], SMALL_GPU["gpu"])
    rows: list[list[Any]] = []
    first = None
    for share in (1.0, 0.5, 0.4, 0.35, 0.3, 0.25, 0.2, 0.15):
        r = simulate(reqs, **SMALL_GPU, num_blocks=int(full * share))
        first = first or r
        s = r.summary(slo_ttft=SLO_TTFT, slo_tpot=SLO_TPOT)
        rows.append(
            [
                r.num_blocks,
                r.num_blocks / full,
                int(r.steps.num_seqs.max()),
                s.mean_batch_size,
                s.preemptions,
                s.preempted_requests / s.requests,
                recomputed_share(r),
                s.ttft.p99,
                s.tpot.p99,
                s.goodput,
            ]
        )
    assert first is not None
    calm = [row for row in rows if row[4] == 0]
    strained = [row for row in rows if row[4] > 0]
    if strained:
        worst = strained[-1]
        takeaway = (
            f"With the whole pool nothing is preempted; below {percent(calm[-1][1] if calm else 1.0)} of it the "
            f"batch no longer fits, and with {percent(worst[1])} the engine preempts {number(worst[4])} times "
            f"({percent(worst[5])} of the requests), recomputes {percent(worst[6])} more tokens, and the p99 TTFT "
            f"grows from {duration(rows[0][7])} to {duration(worst[7])} as requests wait for blocks."
        )
    else:
        takeaway = "Every pool here holds the batch: nothing is preempted."
    return Table(
        title="06-2  Preemptions as the KV cache shrinks",
        columns=[
            "KV blocks",
            "share of the pool",
            "largest batch",
            "mean batch",
            "preemptions",
            "requests preempted",
            "tokens recomputed",
            "TTFT p99",
            "TPOT p99",
            "goodput",
        ],
        rows=rows,
        note=(
            f"{takeaway} The lecture's introduction: preemption and swapping are process scheduling plus swap. vLLM "
            "v1 preempts by recompute, not swap: the victim's blocks are freed and its progress reset, and it goes "
            "back to the front of the queue; its blocks stay in the prefix cache until they are needed, so part of "
            "the recomputation is a cache hit. Tokens recomputed: tokens computed beyond those the requests needed. "
            "TPOT falls as the pool shrinks because smaller batches make shorter steps; the price is paid in the "
            f"queue. Goodput: requests per second within TTFT {duration(SLO_TTFT)} and TPOT {duration(SLO_TPOT)}."
        ),
        key="06-2",
        units={
            "share of the pool": "%",
            "requests preempted": "%",
            "tokens recomputed": "%",
            "TTFT p99": "s",
            "TPOT p99": "s",
            "goodput": "/s",
        },
        setup=(
            f"{number(n)} requests, Poisson arrivals at {number(rate)}/s, {_lengths_setup()}; "
            f"{_preset_setup(SMALL_GPU['model'], SMALL_GPU['gpu'], first)}, the pool cut to a share of it"
        ),
        seed=SEED,
    )


MOONCAKE = "mooncake-conversation"
MOONCAKE_GPU: dict[str, Any] = {"model": "qwen2.5-7b", "gpu": "h200"}
"""Qwen2.5-7B for its 32,768-token context (Mooncake's prompts are long), on one H200 (141 GB:
room for about two million tokens of KV cache)."""


def _not_shown(title: str, columns: list[str], key: str, units: dict[str, str]) -> Table:
    """A table of Mooncake's conversation trace where the trace is not available: no rows, and a
    note saying how to get it."""
    return Table(title, columns, [], note=f"Not shown: {datasets.missing_note([MOONCAKE])}", key=key, units=units)


def prefix_caching_mooncake(quick: bool = False) -> Table:
    """06-3: prefix caching on and off on Mooncake's conversation trace (its block hashes are the
    prompts' content), at the trace's own rate and at half of it."""
    columns = [
        "requests/s",
        "prefix caching",
        "prompt tokens from the cache",
        "prefill tokens computed",
        "TTFT p50",
        "TTFT p99",
        "TPOT p50",
        "preemptions",
        "goodput",
    ]
    units = {"requests/s": "/s", "prompt tokens from the cache": "%", "TTFT p50": "s", "TTFT p99": "s"}
    units.update({"TPOT p50": "s", "goodput": "/s"})
    path, _ = datasets.try_fetch(MOONCAKE)
    if path is None:
        return _not_shown("06-3  Prefix caching on and off on Mooncake's conversation trace", columns, "06-3", units)
    reqs = Requests.read(MOONCAKE)
    if quick:
        reqs = reqs[:3_000]
    reqs, dropped = fit(reqs, MODELS[MOONCAKE_GPU["model"]].max_model_len)
    left_out = dropped.requests
    own = reqs.rate
    rows: list[list[Any]] = []
    last = None
    for qps in (own, own / 2):
        at = reqs if qps == own else reqs.at_rate(qps)
        for caching in (False, True):
            r = simulate(at, **MOONCAKE_GPU, enable_prefix_caching=caching)
            last = r
            s = r.summary(slo_ttft=SLO_TTFT, slo_tpot=SLO_TPOT)
            rows.append(
                [
                    qps,
                    "on" if caching else "off",
                    s.prefix_hit_rate,
                    int(r.steps.prefill_tokens.sum()),
                    s.ttft.p50,
                    s.ttft.p99,
                    s.tpot.p50,
                    s.preemptions,
                    s.goodput,
                ]
            )
    assert last is not None
    off, on = rows[0], rows[1]
    return Table(
        title="06-3  Prefix caching on and off on Mooncake's conversation trace",
        columns=columns,
        rows=rows,
        note=(
            f"At the trace's own rate ({number(own)}/s) prefix caching serves {percent(on[2])} of prompt tokens from "
            f"the cache, computes {percent(1 - on[3] / off[3])} fewer prefill tokens, and cuts the p50 TTFT from "
            f"{duration(off[4])} to {duration(on[4])} and the p99 from {duration(off[5])} to {duration(on[5])}. "
            "Lecture section 5: the KV of a prefix already in the cache needs no prefill. Mooncake's hash_ids give "
            "each 512-token prompt block's content, prefix-chained, so the hits are the production service's own. "
            "The hit rate is bounded by the pool: cached blocks stay until their space is needed, least recently "
            f"used first (section 4). Goodput: requests per second within TTFT {duration(SLO_TTFT)} and TPOT "
            f"{duration(SLO_TPOT)}."
        ),
        key="06-3",
        units=units,
        setup=(
            f"Mooncake's conversation trace, {number(len(reqs))} requests"
            + (" (its first 3,000)" if quick else "")
            + f", {number(left_out)} longer than {number(MODELS[MOONCAKE_GPU['model']].max_model_len)} tokens left out; "
            f"{_preset_setup(MOONCAKE_GPU['model'], MOONCAKE_GPU['gpu'], last)}"
        ),
        extra={"sha256": datasets.sha256(path), "left_out": left_out},
    )


CHUNK_PROMPT = Lognormal(2048, 1.0, 7000)
CHUNK_OUTPUT = Lognormal(256, 0.8, 1000)
"""Long prompts among decoding requests: where a prefill step stalls the decodes."""

CHUNK_GPU: dict[str, Any] = {"model": "llama-3-8b", "gpu": "h100"}


def chunked_prefill(quick: bool = False) -> Table:
    """06-4: the step's token budget, with and without chunked prefill, against TTFT and TPOT."""
    n, rate = (800, 8.0) if quick else (2_000, 8.0)
    reqs = Requests.poisson(n, rate, prompt_len=CHUNK_PROMPT, output_len=CHUNK_OUTPUT, seed=SEED)
    seqs = 256
    rows: list[list[Any]] = []
    first = None
    for chunked, budget in ((False, 8192), (True, 8192), (True, 4096), (True, 2048), (True, 1024), (True, 512)):
        r = simulate(
            reqs,
            **CHUNK_GPU,
            enable_chunked_prefill=chunked,
            max_num_batched_tokens=budget,
            max_num_seqs=seqs,
        )
        first = first or r
        s = r.summary(slo_ttft=SLO_TTFT, slo_tpot=SLO_TPOT)
        rows.append(
            [
                "on" if chunked else "off",
                budget,
                s.ttft.p50,
                s.ttft.p99,
                s.tpot.p50,
                s.tpot.p99,
                float(r.steps.duration.max()),
                s.goodput,
            ]
        )
    assert first is not None
    whole, small = rows[0], rows[-1]
    p, o = CHUNK_PROMPT, CHUNK_OUTPUT
    return Table(
        title="06-4  Chunked prefill: the step's token budget trades TTFT against TPOT",
        columns=[
            "chunked prefill",
            "tokens a step",
            "TTFT p50",
            "TTFT p99",
            "TPOT p50",
            "TPOT p99",
            "longest step",
            "goodput",
        ],
        rows=rows,
        note=(
            f"Cutting prompts into chunks of {number(small[1])} tokens brings the p99 TPOT from {duration(whole[5])} "
            f"(whole prompts in one step) to {duration(small[5])}, and the p99 TTFT goes from {duration(whole[3])} to "
            f"{duration(small[3])}. Not in the lecture's text, but section 2's time slicing applied to one prompt: a "
            "long prefill cut into quanta of the step's token budget no longer stalls the running requests' decodes "
            "(whose next tokens wait for the whole step), and pays with its own first token, which now takes several "
            "steps. Running requests are scheduled first, so a decode is never left out of a step for a prefill. "
            f"Goodput: requests per second within TTFT {duration(SLO_TTFT)} and TPOT {duration(SLO_TPOT)}."
        ),
        key="06-4",
        units=dict.fromkeys(("TTFT p50", "TTFT p99", "TPOT p50", "TPOT p99", "longest step"), "s") | {"goodput": "/s"},
        setup=(
            f"{number(n)} requests, Poisson arrivals at {number(rate)}/s, prompts lognormal (mean {number(p.mean)}, "
            f"sigma {p.sigma}, at most {number(p.max)} tokens), outputs lognormal (mean {number(o.mean)}, sigma "
            f"{o.sigma}, at most {number(o.max)}); {MODELS[CHUNK_GPU['model']].name} on one {GPUS[CHUNK_GPU['gpu']].name}, "
            f"{number(first.num_blocks)} KV blocks of {first.config.block_size} tokens, at most {seqs} requests a step"
        ),
        seed=SEED,
    )


# --- section 2.6: SRPT on predictions, MLFQ on attained service -------------------------------

POLICY_TRACE = "azure-conv-2023"
POLICY_RUNS: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("FCFS", "fcfs", {}),
    ("SRPT, exact lengths", "srpt", {}),
    ("SRPT, sigma 0.5", "srpt", {"prediction": "noisy", "prediction_sigma": 0.5}),
    ("SRPT, sigma 1", "srpt", {"prediction": "noisy", "prediction_sigma": 1.0}),
    ("SRPT, sigma 2", "srpt", {"prediction": "noisy", "prediction_sigma": 2.0}),
    ("MLFQ (PLAS)", "mlfq", {}),
)
"""The rows of 06-5: a label, the policy and its options (predictions seeded with :data:`SEED`)."""

POLICY_LOADS = (1.0, 1.5)
"""06-5's loads: the trace at its own rate, and rescaled to 1.5 times it (a queue forms)."""


def _policy_finding(
    rate: float, e2e: Mapping[str, float], short: Mapping[str, float], wait: Mapping[str, float]
) -> str:
    """06-5's finding at one rate, from its mean E2E, short requests' p99 slowdown and longest
    wait by row."""
    fcfs, exact = e2e["FCFS"], e2e["SRPT, exact lengths"]
    noisy = [e2e[f"SRPT, sigma {s}"] for s in ("0.5", "1", "2")]
    lowest = min(e2e, key=e2e.__getitem__)
    words = f"At {number(rate)} requests/s {lowest} has the lowest mean E2E ({duration(e2e[lowest])}"
    words += f"; FCFS {duration(fcfs)}, SRPT on exact lengths {duration(exact)}), "
    if exact <= noisy[0] <= noisy[1] <= noisy[2]:
        words += "and SRPT degrades as sigma grows (0.5, 1, 2: "
    else:
        words += "and the noisy predictions do not order by sigma (0.5, 1, 2: "
    words += ", ".join(duration(v) for v in noisy) + f"); MLFQ gives {duration(e2e['MLFQ (PLAS)'])}. "
    words += (
        f"Short requests' p99 slowdown: {number(short['SRPT, exact lengths'])} under SRPT on exact lengths, "
        f"{number(short['SRPT, sigma 2'])} at sigma 2, {number(short['FCFS'])} under FCFS; the longest wait "
        f"{duration(wait['SRPT, exact lengths'])} under SRPT on exact lengths against {duration(wait['FCFS'])} under "
        "FCFS (the long requests' price)."
    )
    return words


def policies_on_unknown_lengths(quick: bool = False) -> Table:
    """06-5: SRPT on exact and noisy predicted output lengths, FCFS and MLFQ, in one batch server."""
    n = 1_000 if quick else 3_000
    path, _ = datasets.try_fetch(POLICY_TRACE)
    missing = None
    if path is None:
        reqs = _chat(n, 5.0)
        what = f"{number(n)} generated chat requests at 5/s ({_lengths_setup()})"
        missing = datasets.missing_note([POLICY_TRACE])
    else:
        reqs, dropped = fit(Requests.read(POLICY_TRACE)[:n], MODELS[SMALL_GPU["model"]].max_model_len)
        left_out = dropped.requests
        what = f"the first {number(len(reqs))} requests of Azure's 2023 conversation trace" + (
            f" ({number(left_out)} longer than the context left out)" if left_out else ""
        )
    rows: list[list[Any]] = []
    first = None
    findings = []
    for scale in POLICY_LOADS:
        load = reqs.at_rate(reqs.rate * scale) if scale != 1 else reqs
        e2e: dict[str, float] = {}
        short: dict[str, float] = {}
        wait: dict[str, float] = {}
        for label, policy, options in POLICY_RUNS:
            r = simulate(load, **SMALL_GPU, policy=policy, prediction_seed=SEED, **options)
            first = first or r
            s = r.summary()
            e2e[label], short[label], wait[label] = s.e2e.mean, s.slowdown_short.p99, s.max_queueing
            rows.append(
                [
                    load.rate,
                    label,
                    s.ttft.mean,
                    s.e2e.mean,
                    s.queueing.mean,
                    s.slowdown.p50,
                    s.slowdown_short.p99,
                    s.slowdown_long.p99,
                    s.max_queueing,
                    s.preemptions,
                ]
            )
        findings.append(_policy_finding(load.rate, e2e, short, wait))
    assert first is not None
    takeaway = " ".join(reversed(findings))  # the loaded server first: there the order matters
    table = Table(
        title="06-5  SRPT on predicted output lengths and MLFQ on attained service, in a batch server",
        columns=[
            RATE,
            "policy",
            "TTFT mean",
            "E2E mean",
            "queueing mean",
            "slowdown p50",
            "short: slowdown p99",
            "long: slowdown p99",
            "longest wait",
            "preemptions",
        ],
        rows=rows,
        note=(
            f"{takeaway} Section 2.6 (a single server): SRPT is best and degrades toward FCFS as predictions err. "
            "Here up to 256 requests run at once, so admission order only matters once a queue forms; and MLFQ on "
            "attained service orders only the requests preempted and back in the queue (a waiting request has had "
            "no service), so for single requests it is close to FCFS. Output lengths are unknown, so predict them and run SRPT (predicted = true x "
            "exp(N(0, sigma^2))), or use attained service as MLFQ does (Autellix's PLAS). A policy here decides who "
            "is admitted from the queue and who is preempted when the KV cache is full; running requests are never "
            "stopped for a shorter arrival, as vLLM's loop has it. Slowdown: E2E over the request's time alone on "
            "the same engine."
        ),
        key="06-5",
        units={
            RATE: "/s",
            "TTFT mean": "s",
            "E2E mean": "s",
            "queueing mean": "s",
            "longest wait": "s",
        },
        setup=(
            f"{what}, at its own rate and rescaled to {number(POLICY_LOADS[1])}x it; "
            f"{_preset_setup(SMALL_GPU['model'], SMALL_GPU['gpu'], first)}"
        ),
        seed=SEED,
    )
    if missing:
        table.note = f"{table.note} {missing}"
    return table


SWAP_TRACES: tuple[tuple[str, float, str, Lognormal, Lognormal], ...] = (
    ("azure-code-2023", 1.0, "code", Lognormal(2048, 0.8, 7000), Lognormal(32, 1.0, 400)),
    ("azure-conv-2023", 2.0, "conversation", CHAT_PROMPT, CHAT_OUTPUT),
)
"""06-7's workloads: Azure's 2023 code trace (long prompts, short outputs) and conversation trace
(shorter prompts, longer outputs), rescaled to a rate (requests/s) the whole pool serves without
preempting; without a trace, generated requests of its kind (its prompt and output lengths)."""

SWAP_SHARES = (0.3, 0.15, 0.08)
"""06-7's pools: shares of what the model leaves on the GPU."""

SWAP_LINK = "pcie4"
"""The L40S's host link: PCIe 4.0 x16 (NVIDIA L40S datasheet)."""


def _swap_workload(
    name: str, rate: float, kind: str, prompt: Lognormal, output: Lognormal, n: int
) -> tuple[Requests, str, Optional[str]]:
    """One of 06-7's workloads, what it is in words, and why its trace is not used (None)."""
    path, _ = datasets.try_fetch(name)
    if path is None:
        reqs = Requests.poisson(n, rate, prompt_len=prompt, output_len=output, seed=SEED)
        return reqs, f"{number(n)} generated {kind}-like requests at {number(rate)}/s", datasets.missing_note([name])
    reqs, _ = fit(Requests.read(name)[:n], MODELS[SMALL_GPU["model"]].max_model_len)
    return (
        reqs.at_rate(rate),
        f"the first {number(len(reqs))} requests of Azure's 2023 {kind} trace at {number(rate)}/s",
        None,
    )


def _swap_finding(kind: str, rows: Sequence[Mapping[str, Any]]) -> str:
    """06-7's finding for one workload, from its rows by pool: where swap's mean E2E is below
    recompute's, and what each paid."""
    pairs = [(r, s) for r, s in zip(rows[0::2], rows[1::2]) if r["preemptions"] > 0 or s["preemptions"] > 0]
    if not pairs:
        return f"On the {kind} trace no pool here preempts: swap and recompute are the same run."
    wins = [(r, s) for r, s in pairs if s["E2E mean"] < r["E2E mean"]]
    r, s = pairs[-1]  # the smallest pool
    per = r["tokens recomputed"] / r["preemptions"] if r["preemptions"] else 0.0
    change = s["E2E mean"] / r["E2E mean"] - 1
    words = (
        f"On the {kind} trace swap has the lower mean E2E on {len(wins)} of the {len(pairs)} pools that preempt; on "
        f"the smallest ({percent(r['share of the pool'])}) it moves the mean E2E by {percent(change)} "
        f"({duration(r['E2E mean'])} to {duration(s['E2E mean'])}) and the p99 TTFT from {duration(r['TTFT p99'])} to "
        f"{duration(s['TTFT p99'])}: recompute computes {number(per)} tokens again a preemption, swap copies "
        f"{number(s['swapped GiB'])} GiB each way in {duration(s['copy time'])} of steps."
    )
    return words


def swap_vs_recompute(quick: bool = False) -> Table:
    """06-7: preemption by swap (vLLM v0's) against recompute (v1's) as the KV pool shrinks."""
    n = 600 if quick else 2_000
    full = num_blocks(SMALL_GPU["model"], SMALL_GPU["gpu"])
    columns = [
        "trace",
        "KV blocks",
        "share of the pool",
        "preemption",
        "TTFT mean",
        "TTFT p99",
        "E2E mean",
        "E2E p99",
        "preemptions",
        "swapped GiB",
        "copy time",
        "tokens recomputed",
    ]
    rows: list[list[Any]] = []
    findings, whats, missing = [], [], []
    first = first_swap = None
    for name, rate, kind, prompt, output in SWAP_TRACES:
        reqs, what, absent = _swap_workload(name, rate, kind, prompt, output, n)
        whats.append(what)
        if absent:
            missing.append(absent)
        own: list[dict[str, Any]] = []
        for share in SWAP_SHARES:
            for preemption in ("recompute", "swap"):
                r = simulate(reqs, **SMALL_GPU, num_blocks=int(full * share), preemption=preemption, link=SWAP_LINK)
                first = first or r
                first_swap = first_swap or (r if preemption == "swap" else None)
                s = r.summary()
                row = [
                    kind,
                    r.num_blocks,
                    r.num_blocks / full,
                    preemption if preemption == "recompute" else f"swap over {SWAP_LINK}",
                    s.ttft.mean,
                    s.ttft.p99,
                    s.e2e.mean,
                    s.e2e.p99,
                    s.preemptions,
                    s.swapped_out_bytes / 2**30,
                    s.swap_time,
                    s.recomputed_tokens,
                ]
                rows.append(row)
                own.append(dict(zip(columns, row)))
        findings.append(_swap_finding(kind, own))
    assert first is not None and first_swap is not None
    swap = first_swap.config.swap
    table = Table(
        title="06-7  Swap against recompute as the KV cache shrinks",
        columns=columns,
        rows=rows,
        note=(
            f"{' '.join(findings)} Lecture section 3.6: when KV does not fit, swap the preempted request's KV to host "
            "memory and back, or recompute it; vLLM v1 only recomputes. Swap copies the request's whole block "
            "table both ways (as vLLM v0 did), its time added to the steps that copy, which every running request "
            "waits for; recompute prefills the lost tokens again, but its blocks stay in the prefix cache until "
            "their space is needed, so a request preempted and soon readmitted finds most of them there. Swap pays "
            "off where recompute loses the most: requests that have generated many tokens (long outputs) under a "
            "pool small enough to evict their blocks; with long prompts and short outputs few are preempted and "
            "the prefix cache gives the prompt back. A full host pool recomputes."
        ),
        key="06-7",
        units={
            "share of the pool": "%",
            "TTFT mean": "s",
            "TTFT p99": "s",
            "E2E mean": "s",
            "E2E p99": "s",
            "copy time": "s",
        },
        setup=(
            f"{'; '.join(whats)}; {_preset_setup(SMALL_GPU['model'], SMALL_GPU['gpu'], first)}, the pool cut to a share "
            f"of it; swap into vLLM v0's default {number(first.config.swap_space)} GiB of host memory over "
            f"{SWAP_LINK} ({size(swap.bandwidth)}/s each way, rated) with {size(swap.block_bytes)} a block"
        ),
        seed=SEED,
    )
    if missing:
        table.note = f"{table.note} {' '.join(missing)}"
    return table


# --- the rate sweep (the report's serving section) -------------------------------------------

RATE_PRESET: dict[str, Any] = {"model": "llama-3-8b", "gpu": "h100"}
"""What the rate sweep serves on: Llama-3-8B on one H100, vLLM's defaults."""

RATE_TRACE = "azure-conv-2023"
"""The requests of the rate sweep, when the trace can be had."""

RATE_SWEEP: dict[str, tuple[str, Callable[[ServeSummary], Any]]] = {
    "throughput": ("/s", lambda s: s.request_throughput),
    "TTFT p50": ("s", lambda s: s.ttft.p50),
    "TTFT p99": ("s", lambda s: s.ttft.p99),
    "TPOT p50": ("s", lambda s: s.tpot.p50),
    "TPOT p99": ("s", lambda s: s.tpot.p99),
    "goodput": ("/s", lambda s: s.goodput),
    "within the SLO": ("%", lambda s: s.slo_attainment),
    "preemptions": ("", lambda s: s.preemptions),
    "KV blocks in use": ("%", lambda s: s.kv_utilization),
}
"""The rate sweep's columns after the rate (``requests/s``): each its unit and what it reads from
the run's summary at the SLO. Rows are read by these names, never by position."""

RATE_COLUMNS = [RATE, *RATE_SWEEP]


def rate_workload(quick: bool, seed: int) -> tuple[Requests, str, Optional[str]]:
    """The requests of the rate sweep, what they are in words, and why the trace is not used
    (None when it is): Azure's 2023 conversation trace, the requests that fit the model's context;
    without it, generated chat-like requests."""
    path, _ = datasets.try_fetch(RATE_TRACE)
    if path is None:
        n = 4_000 if quick else 20_000
        reqs = Requests.poisson(n, 5.0, prompt_len=CHAT_PROMPT, output_len=CHAT_OUTPUT, seed=seed)
        what = f"{number(n)} generated chat requests (lognormal lengths, Poisson arrivals; seed {seed})"
        return reqs, what, datasets.missing_note([RATE_TRACE])
    reqs = Requests.read(RATE_TRACE)
    if quick:
        reqs = reqs[:4_000]
    reqs, dropped = fit(reqs, MODELS[RATE_PRESET["model"]].max_model_len)
    left_out = dropped.requests
    what = (
        f"Azure's 2023 conversation trace ({'its first ' if quick else ''}{number(len(reqs))} requests"
        + (f"; {number(left_out)} longer than the model's context left out" if left_out else "")
        + ")"
    )
    return reqs, what, None


def slo_words() -> str:
    return f"TTFT {duration(SLO_TTFT)} and TPOT {duration(SLO_TPOT)}"


def rate_sweep(
    reqs: Requests, workload: str, quick: bool = False, progress: Optional[Callable[[str], None]] = None
) -> Table:
    """Latency and goodput against the request rate: ``reqs`` rescaled to each rate, served on
    :data:`RATE_PRESET`. Up to 24/s: past the knee of the Azure trace (near 16/s) and of the
    generated requests that stand in for it without the dataset (near 20/s)."""
    rates = [2, 4, 8, 12, 16, 20, 24] if quick else [2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 24]
    rows: list[list[Any]] = []
    for qps in rates:
        if progress:
            progress(f"  rate sweep: {qps} requests/s, {len(reqs):,} requests")
        r = simulate(reqs.at_rate(qps), **RATE_PRESET)
        s = r.summary(slo_ttft=SLO_TTFT, slo_tpot=SLO_TPOT)
        rows.append([float(qps), *(read(s) for _, read in RATE_SWEEP.values())])
    served_on = f"{MODELS[RATE_PRESET['model']].name} on one {GPUS[RATE_PRESET['gpu']].name}"
    setup = (
        f"{workload} rescaled to each rate; {served_on}, {number(r.num_blocks)} KV blocks of "
        f"{r.config.block_size} tokens, vLLM's defaults; SLO: {slo_words()}"
    )
    table = Table(
        "Latency and goodput against the request rate",
        RATE_COLUMNS,
        rows,
        key="rate_sweep",
        units={RATE: "/s"} | {c: unit for c, (unit, _) in RATE_SWEEP.items() if unit},
        setup=setup,
        extra={"workload": workload, "served_on": served_on, "slo_ttft": SLO_TTFT, "slo_tpot": SLO_TPOT},
    )
    best = highest_within_slo(table.records(), SLO_TTFT, SLO_TPOT)
    table.note = (
        f"The p99 latencies stay within the SLO up to {number(best[RATE])} requests/s (p99 TTFT "
        f"{duration(best['TTFT p99'])}, p99 TPOT {duration(best['TPOT p99'])}); beyond, arrivals outrun the engine "
        "and the queue, not the step, sets the TTFT."
        if best is not None
        else f"No rate here keeps the p99 latencies within the SLO ({slo_words()})."
    ) + " Throughput counts every request finished over the run; goodput only those within both SLOs."
    return table


# --- capacity for one SLO over rates ----------------------------------------------------------

CAPACITY_RATES = (8, 16, 32, 64, 128)
"""The rates (requests/s) the capacity table plans for: from about half a GPU's knee to eight GPUs'."""

CAPACITY_PLAN: dict[str, Any] = {"max_gpus": 64, "tp": (1, 2), "router": "least-tokens"}
"""What the capacity table plans over: up to 64 GPUs, replicas of TP1 or TP2 behind least-tokens."""

CAPACITY_COLUMNS = [
    RATE,
    "GPUs",
    "deployment",
    "TTFT p99",
    "TPOT p99",
    "goodput per GPU",
    "knee",
    "knee per GPU",
    "candidates tried",
    "simulations",
]


def capacity_over_rates(quick: bool = False) -> Table:
    """06-6: the smallest deployment that meets the SLO (:data:`SLO_TTFT`, :data:`SLO_TPOT` at
    p99) for the rate sweep's requests rescaled to each of :data:`CAPACITY_RATES`
    (:func:`osbench.serve.plan`), with its goodput per GPU and its knee (the highest rate at
    which it still meets the SLO). ``quick``: three rates, on the first 4,000 requests."""
    reqs, workload, _ = rate_workload(quick, SEED)
    rates = CAPACITY_RATES[::2] if quick else CAPACITY_RATES
    rows: list[list[Any]] = []
    for qps in rates:
        p = plan(
            reqs.at_rate(qps), slo_ttft=SLO_TTFT, slo_tpot=SLO_TPOT, executor="threads", **CAPACITY_PLAN, **RATE_PRESET
        )
        b = p.best
        if b is None:
            rows.append(
                [float(qps), None, "none up to 64 GPUs", None, None, None, None, None, len(p.candidates), p.simulations]
            )
            continue
        rows.append(
            [
                float(qps),
                b.gpus,
                b.deployment.label,
                b.ttft,
                b.tpot,
                b.goodput_per_gpu,
                b.knee,
                b.knee_per_gpu,
                len(p.candidates),
                p.simulations,
            ]
        )
    served_on = f"{MODELS[RATE_PRESET['model']].name} on {GPUS[RATE_PRESET['gpu']].name}"
    table = Table(
        "Capacity for one SLO over rates: the fewest GPUs that meet it",
        CAPACITY_COLUMNS,
        rows,
        key="06-6",
        units={
            RATE: "/s",
            "TTFT p99": "s",
            "TPOT p99": "s",
            "goodput per GPU": "/s",
            "knee": "/s",
            "knee per GPU": "/s",
        },
        setup=(
            f"{workload} rescaled to each rate; replicas of {served_on} at TP1 or TP2 behind least-tokens, up to "
            f"{CAPACITY_PLAN['max_gpus']} GPUs, vLLM's defaults; SLO: {slo_words()} at p99"
        ),
        extra={"workload": workload, "served_on": served_on, "slo_ttft": SLO_TTFT, "slo_tpot": SLO_TPOT},
    )
    found = [r for r in table.records() if r["GPUs"] is not None]
    if len(found) >= 2:
        low, high = found[0], found[-1]
        table.note = (
            f"At {number(low[RATE])} requests/s {number(low['GPUs'])} "
            f"{'GPU meets' if low['GPUs'] == 1 else 'GPUs meet'} the SLO and at {number(high[RATE])} requests/s "
            f"{number(high['GPUs'])} do, each then saturating at "
            f"{number(high['knee per GPU'])} requests/s per GPU against {number(low['knee per GPU'])} for the "
            "smallest deployment: "
            + (
                "more replicas behind a load-aware router absorb a burst that would queue on fewer. "
                if high["knee per GPU"] > low["knee per GPU"]
                else "the requests a GPU sustains do not grow with the cluster here. "
            )
            + "Goodput per GPU is what the answer delivers at the rate asked; the knee, the highest rate (the same "
            "requests rescaled, 9% steps) at which it still meets the SLO."
        )
    else:
        table.note = f"No rate here has two deployments within 64 GPUs that meet the SLO ({slo_words()})."
    return table


# --- 06-8: vLLM against SGLang (lecture section 2.8, two schedulers of one idea): the same
# requests on the same model, GPU and KV memory, as vLLM 0.33.0 schedules them (chunked prefill
# mixed into the decode steps) and as SGLang 0.5.23 does (a prefill batch first whenever one can
# be formed, decodes otherwise; enable_mixed_chunk mixes them as vLLM does; lpm orders the queue
# by the longest cached prefix).

SEMANTICS_TRACES = (MOONCAKE, "azure-code-2023")
"""Mooncake's conversation trace (its prompts' content: shared prefixes) and Azure's 2023 code
trace (no content: long prompts, short outputs)."""

SEMANTICS_REQUESTS = 3_000
"""Each trace's first requests served (1,000 with ``quick``): SGLang's scheduler runs on the
reference engine, about 20k steps a second."""

SEMANTICS_ENGINES: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("vLLM 0.33.0", "vllm", {}),
    ("SGLang 0.5.23, fcfs", "sglang", {}),
    ("SGLang 0.5.23, lpm", "sglang", {"schedule_policy": "lpm"}),
    ("SGLang 0.5.23, fcfs, mixed chunk", "sglang", {"enable_mixed_chunk": True}),
)
"""The engines compared: each row's name, semantics and options (``lpm`` only where the trace has
content, since without it every prefix match is empty and LPM orders as FCFS)."""

SEMANTICS_COLUMNS = [
    "trace",
    "engine",
    "prompt tokens from the cache",
    "TTFT p50",
    "TTFT p99",
    "TPOT p50",
    "TPOT p99",
    "preemptions or retractions",
    "goodput",
    "throughput",
]
SEMANTICS_UNITS = {
    "prompt tokens from the cache": "%",
    "TTFT p50": "s",
    "TTFT p99": "s",
    "TPOT p50": "s",
    "TPOT p99": "s",
}
SEMANTICS_UNITS.update({"goodput": "/s", "throughput": "/s"})
MIXED_AGREES = 0.1
"""How close (relative) SGLang's p99 TPOT with the mixed chunk must come to vLLM's on every trace
for the note to say that mixing prefill into the decode steps is what separates them."""


def vllm_vs_sglang(quick: bool = False) -> Table:
    """Every engine of :data:`SEMANTICS_ENGINES` on each trace of :data:`SEMANTICS_TRACES` that can be had (its first
    :data:`SEMANTICS_REQUESTS`, those longer than the model's context left out), at the trace's own rate,
    Qwen2.5-7B on an H200 as in table 06-3; both schedulers get the same KV memory (vLLM's pool
    by ``gpu_memory_utilization``, SGLang's by its ``mem_fraction_static`` rule)."""
    n = 1_000 if quick else SEMANTICS_REQUESTS
    rows: list[list[Any]] = []
    sha256: dict[str, str] = {}
    missing = []
    limit = MODELS[MOONCAKE_GPU["model"]].max_model_len
    for trace in SEMANTICS_TRACES:
        path, _ = datasets.try_fetch(trace)
        if path is None:
            missing.append(trace)
            continue
        sha256[trace] = datasets.sha256(path)
        reqs, _ = fit(Requests.read(trace)[:n], limit)
        for name, semantics, options in SEMANTICS_ENGINES:
            if options.get("schedule_policy") == "lpm" and reqs.block_ids is None:
                continue
            s = simulate(reqs, semantics=semantics, **MOONCAKE_GPU, **options).summary(
                slo_ttft=SLO_TTFT, slo_tpot=SLO_TPOT
            )
            latency = [s.ttft.p50, s.ttft.p99, s.tpot.p50, s.tpot.p99]
            rows.append([trace, name, s.prefix_hit_rate, *latency, s.preemptions, s.goodput, s.request_throughput])
    note = _semantics_finding(rows) if rows else ""
    if missing:
        note += f" Not shown: {datasets.missing_note(missing)}"
    return Table(
        title="06-8  vLLM against SGLang on the same trace: prefill-first batches against mixed steps",
        columns=SEMANTICS_COLUMNS,
        rows=rows,
        note=note.strip(),
        key="06-8",
        units=SEMANTICS_UNITS,
        setup=(
            f"the first {number(n)} requests of each trace at its own rate, those longer than {number(limit)} tokens "
            f"left out; {MOONCAKE_GPU['model']} on one {MOONCAKE_GPU['gpu']}, each engine's defaults; goodput within "
            f"TTFT {duration(SLO_TTFT)} and TPOT {duration(SLO_TPOT)}"
        ),
        extra={"sha256": sha256},
    )


def _semantics_finding(rows: list[list[Any]]) -> str:
    """What the rows show, computed from them: SGLang's prefill-first steps against vLLM's mixed
    ones on the p99 TPOT, and how close the mixed chunk brings the two."""
    parts, gaps = [], []
    for trace in dict.fromkeys(r[0] for r in rows):
        by = {r[1]: r for r in rows if r[0] == trace}
        v, s, m = by[SEMANTICS_ENGINES[0][0]], by[SEMANTICS_ENGINES[1][0]], by[SEMANTICS_ENGINES[3][0]]
        parts.append(
            f"On {trace} SGLang's prefill-first steps give a p99 TPOT of {duration(s[6])} against vLLM's "
            f"{duration(v[6])} ({ratio(s[6] / v[6])}), with p99 TTFTs of {duration(s[4])} and {duration(v[4])}; "
            f"with the mixed chunk SGLang's p99 TPOT is {duration(m[6])}."
        )
        lpm = by.get(SEMANTICS_ENGINES[2][0])
        if lpm is not None:
            parts.append(
                f"LPM serves {percent(lpm[2])} of its prompt tokens from the cache against FCFS's {percent(s[2])}."
            )
        gaps.append(abs(m[6] - v[6]) / v[6] if v[6] else 0.0)
    if max(gaps) <= MIXED_AGREES:
        parts.append(
            f"With the mixed chunk the two agree on the p99 TPOT within {percent(max(max(gaps), 1e-3))}: a prefill batch stalls "
            "every running decode for its whole step, while chunked prefill shares each step's token budget between "
            "new prompts and decodes (lecture 2.8), and that, not the cache, is what separates the two schedulers here."
        )
    return " ".join(parts)


# --- 06-9: KV tiers below the GPU's prefix cache (lecture sections 3.6 and 4.5: memory below
# memory, a cache below a cache): what the GPU's prefix cache evicts goes to a host tier, which
# evicts by a policy of osbench.cache and is looked up past the GPU's hits (osbench.serve.vllm.tiers).

TIER_GPU: dict[str, Any] = MOONCAKE_GPU
"""Table 06-3's Qwen2.5-7B on one H200: its prefix cache holds about two million tokens and
serves about 17% of the trace's prompt tokens, where an unbounded cache would serve about 38%."""

TIER_REQUESTS = 1_000
"""The trace's first requests served with ``quick`` (the whole trace otherwise)."""

TIER_SIZES = (1, 4, 16)
"""The host tier's sizes, as multiples of the GPU's KV cache."""

TIER_POLICIES = ("lru", "s3fifo", "arc", "sieve", "gdsf")
"""The tier's eviction policies (:mod:`osbench.cache`; GDSF weighs each block's recompute FLOPs)."""

TIER_MEDIUM = "pcie5"
"""Host DRAM over PCIe 5.0 x16, the H200's host link."""

HOST_SHARE = 2**41 // 8
"""A DGX H200's 2 TiB of host memory shared by its eight GPUs: a tier larger than this stands for
an SSD's size (here at DRAM's speed)."""

TIER_TIE = 0.001
"""Tier hit rates within this (a tenth of a point of the prompt tokens) are a tie: the policies'
runs differ in their schedules too, so a smaller difference is not the policy's."""

TIER_COLUMNS = [
    "host tier",
    "tier size",
    "policy",
    "from the GPU cache",
    "from the tier",
    "from either",
    "unbounded cache",
    "TTFT mean",
    "TTFT p99",
    "tier time",
]
TIER_UNITS = {"host tier": "x", "tier size": "B", "from the GPU cache": "%", "from the tier": "%"}
TIER_UNITS.update({"from either": "%", "unbounded cache": "%", "TTFT mean": "s", "TTFT p99": "s", "tier time": "s"})


def unbounded_hit_rate(reqs: Requests, block_size: int) -> float:
    """The share of the prompt tokens an unbounded prefix cache would serve, from the prompts'
    block hashes alone: block ``k`` of a request is a hit when an earlier request (in arrival
    order) has the same first ``k + 1`` blocks, and a request's hits stop one token short of its
    prompt, as the engine's do. No cache, of any size and on any schedule, serves more at the
    requests' first admission: a block can only be cached once an earlier request computed it."""
    keys, offsets = reqs.prompt_block_keys(block_size)
    counts = np.diff(offsets)
    prompt_tokens = int(reqs.prompt_len.sum())
    if len(keys) == 0 or prompt_tokens == 0:
        return 0.0
    chained = np.empty_like(keys)
    order = np.argsort(-counts, kind="stable")  # longest first: the requests with more than k blocks lead it
    descending = -counts[order]
    parent = np.zeros(len(counts), dtype=np.uint64)
    for k in range(int(counts.max())):
        live = order[: int(np.searchsorted(descending, -k, side="left"))]
        at = offsets[live] + k
        parent[live] = mix64_array(parent[live] ^ mix64_array(keys[at]))  # osbench.serve.hashing.block_hash
        chained[at] = parent[live]
    owner = np.repeat(np.arange(len(counts)), counts)
    _, first, inverse = np.unique(chained, return_index=True, return_inverse=True)
    hit = owner[first][inverse] < owner
    hits = np.minimum(np.bincount(owner[hit], minlength=len(counts)), (reqs.prompt_len - 1) // block_size)
    return float(int(hits.sum()) * block_size / prompt_tokens)


def _tier_leaders(scores: Mapping[str, float], tie: float) -> list[str]:
    """The policies with the highest score, in their order: more than one when they tie (within
    ``tie``)."""
    top = max(scores.values())
    return [p for p, v in scores.items() if top - v <= tie]


def _and(items: Sequence[str]) -> str:
    """``A``, ``A and B``, ``A, B and C``."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def _policy_names(policies: Sequence[str]) -> str:
    return _and([p.upper() for p in policies])


def span(values: Sequence[float]) -> str:
    """``5.54%``, or ``5.54% to 5.62%``."""
    low, high = min(values), max(values)
    return percent(low) if percent(low) == percent(high) else f"{percent(low)} to {percent(high)}"


@dataclass(frozen=True)
class TierConclusion:
    """What table 06-9 shows, computed once from its rows for its note and the report's finding
    (``serve.kv_tiers``)."""

    none: Mapping[str, Any]
    """The row without a tier."""
    one: dict[str, float]
    """Each policy's share of the prompt tokens served from a 1x tier."""
    top: list[str]
    """The policies whose 1x tier serves the most (more than one when they tie)."""
    four: dict[str, float]
    """Each policy's share served from either cache with a 4x tier."""
    best: list[str]
    """The policies serving the most from either cache at 4x (more than one when they tie)."""
    best_row: Mapping[str, Any]
    """The 4x row of the best of :attr:`best`."""
    closed: float
    """The share of the gap between the GPU's hits and the unbounded cache's that row closes (1
    when there is no gap)."""

    @property
    def gpu(self) -> float:
        return float(self.none["from the GPU cache"])

    @property
    def bound(self) -> float:
        return float(self.none["unbounded cache"])


def tier_conclusion(rows: Sequence[Mapping[str, Any]], tie: float = TIER_TIE) -> TierConclusion:
    """06-9's conclusion from its rows (records): the leaders of the 1x tiers and of the 4x
    totals (ties within ``tie``), and how much of the gap to the unbounded cache the best 4x tier
    closes (all of it when there is no gap). ValueError when the rows have no row without a tier,
    or fewer than two policies at 1x or 4x."""
    none = next((r for r in rows if r["host tier"] == 0), None)
    one = {r["policy"]: float(r["from the tier"]) for r in rows if r["host tier"] == 1}
    at_four = {r["policy"]: r for r in rows if r["host tier"] == 4}
    if none is None or len(one) < 2 or len(at_four) < 2:
        raise ValueError("06-9 needs its row without a tier and two policies at 1x and 4x")
    four = {p: float(r["from either"]) for p, r in at_four.items()}
    best = _tier_leaders(four, tie)
    best_row = at_four[max(best, key=four.__getitem__)]
    gpu, bound = none["from the GPU cache"], none["unbounded cache"]
    closed = (best_row["from either"] - gpu) / (bound - gpu) if bound > gpu else 1.0
    return TierConclusion(none, one, _tier_leaders(one, tie), four, best, best_row, float(closed))


def _tier_finding(rows: Sequence[Mapping[str, Any]]) -> str:
    """06-9's note's finding (:func:`tier_conclusion`): which policy's tier serves the most at 1x
    (or that they tie), how much of the gap between the GPU's hits and the unbounded cache's a 4x
    tier closes, and what it does to the TTFT."""
    c = tier_conclusion(rows)
    one, top = c.one, c.top
    if len(top) == len(one):
        lead = f"every policy's tier serves about the same share ({span(list(one.values()))} of the prompt tokens)"
    else:
        rest = [v for p, v in one.items() if p not in top]
        who = f"{_policy_names(top)} tie for the most" if len(top) > 1 else f"{top[0].upper()}'s tier serves the most"
        lead = f"{who} ({span([one[p] for p in top])} of the prompt tokens, against {span(rest)} for the others)"
    b = c.best_row
    gib = size(b["tier size"])
    if len(c.best) == len(c.four):
        tier = f"a 4x tier ({gib}) under any of the policies alike"
    elif len(c.best) > 1:
        tier = f"a 4x tier ({gib}) under {_policy_names(c.best)}, which tie,"
    else:
        tier = f"a 4x {c.best[0].upper()} tier ({gib})"
    return (
        f"With a host tier the size of the GPU's KV cache, {lead}; {tier} brings the prompt tokens served from "
        f"either cache from the GPU's {percent(c.gpu)} to {percent(b['from either'])}, closing {percent(c.closed)} of "
        f"the gap to the {percent(c.bound)} an unbounded cache would serve, and the mean TTFT from "
        f"{duration(c.none['TTFT mean'])} to {duration(b['TTFT mean'])} for {duration(b['tier time'])} of loads."
    )


def kv_tiers_mooncake(quick: bool = False) -> Table:
    """06-9: a host KV tier below the GPU's prefix cache on Mooncake's conversation trace (its
    first :data:`TIER_REQUESTS` with ``quick``), at the trace's own rate, on :data:`TIER_GPU`: no
    tier, then one of :data:`TIER_SIZES` times the GPU's KV under each of :data:`TIER_POLICIES`,
    against :func:`unbounded_hit_rate`."""
    title = "06-9  A host KV tier below the GPU's prefix cache: its size and eviction policy"
    path, _ = datasets.try_fetch(MOONCAKE)
    if path is None:
        return _not_shown(title, TIER_COLUMNS, "06-9", TIER_UNITS)
    reqs = Requests.read(MOONCAKE)
    if quick:
        reqs = reqs[:TIER_REQUESTS]
    limit = MODELS[TIER_GPU["model"]].max_model_len
    reqs, dropped = fit(reqs, limit)
    base = simulate(reqs, **TIER_GPU)
    cfg = base.config
    gpu_bytes = base.num_blocks * cfg.kv_block_bytes
    bound = unbounded_hit_rate(reqs, cfg.block_size)

    def row(multiple: int, policy: str, r: ServeResult) -> list[Any]:
        s = r.summary()
        total = s.prefix_hit_rate + s.tier_hit_rate
        latency = [s.ttft.mean, s.ttft.p99, s.tier_time]
        return [
            float(multiple),
            multiple * gpu_bytes,
            policy,
            s.prefix_hit_rate,
            s.tier_hit_rate,
            total,
            bound,
            *latency,
        ]

    rows = [row(0, "none", base)]
    for multiple in TIER_SIZES:
        for policy in TIER_POLICIES:
            tier = KvTier(multiple * gpu_bytes / 2**30, TIER_MEDIUM, policy)  # exactly multiple x the GPU's blocks
            rows.append(row(multiple, policy, simulate(reqs, **TIER_GPU, kv_tiers=(tier,))))
    table = Table(
        title=title,
        columns=TIER_COLUMNS,
        rows=rows,
        key="06-9",
        units=TIER_UNITS,
        setup=(
            f"Mooncake's conversation trace, {number(len(reqs))} requests"
            + (f" (its first {number(TIER_REQUESTS)})" if quick else "")
            + f" at its own rate, {number(dropped.requests)} longer than {number(limit)} tokens left out; "
            f"{_preset_setup(TIER_GPU['model'], TIER_GPU['gpu'], base)}, {size(gpu_bytes)} of KV; one tier below it "
            f"over {TIER_MEDIUM} ({size(MEDIA[TIER_MEDIUM].bandwidth)}/s, {duration(MEDIA[TIER_MEDIUM].latency)} a "
            "load, assumed)"
        ),
        extra={
            "sha256": datasets.sha256(path),
            "left_out": dropped.requests,
            "gpu_kv_bytes": gpu_bytes,
            "unbounded": bound,
            "tie": TIER_TIE,
            "served_on": f"{MODELS[TIER_GPU['model']].name} on one {GPUS[TIER_GPU['gpu']].name}",
        },
    )
    over = [x for x in TIER_SIZES if x * gpu_bytes > HOST_SHARE]
    host_words = (
        f" The {_and([f'{x}x' for x in over])} tier{'s' if len(over) > 1 else ''} "
        f"({_and([size(x * gpu_bytes) for x in over])}) {'hold' if len(over) > 1 else 'holds'} more than a DGX "
        "H200's 2 TiB of host memory gives each of its eight GPUs: an SSD's size at DRAM's speed."
        if over
        else ""
    )
    table.note = (
        f"{_tier_finding(table.records())} Lecture sections 3.6 and 4.5: memory below memory, a cache below a "
        "cache. What the GPU's prefix cache evicts goes to the tier, which evicts by its own policy; an admission "
        "looks past the GPU's hits into the tier, and the blocks found are loaded, not computed, their copies "
        "added to the step's time (tier time: the sum over the run). The tier sees only the GPU's evictions, the "
        "blocks its LRU found coldest, so a policy's order on its own trace need not hold here. Hit rates are "
        "shares of the prompt tokens at each request's first admission. The unbounded cache is computed from the "
        "trace's block hashes, not run: a prompt block is a hit when an earlier request has the same prefix, "
        "up to one token short of the prompt as in the engine; no cache on any schedule serves more."
        f"{host_words} Policies within a tenth of a point tie."
    )
    return table


def tables(quick: bool = False) -> list[Table]:
    """Every table of lecture demo 06 (Mooncake's rows when its trace can be had)."""
    return [
        batch_over_time(quick),
        preemption_vs_kv(quick),
        prefix_caching_mooncake(quick),
        chunked_prefill(quick),
        policies_on_unknown_lengths(quick),
        capacity_over_rates(quick),
        swap_vs_recompute(quick),
        vllm_vs_sglang(quick),
        kv_tiers_mooncake(quick),
    ]


__all__ = [
    "CAPACITY_COLUMNS",
    "CAPACITY_PLAN",
    "CAPACITY_RATES",
    "RATE_COLUMNS",
    "RATE_PRESET",
    "RATE_SWEEP",
    "SEED",
    "SLO_TPOT",
    "SLO_TTFT",
    "TIER_POLICIES",
    "TIER_SIZES",
    "TierConclusion",
    "batch_over_time",
    "capacity_over_rates",
    "chunked_prefill",
    "kv_tiers_mooncake",
    "policies_on_unknown_lengths",
    "preemption_vs_kv",
    "prefix_caching_mooncake",
    "rate_sweep",
    "rate_workload",
    "recomputed_share",
    "span",
    "swap_vs_recompute",
    "tables",
    "tier_conclusion",
    "unbounded_hit_rate",
    "vllm_vs_sglang",
]
