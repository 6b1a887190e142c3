"""Type stubs of the native extension (Rust, PyO3). Checked by ``mypy.stubtest osbench._native``."""

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Optional, TypedDict, Union, final

import numpy as np
import numpy.typing as npt

# _Keys: int64 or uint64 arrays in place, or any sequence or buffer of ints in [-2**63, 2**63).
_Keys = Union[npt.NDArray[np.int64], npt.NDArray[np.uint64], Sequence[int], memoryview]

__all__ = [
    "BUILD_PROFILE",
    "CACHE_ADMISSIONS",
    "CACHE_POLICIES",
    "HOST_MECHANISMS",
    "MEM_STRATEGIES",
    "PROGRESS_EVERY",
    "RADIX_MODES",
    "SCHED_POLICIES",
    "SERVE_ENGINES",
    "SERVE_LINKS",
    "SERVE_POLICIES",
    "SERVE_PREEMPTIONS",
    "SERVE_RECORD_COLUMNS",
    "SERVE_ROUTERS",
    "SERVE_RUN_COLUMNS",
    "SERVE_TIER_MEDIA",
    "CacheStream",
    "MeasuredTables",
    "OnlineCache",
    "RadixNode",
    "RadixTree",
    "__version__",
    "cache_admission_parameters",
    "cache_curve",
    "cache_lru_shards",
    "cache_min_capacity",
    "cache_parameters",
    "cache_replay",
    "cache_replay_grid",
    "cache_spatial_sample",
    "dense_ids",
    "host_chase",
    "host_chase_cycle",
    "host_cow",
    "host_current_cpu",
    "host_page_touch",
    "host_pingpong",
    "mem_simulate",
    "mem_slot_mapping",
    "mem_translate",
    "next_use",
    "progress_hook",
    "radix_curve",
    "radix_replay",
    "sched_simulate",
    "serve_simulate",
    "serve_simulate_cluster",
    "serve_simulate_disaggregated",
    "serve_simulate_sglang",
    "serve_step_seconds",
    "traces_drift",
    "traces_loop",
    "traces_scan",
    "traces_zipf",
]

BUILD_PROFILE: str
__version__: str
PROGRESS_EVERY: float

def progress_hook(
    hook: Optional[Callable[[str, int, Optional[int]], object]], every: float = ...
) -> Optional[tuple[Callable[[str, int, Optional[int]], object], float]]: ...

SERVE_LINKS: list[tuple[str, float, str]]
SERVE_TIER_MEDIA: list[tuple[str, float, float, str]]
SERVE_POLICIES: list[str]
SERVE_PREEMPTIONS: list[str]
SERVE_ROUTERS: list[str]
# (name, release it follows, policies, config fields, engines that run it)
SERVE_ENGINES: list[tuple[str, str, list[str], list[str], list[str]]]
# A run's columns (EngineRun's fields, Steps' for steps, record left out) and its record's (StepRecord's)
SERVE_RUN_COLUMNS: list[str]
SERVE_RECORD_COLUMNS: list[str]

# cache
_ParamValue = Union[bool, int, float]

class _CacheParamRow(TypedDict):
    name: str
    kind: str
    default: _ParamValue
    accepts: str
    doc: str

class _CachePolicyRow(TypedDict):
    name: str
    min_capacity: int
    offline: bool
    takes_costs: bool
    reads: list[str]
    params: list[_CacheParamRow]
    libcachesim: Optional[str]
    randomised: bool
    hashes_keys: bool

CACHE_POLICIES: list[_CachePolicyRow]

class _CacheAdmissionRow(TypedDict):
    name: str
    params: list[_CacheParamRow]
    libcachesim: str
    seeded: bool
    doc: str

CACHE_ADMISSIONS: list[_CacheAdmissionRow]

def cache_admission_parameters(
    name: str, params: Optional[Mapping[str, _ParamValue]] = None
) -> dict[str, _ParamValue]: ...
def cache_parameters(
    policy: str, name: str, capacities: list[int], params: Optional[Mapping[str, _ParamValue]] = None
) -> dict[str, _ParamValue]: ...
def cache_min_capacity(policy: str, params: Optional[Mapping[str, _ParamValue]] = None) -> int: ...
def dense_ids(keys: _Keys) -> tuple[npt.NDArray[np.uint32], int]: ...
def next_use(ids: npt.NDArray[np.uint32], n_ids: int) -> npt.NDArray[np.uint64]: ...
def cache_spatial_sample(keys: _Keys, rate: float, seed: int = 0) -> npt.NDArray[np.bool_]: ...
def cache_lru_shards(
    keys: _Keys, rate: float, seed: int = 0, exact_depth: int = 0
) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.uint64]]: ...
def cache_replay(
    policy: str,
    ids: npt.NDArray[np.uint32],
    n_ids: int,
    capacity: int,
    next_use: Optional[npt.NDArray[np.uint64]] = None,
    mask: bool = False,
    params: Optional[Mapping[str, _ParamValue]] = None,
    sizes: Optional[npt.NDArray[np.uint64]] = None,
    costs: Optional[npt.NDArray[np.float64]] = None,
    admission: Optional[str] = None,
    admission_params: Optional[Mapping[str, _ParamValue]] = None,
    keys: Optional[npt.NDArray[np.uint64]] = None,
) -> tuple[int, Optional[npt.NDArray[np.bool_]]]: ...
def cache_curve(
    policy: str,
    ids: npt.NDArray[np.uint32],
    n_ids: int,
    capacities: npt.NDArray[np.uint64],
    next_use: Optional[npt.NDArray[np.uint64]] = None,
    params: Optional[Mapping[str, _ParamValue]] = None,
    threads: Optional[int] = None,
    sizes: Optional[npt.NDArray[np.uint64]] = None,
    costs: Optional[npt.NDArray[np.float64]] = None,
    admission: Optional[str] = None,
    admission_params: Optional[Mapping[str, _ParamValue]] = None,
    keys: Optional[npt.NDArray[np.uint64]] = None,
) -> npt.NDArray[np.uint64]: ...
def cache_replay_grid(
    policies: list[str],
    capacities: npt.NDArray[np.uint64],
    ids: npt.NDArray[np.uint32],
    n_ids: int,
    next_use: Optional[npt.NDArray[np.uint64]] = None,
    params: Optional[Mapping[str, _ParamValue]] = None,
    threads: Optional[int] = None,
    sizes: Optional[npt.NDArray[np.uint64]] = None,
    costs: Optional[npt.NDArray[np.float64]] = None,
    admission: Optional[str] = None,
    admission_params: Optional[Mapping[str, _ParamValue]] = None,
    keys: Optional[npt.NDArray[np.uint64]] = None,
) -> npt.NDArray[np.uint64]: ...

@final
class OnlineCache:
    @property
    def capacity(self) -> int: ...
    @property
    def name(self) -> str: ...
    @property
    def sizes(self) -> bool: ...
    @property
    def costs(self) -> bool: ...
    @property
    def used(self) -> int: ...
    def __new__(
        cls,
        policy: str,
        capacity: int,
        params: Optional[Mapping[str, _ParamValue]] = None,
        sizes: bool = False,
        costs: bool = False,
        admission: Optional[str] = None,
        admission_params: Optional[Mapping[str, _ParamValue]] = None,
    ) -> OnlineCache: ...
    def access(self, key: int, size: Optional[int] = None, cost: Optional[float] = None) -> bool: ...
    def __contains__(self, key: int, /) -> bool: ...
    def __len__(self) -> int: ...

@final
class CacheStream:
    """One thread feeds a stream at a time: a feed while another runs raises RuntimeError."""

    @property
    def capacity(self) -> int: ...
    @property
    def name(self) -> str: ...
    @property
    def accesses(self) -> int: ...
    @property
    def hits(self) -> int: ...
    @property
    def n_distinct(self) -> int: ...
    @property
    def needs_future(self) -> bool: ...
    @property
    def bad_access(self) -> Optional[int]: ...
    @property
    def key_map_bytes(self) -> int: ...
    def __new__(
        cls,
        policy: str,
        capacity: int,
        params: Optional[Mapping[str, _ParamValue]] = None,
        admission: Optional[str] = None,
        admission_params: Optional[Mapping[str, _ParamValue]] = None,
    ) -> CacheStream: ...
    def feed(
        self,
        keys: _Keys,
        next_access: npt.NDArray[np.int64] | None = None,
        sizes: npt.NDArray[np.uint64] | None = None,
    ) -> int: ...
    def finish(self) -> None: ...

# radix
RADIX_MODES: list[tuple[str, list[str]]]  # (name, the parameters it reads)

@final
class RadixNode:
    def __eq__(self, value: object, /) -> bool: ...
    def __hash__(self) -> int: ...

_NodeTuple = tuple[int, int, list[int], int, int, RadixNode]

@final
class RadixTree:
    def __new__(cls, page_size: int = 1) -> RadixTree: ...
    def insert(self, tokens: object) -> int: ...
    def match_prefix(self, tokens: object) -> tuple[int, RadixNode]: ...
    def lock(self, node: RadixNode) -> None: ...
    def unlock(self, node: RadixNode) -> None: ...
    def evict(self, num_tokens: int) -> int: ...
    def root(self) -> RadixNode: ...
    def nodes(self) -> list[_NodeTuple]: ...
    def node(self, node: RadixNode) -> _NodeTuple: ...
    def parent(self, node: RadixNode) -> Optional[RadixNode]: ...
    def owns(self, node: RadixNode) -> bool: ...
    @property
    def page_size(self) -> int: ...
    @property
    def total_size(self) -> int: ...
    @property
    def evictable_size(self) -> int: ...
    @property
    def protected_size(self) -> int: ...
    @property
    def num_nodes(self) -> int: ...
    @property
    def clock(self) -> int: ...
    @property
    def evicted_nodes(self) -> int: ...
    @property
    def evicted_tokens(self) -> int: ...

_Stats = tuple[int, int, int, int, int, int, int]

def radix_replay(
    mode: str,
    tokens: npt.NDArray[np.int64],
    offsets: npt.NDArray[np.int64],
    capacity: Optional[int] = None,
    page_size: int = 1,
    output_tokens: Optional[npt.NDArray[np.int64]] = None,
    output_offsets: Optional[npt.NDArray[np.int64]] = None,
    per_request: bool = False,
) -> tuple[_Stats, Optional[npt.NDArray[np.uint64]]]: ...
def radix_curve(
    mode: str,
    tokens: npt.NDArray[np.int64],
    offsets: npt.NDArray[np.int64],
    capacities: npt.NDArray[np.int64],
    page_size: int = 1,
    output_tokens: Optional[npt.NDArray[np.int64]] = None,
    output_offsets: Optional[npt.NDArray[np.int64]] = None,
    threads: Optional[int] = None,
) -> list[_Stats]: ...

# host (Linux)
HOST_MECHANISMS: list[str]

def host_current_cpu() -> int: ...
def host_pingpong(
    mechanism: str,
    mode: str,
    rounds: int,
    warmup: int = 1000,
    batch: int = 1,
    cpu_a: Optional[int] = None,
    cpu_b: Optional[int] = None,
) -> dict[str, Any]: ...
def host_page_touch(nbytes: int, prefault: str = "none") -> dict[str, Any]: ...
def host_cow(buffer_bytes: int, pages_written: int) -> tuple[int, int, int]: ...
def host_chase_cycle(lines: int, seed: int) -> npt.NDArray[np.uint32]: ...
def host_chase(
    nbytes: int, loads: int, repeats: int = 3, seed: int = 0, huge_pages: bool = False
) -> npt.NDArray[np.float64]: ...

# sched
SCHED_POLICIES: list[tuple[str, list[str], bool]]  # (name, the parameters it reads, whether it preempts)

def sched_simulate(
    policy: str,
    arrival: npt.NDArray[np.float64],
    size: npt.NDArray[np.float64],
    predicted: Optional[npt.NDArray[np.float64]],
    priority: Optional[npt.NDArray[np.int64]],
    *,
    quantum: float,
    switch_cost: float,
    levels: Optional[int],
    boost: Optional[float],
    use_predictions: bool,
    aging: float,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], int, float]: ...

# mem
MEM_STRATEGIES: list[tuple[str, list[str]]]  # (name, the parameters it reads)

def mem_translate(
    vaddrs: npt.NDArray[np.int64], page_table: npt.NDArray[np.int64], page_size: int
) -> tuple[npt.NDArray[np.int64], int]: ...
def mem_slot_mapping(
    block_table: npt.NDArray[np.int64],
    row_len: int,
    positions: npt.NDArray[np.int64],
    block_size: int,
    seq_ids: Optional[npt.NDArray[np.int64]] = None,
    tokens_per_row: int = 0,
) -> tuple[npt.NDArray[np.int64], int]: ...
def mem_simulate(
    strategy: str,
    arrival: npt.NDArray[np.float64],
    duration: npt.NDArray[np.float64],
    initial: npt.NDArray[np.uint64],
    final_size: npt.NDArray[np.uint64],
    capacity: int,
    page_size: int = 1,
    bound: int = 1,
    check: bool = False,
) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.uint64], npt.NDArray[np.uint64], npt.NDArray[np.uint64]]: ...

# What a run returns: (its columns by name, SERVE_RUN_COLUMNS; its record's, SERVE_RECORD_COLUMNS,
# or None; the steps the decode jump took)
_Run = tuple[dict[str, npt.NDArray[Any]], Optional[dict[str, npt.NDArray[np.int64]]], int]

# The serving entry points take their arguments in groups, dicts by key (the binding's
# RequestArrays, EngineArgs and RouterArgs):
# - requests: arrival (float64), prompt_len, output_len (int64), and optionally priority,
#   predicted (int64), keys (uint64), key_offsets (int64), each None or absent when not given;
# - engine: settings (the configuration's fields by name, SERVE_ENGINES' row), step_kind,
#   step_coefficients (StepTime.spec()), and optionally step_tables (a MeasuredTables);
# - router: name (of SERVE_ROUTERS), seed, cache_threshold, balance_abs_threshold,
#   balance_rel_threshold, block_size, and optionally keys, key_offsets (prefix-aware's);
# - options: record, jump (bools), and optionally concurrency (None: open loop), turnaround (0.0),
#   warmup (0) and steps (True).
_ServeRequests = Mapping[str, Optional[npt.NDArray[Any]]]
_ServeEngine = Mapping[str, Any]
_ServeRouter = Mapping[str, Any]
_ServeOptions = Mapping[str, Union[bool, int, float, None]]

def serve_simulate(requests: _ServeRequests, engine: _ServeEngine, options: _ServeOptions) -> _Run: ...
def serve_simulate_sglang(
    requests: _ServeRequests, engine: _ServeEngine, options: _ServeOptions, *, compensated_sum: bool = False
) -> _Run: ...
def serve_simulate_cluster(
    requests: _ServeRequests, engine: _ServeEngine, replicas: int, router: _ServeRouter, options: _ServeOptions
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], list[_Run]]: ...
def serve_simulate_disaggregated(
    requests: _ServeRequests,
    prefill_engine: _ServeEngine,
    decode_engine: _ServeEngine,
    prefill: int,
    decode: int,
    router: _ServeRouter,
    decode_router: _ServeRouter,
    link: tuple[float, float, int],
    kv_bytes: npt.NDArray[np.int64],
    prefill_predicted: Optional[npt.NDArray[np.int64]],
    options: _ServeOptions,
) -> tuple[
    npt.NDArray[np.int64],
    npt.NDArray[np.int64],
    npt.NDArray[np.float64],
    npt.NDArray[np.float64],
    list[_Run],
    list[_Run],
    list[npt.NDArray[np.int64]],
]: ...

@final
class MeasuredTables:
    def __new__(
        cls,
        host_step: float,
        tokens: npt.NDArray[np.float64],
        seqs: npt.NDArray[np.float64],
        attention: list[
            tuple[
                int,
                npt.NDArray[np.float64],
                npt.NDArray[np.float64],
                npt.NDArray[np.float64],
                npt.NDArray[np.float64],
                npt.NDArray[np.float64],
                npt.NDArray[np.float64],
            ]
        ],
    ) -> MeasuredTables: ...
    def seconds(
        self,
        *,
        chunk_offsets: npt.NDArray[np.int64],
        chunk_new: npt.NDArray[np.int64],
        chunk_context: npt.NDArray[np.int64],
        **columns: npt.NDArray[np.int64],
    ) -> npt.NDArray[np.float64]: ...

def serve_step_seconds(
    step_kind: str,
    step_coefficients: list[float],
    **columns: npt.NDArray[np.int64],
) -> npt.NDArray[np.float64]: ...

# traces
def traces_zipf(
    cdf: npt.NDArray[np.float64], state: tuple[int, int], inc: tuple[int, int], length: int
) -> npt.NDArray[np.int64]: ...
def traces_loop(n_keys: int, length: int) -> npt.NDArray[np.int64]: ...
def traces_scan(
    n_hot: int, scan_length: int, period: int, state: tuple[int, int], inc: tuple[int, int], length: int
) -> npt.NDArray[np.int64]: ...
def traces_drift(
    n_keys: int, n_hot: int, phases: int, p_hot: float, state: tuple[int, int], inc: tuple[int, int], length: int
) -> npt.NDArray[np.int64]: ...
