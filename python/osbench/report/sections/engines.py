"""The engines section: every hot loop timed on the native engine and on the reference, on the same
inputs in this run, results checked equal."""

from __future__ import annotations

import functools
from typing import Any, Callable, Optional

import numpy as np

from osbench import cache, mem, radix, sched, serve, traces
from osbench._format import ratio
from osbench._table import Table
from osbench.report.model import Progress, Section
from osbench.report.sections._shared import timed
from osbench.serve import lecture as serve_lecture

KEY = "engines"
ORDER = 70


def build(quick: bool, seed: int, progress: Optional[Progress] = None) -> Section:
    """Native vs reference on the same inputs, timed in this run, results checked equal."""
    rows: list[list[Any]] = []

    def row(loop: str, items: int, unit: str, run: Callable[..., Any], same: Callable[[Any, Any], bool]) -> None:
        """Time ``run(engine=...)`` on both engines and check they agree."""
        if progress:
            progress(f"  {loop}")
        t_native, a = timed(functools.partial(run, engine="native"))
        t_ref, b = timed(functools.partial(run, engine="reference"))
        if not same(a, b):
            raise AssertionError(f"engines disagree on {loop}")
        rows.append([loop, f"{items:,} {unit}", items / t_native, items / t_ref, t_ref / t_native])

    def same(attribute: str) -> Callable[[Any, Any], bool]:
        """The engines agree on ``attribute`` (arrays element for element)."""
        return lambda a, b: bool(np.array_equal(getattr(a, attribute), getattr(b, attribute)))

    length = 50_000 if quick else 300_000
    trace = traces.zipf(10_000, 1.0, length, seed=seed)
    trace.next_use()  # prepared once, as a reused Trace would be
    for p in cache.POLICIES:
        row(f"cache replay: {p}", length, "accesses", functools.partial(cache.replay, trace, p, 1000), same("hits"))
    jobs = 20_000 if quick else 100_000
    w = sched.workload(jobs, load=0.8, sizes="lognormal", seed=seed)
    for p in sched.POLICIES:
        params: dict[str, Any] = {"quantum": 0.1} if "quantum" in sched.PARAMETERS[p] else {}
        row(f"scheduling: {p}", jobs, "jobs", functools.partial(sched.simulate, w, p, **params), same("completion"))
    n_addr = 200_000 if quick else 2_000_000
    rng = np.random.default_rng(seed)
    page_table = rng.integers(-1, 1 << 20, size=1 << 12)
    vaddrs = rng.integers(0, (1 << 12) * 4096, size=n_addr)
    translate = functools.partial(mem.translate, vaddrs, page_table, 4096)
    row("address translation", n_addr, "addresses", translate, same("physical"))
    n_req = 5_000 if quick else 20_000
    mw = mem.workload(n_req, capacity=20_000, seed=seed)
    for strategy in ("first", "best", "paged"):
        allocate = functools.partial(mem.simulate, mw, strategy, 20_000)
        row(f"allocation: {strategy}", n_req, "requests", allocate, same("rejected_fraction"))
    requests = radix.conversations(100 if quick else 400, seed=seed)
    replay = functools.partial(radix.replay, requests, 2000)
    row("radix prefix-cache replay", len(requests), "requests", replay, lambda a, b: a.to_dict() == b.to_dict())
    served = serve.Requests.poisson(
        150 if quick else 400,
        8.0,
        prompt_len=serve_lecture.CHAT_PROMPT,
        output_len=serve_lecture.CHAT_OUTPUT,
        seed=seed,
    )
    serving = functools.partial(serve.simulate, served, **serve_lecture.SMALL_GPU)
    row("serving engine (vLLM v1 steps)", len(served), "requests", serving, same("finish"))
    speedups = [r[-1] for r in rows]
    groups = [r[0].split(":")[0] for r in rows]
    table = Table(
        "Native vs reference, measured in this run (results checked equal)",
        ["hot loop", "work", "native", "reference", "native / reference"],
        rows,
        note=(
            f"The Rust core runs {ratio(min(speedups))} to {ratio(max(speedups))} as fast as the reference. The ratio "
            "is the speed of the Rust core over the readable Python that defines the results; one timing each, on a "
            "shared machine."
        ),
        key="engines",
        units={"native": "/s", "reference": "/s", "native / reference": "x"},
        setup=(
            "cache: Zipf(1.0) over 10,000 keys, capacity 1,000; scheduling: lognormal sizes at load 0.8; "
            "allocation: capacity 20,000; radix: multi-turn conversations, capacity 2,000 tokens; serving: chat-like "
            "requests at 8/s, Llama-3-8B on an L40S"
        ),
        seed=seed,
        key_rows=[i for i, g in enumerate(groups) if i == 0 or groups[i - 1] != g],
    )
    return Section(
        "engines",
        "Engines: native vs reference",
        "Every hot loop timed on both engines in this run, on the same inputs.",
        tables=[table],
    )
