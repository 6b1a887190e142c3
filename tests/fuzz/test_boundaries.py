"""Every argument check at its boundary, on both sides: the last value accepted runs, the first
value refused raises the project's error naming the argument. A check planted one off (``<``
for ``<=``, a range one short) fails one side or the other; the bad-input table
(test_bad_inputs.py) tries values far outside the range, which such a bug leaves alone."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest

import osbench as ob
from osbench.cache.policies import MIN_CAPACITY, POLICIES
from osbench.errors import ArgumentError, OsbenchError
from osbench.serve.requests import MAX_TOKENS
from osbench.traces.formats import binary, registry

T = [1, 2, 3, 1, 2, 4, 1]
W = ob.sched.Workload.batch([1.0, 2.0])

# id -> (name in the message, call at the last accepted value, call at the first refused one)
Edge = tuple[str, Callable[[], Any], Callable[[], Any]]
EDGES: dict[str, Edge] = {}


def edge(id: str, name: str, call: Callable[[Any], Any], accepted: Any, refused: Any) -> None:
    assert id not in EDGES, id
    EDGES[id] = (name, lambda: call(accepted), lambda: call(refused))


def below(x: float) -> float:
    return math.nextafter(x, -math.inf)


def above(x: float) -> float:
    return math.nextafter(x, math.inf)


# --------------------------------------------------------------------------- traces
edge("zipf-n_keys", "n_keys", lambda v: ob.traces.zipf(v, 0.8, 10), 1, 0)
edge("zipf-length", "length", lambda v: ob.traces.zipf(10, 0.8, v), 0, -1)
edge("zipf-alpha", "alpha", lambda v: ob.traces.zipf(10, v, 10), 0.0, below(0.0))
edge("zipf-seed", "seed", lambda v: ob.traces.zipf(10, 0.8, 10, seed=v), 0, -1)
edge("loop-n_keys", "n_keys", lambda v: ob.traces.loop(v, 10), 1, 0)
edge("scan-period", "period", lambda v: ob.traces.scan(10, 10, 2, v), 1, 0)
edge("scan-scan_length", "scan_length", lambda v: ob.traces.scan(10, 10, v, 3), 0, -1)
edge("drift-phases", "phases", lambda v: ob.traces.drift(100, 10, 5, v), 1, 0)
edge("drift-p_hot-low", "p_hot", lambda v: ob.traces.drift(100, 10, 5, 2, p_hot=v), 0.0, below(0.0))
edge("drift-p_hot-high", "p_hot", lambda v: ob.traces.drift(100, 10, 5, 2, p_hot=v), 1.0, above(1.0))
edge("write-level-low", "level", lambda v: ob.traces.write([1], "/dev/null", "npy", level=v), 1, 0)
edge("write-level-high", "level", lambda v: ob.traces.write([1], "/dev/null", "npy", level=v), 22, 23)
edge(
    "oracleGeneral-times-high",
    "times",
    lambda v: ob.traces.write(ob.traces.Trace([1, 2], times=[0, v]), "/dev/null", format="oracleGeneral"),
    2**32 - 1,
    2**32,
)
edge(
    "oracleGeneral-times-low",
    "times",
    lambda v: ob.traces.write(ob.traces.Trace([1, 2], times=[v, 3]), "/dev/null", format="oracleGeneral"),
    0,
    -1,
)
edge(
    "struct-fields",
    "struct",
    lambda v: binary.struct_dtype(f"<{v}B"),
    binary.MAX_FIELDS,
    binary.MAX_FIELDS + 1,
)


def _text(tmp: Path) -> Path:
    p = tmp / "t.txt"
    p.write_text("1 10 100\n2 20 200\n")  # three columns: 0, 1, 2
    return p


def _records(tmp: Path) -> Path:
    p = tmp / "t.bin"
    p.write_bytes(np.array([(1, 10), (2, 20)], dtype="<u8,<u8").tobytes())  # two fields: 0, 1
    return p


# The two reader bounds a planted off-by-one got past: a column one past the last, a field one past.
FILE_EDGES: dict[str, tuple[str, Callable[[Path, Any], Any], Any, Any, type]] = {
    "text-key_column": ("key_column", lambda t, v: ob.traces.read(_text(t), key_column=v), 2, 3, OsbenchError),
    "text-size_column": ("size_column", lambda t, v: ob.traces.read(_text(t), size_column=v), 2, 3, OsbenchError),
    "text-time_column": ("time_column", lambda t, v: ob.traces.read(_text(t), time_column=v), 2, 3, OsbenchError),
    "binary-key_field": (
        "key_field",
        lambda t, v: ob.traces.read(_records(t), format="binary", struct="<QQ", key_field=v),
        1,
        2,
        ArgumentError,
    ),
    "binary-size_field": (
        "size_field",
        lambda t, v: ob.traces.read(_records(t), format="binary", struct="<QQ", size_field=v),
        1,
        2,
        ArgumentError,
    ),
    "binary-key_field-streamed": (
        "key_field",
        lambda t, v: ob.cache.replay(_records(t), "lru", 2, format="binary", struct="<QQ", key_field=v),
        1,
        2,
        ArgumentError,
    ),
    "csv-size": ("size", lambda t, v: ob.traces.read(_sized(t, v), size_column="size"), 1, 0, OsbenchError),
    "azure-ContextTokens": ("ContextTokens", lambda t, v: ob.traces.read(_azure(t, v)), 1, 0, OsbenchError),
    "azure-prompt_len": ("prompt_len[1]", lambda t, v: ob.serve.Requests.read(_azure(t, v)), 1, 0, OsbenchError),
    "mooncake-limit": ("limit", lambda t, v: ob.radix.mooncake(_mooncake(t), limit=v), 1, 0, ArgumentError),
    "chunk_size-low": (
        "chunk_size",
        lambda t, v: list(registry.iter_chunks(_npy(t), chunk_size=v)),
        1,
        0,
        ArgumentError,
    ),
    "chunk_size-high": (
        "chunk_size",
        lambda t, v: list(registry.iter_chunks(_npy(t), chunk_size=v)),
        registry.MAX_CHUNK,
        registry.MAX_CHUNK + 1,
        ArgumentError,
    ),
    "replay-chunk_size": (
        "chunk_size",
        lambda t, v: ob.cache.replay(_npy(t), "lru", 2, chunk_size=v),
        registry.MAX_CHUNK,
        registry.MAX_CHUNK + 1,
        ArgumentError,
    ),
}


def _sized(tmp: Path, size: int) -> Path:
    p = tmp / "sized.csv"
    p.write_text(f"key,size\n1,5\n2,{size}\n")
    return p


def _azure(tmp: Path, tokens: int) -> Path:
    p = tmp / "azure.csv"
    p.write_text(
        f"TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.68,10,5\n2023-11-16 18:15:47.68,{tokens},5\n"
    )
    return p


def _npy(tmp: Path) -> Path:
    p = tmp / "t.npy"
    ob.traces.write(T, p)
    return p


def _mooncake(tmp: Path) -> Path:
    p = tmp / "m.jsonl"
    p.write_text('{"timestamp": 1, "input_length": 3, "output_length": 2, "hash_ids": [1, 2]}\n')
    return p


# --------------------------------------------------------------------------- cache
for policy in POLICIES:
    least = MIN_CAPACITY.get(policy, 1)
    edge(f"replay-{policy}-capacity", "capacity", lambda v, p=policy: ob.cache.replay(T, p, v), least, least - 1)
edge("replay-capacity-high", "capacity", lambda v: ob.cache.replay(T, "lru", v), 2**64 - 1, 2**64)
edge("curve-capacities", "capacities", lambda v: ob.cache.curve(T, "lru", [v]), 1, 0)
edge("curve-sample-low", "sample", lambda v: ob.cache.curve(T, "lru", [2], sample=v), 1e-300, 0.0)
edge("curve-sample-high", "sample", lambda v: ob.cache.curve(T, "lru", [2], sample=v), 1.0, above(1.0))
edge("curve-threads-low", "threads", lambda v: ob.cache.curve(T, "arc", [2, 3], threads=v), 1, 0)
edge("curve-threads-high", "threads", lambda v: ob.cache.curve(T, "arc", [2, 3], threads=v), 1024, 1025)
edge("spatial_sample-rate", "rate", lambda v: ob.cache.spatial_sample(T, v), 1.0, above(1.0))
edge("online-size", "size", lambda v: ob.cache.new("lru", 10, sizes=True).access(1, v), 1, 0)
edge("online-size-high", "size", lambda v: ob.cache.new("lru", 10, sizes=True).access(1, v), 2**64 - 1, 2**64)

# --------------------------------------------------------------------------- sched
FLOOR = 2 * 2.0 * np.finfo(float).eps  # the largest job of W is 2.0


class Started(Exception):
    """Raised by a progress hook: the run was accepted and is under way."""


def started(call: Callable[[], Any]) -> None:
    """Run ``call`` until its first progress report (a round robin at the quantum floor takes
    about 2e15 turns, whatever the jobs)."""

    def hook(task: str, done: int, total: Any) -> None:
        raise Started

    try:
        with ob.progress.reporting(hook):
            call()
    except Started:
        pass


for policy in ("rr", "mlfq"):
    edge(
        f"simulate-{policy}-quantum",
        "quantum",
        lambda v, p=policy: started(lambda: ob.sched.simulate(W, p, quantum=v)),
        FLOOR,
        below(FLOOR),
    )
edge("simulate-switch_cost", "switch_cost", lambda v: ob.sched.simulate(W, "rr", switch_cost=v), 0.0, below(0.0))
edge("simulate-aging", "aging", lambda v: ob.sched.simulate(W, "priority", aging=v), 0.0, below(0.0))
edge("simulate-levels-low", "levels", lambda v: ob.sched.simulate(W, "mlfq", levels=v), 1, 0)
edge("simulate-levels-high", "levels", lambda v: ob.sched.simulate(W, "mlfq", levels=v), 1000, 1001)
edge("workload-n", "n", lambda v: ob.sched.workload(v, seed=1), 1, 0)

# --------------------------------------------------------------------------- mem
edge("mean_access_ns-fault_rate", "fault_rate", lambda v: ob.mem.mean_access_ns(v), 1.0, above(1.0))
edge("mean_access_ns-access_ns", "access_ns", lambda v: ob.mem.mean_access_ns(0.1, access_ns=v), 0.0, below(0.0))
edge("parallel_sampling-samples", "samples", lambda v: ob.mem.parallel_sampling(v), 1, 0)
edge("beam_search-steps", "steps", lambda v: ob.mem.beam_search(2, steps=v), 1, 0)
edge("table_memory-vpns", "vpns", lambda v: ob.mem.table_memory([v]), 2**36 - 1, 2**36)
edge("table_memory-vpns-low", "vpns", lambda v: ob.mem.table_memory([v]), 0, -1)

# --------------------------------------------------------------------------- serve
ONE = {"arrival": [0.0], "prompt_len": [10], "output_len": [5]}


def requests(**change: Any) -> ob.serve.Requests:
    return ob.serve.Requests(**{**ONE, **change})


edge("requests-prompt_len-low", "prompt_len[0]", lambda v: requests(prompt_len=[v]), 1, 0)
edge("requests-prompt_len-high", "prompt_len", lambda v: requests(prompt_len=[v]), MAX_TOKENS, MAX_TOKENS + 1)
edge("requests-output_len", "output_len[0]", lambda v: requests(output_len=[v]), 1, 0)
edge("requests-arrival", "arrival[0]", lambda v: requests(arrival=[v]), 0.0, below(0.0))
edge("requests-arrival-order", "arrival[1]", lambda v: ob.serve.Requests([1.0, v], [1, 1], [1, 1]), 1.0, below(1.0))
edge("requests-source_block-low", "source_block", lambda v: requests(source_block=v), 1, 0)
edge("requests-source_block-high", "source_block", lambda v: requests(source_block=v), 2**31 - 1, 2**31)


def _last_holding(holds: Callable[[float], bool], unheld: float) -> float:
    """The largest float from 0 for which ``holds`` (true at 0, false from ``unheld`` on) still
    holds: a bisection over the bits of the non-negative floats, which order as their values."""
    lo, hi = 0, int(np.float64(unheld).view(np.int64))
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if holds(float(np.int64(mid).view(np.float64))) else (lo, mid)
    return float(np.int64(lo).view(np.float64))


def _last_moved(step: float) -> float:
    """The largest arrival that a step of ``step`` seconds still moves (``a + step > a``)."""
    return _last_holding(lambda a: a + step > a, step * 2.0**54)


STEP = ob.serve.StepTime.linear(1e-3, 0.0, 0.0, 0.0)
edge(
    "simulate-arrival-clock",
    "arrival",
    lambda v: ob.serve.simulate(ob.serve.Requests([v], [1], [1]), step_time=STEP, num_blocks=8),
    _last_moved(1e-3),
    above(_last_moved(1e-3)),
)
edge(
    "simulate-concurrency",
    "concurrency",
    lambda v: ob.serve.simulate(requests(), step_time=STEP, num_blocks=8, concurrency=v),
    1,
    0,
)


def _last_turnaround(step: float, n: int) -> float:
    """The largest turnaround whose ``n + 1`` turns from 0 leave a step of ``step`` seconds still
    moving the clock (``run.check_clock_moves``: each of ``n`` requests may follow a turnaround)."""
    return _last_holding(lambda t: (n + 1) * t + step > (n + 1) * t, step * 2.0**54)


edge(
    "simulate-turnaround-clock",
    "turnaround",
    lambda v: ob.serve.simulate(requests(), step_time=STEP, num_blocks=8, concurrency=ob.serve.Clients(1, v)),
    _last_turnaround(1e-3, 1),
    above(_last_turnaround(1e-3, 1)),
)
edge("poisson-seed", "seed", lambda v: ob.serve.Requests.poisson(3, 1.0, seed=v), 0, -1)
edge("poisson-n", "n", lambda v: ob.serve.Requests.poisson(v, 1.0), 0, -1)
edge("config-num_blocks", "num_blocks", lambda v: ob.serve.EngineConfig(num_blocks=v), 2, 1)
edge("config-block_size", "block_size", lambda v: ob.serve.EngineConfig(num_blocks=4, block_size=v), 1, 0)
edge(
    "config-block_size-high",
    "block_size",
    lambda v: ob.serve.EngineConfig(num_blocks=4, block_size=v),
    2**62,
    2**62 + 1,
)
edge("config-watermark-low", "watermark", lambda v: ob.serve.EngineConfig(num_blocks=4, watermark=v), 0.0, below(0.0))
edge("config-watermark-high", "watermark", lambda v: ob.serve.EngineConfig(num_blocks=4, watermark=v), below(1.0), 1.0)
edge(
    "config-max_num_batched_tokens",
    "max_num_batched_tokens",
    lambda v: ob.serve.EngineConfig(num_blocks=4, max_num_seqs=8, max_num_batched_tokens=v),
    8,
    7,
)
edge(
    "config-long_prefill_token_threshold",
    "long_prefill_token_threshold",
    lambda v: ob.serve.EngineConfig(num_blocks=4, max_model_len=64, long_prefill_token_threshold=v),
    64,
    65,
)
edge(
    "config-no-chunking",
    "max_num_batched_tokens",
    lambda v: ob.serve.EngineConfig(
        num_blocks=4, max_model_len=64, max_num_seqs=8, enable_chunked_prefill=False, max_num_batched_tokens=v
    ),
    64,
    63,
)


def _names(message: str, name: str) -> bool:
    return re.search(rf"(^|\W){re.escape(name)}(=|\W)", message) is not None


@pytest.mark.parametrize("id", sorted(EDGES))
def test_the_last_value_accepted_runs_and_the_first_refused_names_the_argument(id: str) -> None:
    name, accepted, refused = EDGES[id]
    accepted()
    with pytest.raises(ArgumentError) as info:
        refused()
    assert _names(str(info.value), name), info.value


@pytest.mark.parametrize("id", sorted(FILE_EDGES))
def test_a_reader_bound_holds_on_both_sides(id: str, tmp_path: Path) -> None:
    name, call, accepted, refused, error = FILE_EDGES[id]
    call(tmp_path, accepted)
    with pytest.raises(error) as info:  # the project's error, never a bare IndexError
        call(tmp_path, refused)
    assert _names(str(info.value), name), info.value


def test_every_policy_has_its_capacity_edge() -> None:
    assert {i for i in EDGES if i.endswith("-capacity") and i.startswith("replay-")} == {
        f"replay-{p}-capacity" for p in POLICIES
    }
