"""Validation against measured serving runs: AIConfigurator's ``silicon_sample.csv``.

Each row of that file is one measured benchmark of a real engine: a model on ``tp`` GPUs, input
and output lengths (ISL, OSL, ``ignore_eos``), a fixed number of clients each sending its next
request when the last one finished (``--max-concurrency``), and the mean time to first token
(TTFT) and per output token (TPOT) it measured. :func:`rows` reads the rows osbench can replay
(vLLM, aggregated serving, a model and GPU with presets and measured tables, the clients'
concurrency recorded); :func:`predict`
replays one through the serving engine with a step-time model, the clients sending what that
point's benchmark sent; :func:`summary` gives the MAPE by GPU, model, vLLM version, model kind
and step-time model.

The rows come from two campaigns, and how a campaign's client sent its requests changes the
steps more than any kernel does; each source file's points are replayed as their benchmark ran
(:data:`SOURCE_BENCHMARKS`, :data:`BENCHMARKS`):

- ``inferencemax``: the Llama-3.1-70B FP8 sweep of ``2026-04-06.csv`` is InferenceMAX's: the
  same grid (ISL/OSL 1024/1024, 1024/8192 and 8192/1024, 4 to 64 clients, TP 1 to 8, H100, H200
  and B200) and its client, vLLM's ``benchmark_serving.py`` with ``--random-range-ratio 0.8
  --num-prompts 10*CONC --max-concurrency CONC --request-rate inf --ignore-eos``: every
  request's lengths drawn uniformly between 80% and 100% of ISL and OSL, all clients starting
  at once, every request measured (:func:`burst_loop`); its server ran with ``--max-num-seqs
  CONC --max-num-batched-tokens 8192 --no-enable-prefix-caching`` and an FP8 KV cache
  (:func:`model_for`); its gpt-oss-120b sweep (the source files) and MiniMax-M2.5 sweep (its
  database's ``db-dump`` rows) ran the same client, each server with its script's flags;
- ``aiperf`` (every other source: AIConfigurator's own measurements of vLLM 0.12.0): the
  benchmark its generator writes (:class:`AIPerfClients`, :func:`aiperf_loop`): AIPerf with
  fixed lengths, a warm-up phase it drains, then ``20 x concurrency`` requests all measured,
  every client starting at once; a server with as many sequences as clients and a step budget
  of a prompt, a token per client and 1,500 more (:func:`config_for`);
- ``aiperf-pool``: as ``aiperf``, the Llama-3.1-8B FP8 points' prompts drawn from a pool of
  :data:`DATASET_PROMPTS` with vLLM's prefix cache on: 11 of the 21 process more tokens per
  second than the GPU's linear layers can at their best batch (:func:`gemm_bound`), which only
  repeated prompts explain.

TPOT of a request is ``(last token - first token) / (output tokens - 1)``, as vLLM's benchmark
computes it. Nothing is fitted here but the fitted model's host work per step and per request
on :data:`FIT_SPLIT` (:func:`fit_host`): every other number the step-time models use comes from the datasheets, the
kernel tables and the published constants their modules cite, and :func:`summary` reports every
model on the points outside the split.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Callable, Optional

import numpy as np

from osbench import _checks, datasets
from osbench.errors import ArgumentError, ArgumentTypeError
from osbench.serve import measured, native, reference
from osbench.serve.config import EngineConfig
from osbench.serve.models import GPU, Model, num_blocks
from osbench.serve.requests import Requests
from osbench.serve.run import Clients, EngineRun, check_turnaround
from osbench.serve.steptime import StepTime, nonnegative_least_squares

SILICON = "aic-silicon-sample"
"""The dataset of measured serving runs."""

MODELS = {
    "Qwen/Qwen3-32B": "qwen3-32b",
    "meta-llama/Llama-3.1-70B": "llama-3.1-70b",
    "nvidia/Llama-3.1-8B-Instruct-FP8": "llama-3.1-8b",
    "Qwen/Qwen3-235B-A22B-FP8": "qwen3-235b-a22b",
    "Qwen/Qwen3-30B-A3B": "qwen3-30b-a3b",
    "Qwen/Qwen3-14B": "qwen3-14b",
    "openai/gpt-oss-120b": "gpt-oss-120b",
    "MiniMaxAI/MiniMax-M2.5": "minimax-m2.5",
}
"""Hugging Face model ids of the silicon rows -> presets (the precision column says fp8)."""

SYSTEMS = {"h100_sxm": "h100-sxm", "h200_sxm": "h200", "rtx_pro_6000_server": "rtx-pro-6000"}
"""AIConfigurator system names -> GPU presets."""

DATASET_PROMPTS = 100
"""Distinct prompts the benchmark client sends: AIPerf's synthetic dataset holds
``--num-dataset-entries`` prompts, 100 unless given (``InputDefaults.NUM_DATASET_ENTRIES`` in
``aiperf/common/config/config_defaults.py``; genai-perf's ``DEFAULT_NUM_DATASET_ENTRIES`` is 100
too), and AIConfigurator's benchmark script does not give it (:class:`AIPerfClients`). Each
prompt is a random slice of a tokenised corpus (``PromptGenerator._sample_tokens``), so two
prompts share no block, and a request reuses one of the 100 (``ShuffleSampler``: each entry
once in a shuffled order, then reshuffled): with vLLM's prefix cache on (its default), a request
whose prompt is still cached computes only its last block."""

PROMPT_SEED = 100
"""The seed of the shuffled order the clients draw :data:`DATASET_PROMPTS` in (the benchmark
script's ``--random-seed 100``; AIPerf's own generator is not reproduced, only its rule)."""

GPU_MEMORY_UTILIZATION = 0.9
"""The KV pool of the measured engines: vLLM's default share of GPU memory in the releases
measured (0.9 before 0.33.0's 0.92)."""


CLIENT_TURNAROUND = 1e-3
"""Seconds from a response's last token to its client's next request reaching the engine (the
response's trip, the client sending again, the server's HTTP handling and tokenisation): an
assumption, not measured by the rows. Any value under a step's length gives nearly the same
replay: what matters is that the next request misses the step that starts the moment its
predecessor finished, as it does in a real server, and joins the one after
(:class:`~osbench.serve.run.Clients`). 0.3 ms and 3 ms move the InferenceMAX points' TTFT MAPE
by half a point at most."""

AIPERF, AIPERF_POOL, INFERENCEMAX = "aiperf", "aiperf-pool", "inferencemax"

BENCHMARKS = {
    AIPERF: "AIPerf: fixed lengths, a drained warm-up, then all clients at once, 20 x concurrency measured",
    AIPERF_POOL: f"as aiperf, the prompts drawn from a pool of {DATASET_PROMPTS} with the prefix cache on",
    INFERENCEMAX: "benchmark_serving: lengths 80-100% of ISL/OSL, all clients at once, 10 x concurrency measured",
}
"""The benchmarks the measured points were taken with (see the module's docstring), each with a
line that says what its replay sends."""

SOURCE_BENCHMARKS = {
    "2026-03-25.csv": INFERENCEMAX,
    "2026-04-06.csv": INFERENCEMAX,
    "nvidia_Llama-3.1-8B-Instruct-FP8.csv": AIPERF_POOL,
}
"""Source files of the silicon rows (the ``source_file`` of ``silicon_data_source``, its last
path component) -> their benchmark; a row from InferenceMAX's database (a ``db-dump/<date>``
source with the ``workflow_run_id`` of the run and its ``config_id``) is :data:`INFERENCEMAX`
too, and the same measurements appear in its source files; every other source is
:data:`AIPERF`: AIConfigurator's own measurements
(``aic-auto-gap-analysis/data/<system>/vllm/0.12.0/<model>.csv``), taken with the benchmark its
generator writes."""

INFERENCEMAX_MAX_CLIENTS = 64
"""The most clients InferenceMAX's sweeps of these models run (``conc-end: 64`` in every search
space of ``.github/configs/nvidia-master.yaml``, 2025-09 to 2026-04). Rows of its source files
with more (nine gpt-oss rows on H100 at 512 clients, measured 2025-12-05 and 08) came from runs
whose setup is not recorded, and not from a server of as many sequences as clients: there the
kernels of one decode step of 512 requests take 2-5 times the measured TPOT. They are not
replayed (:func:`rows`)."""

INFERENCEMAX_BATCHED_TOKENS = 8192
"""InferenceMAX's ``--max-num-batched-tokens 8192`` (its ``--max-num-seqs`` is the concurrency)."""


@dataclass(frozen=True)
class BurstClients:
    """Clients as vLLM's ``benchmark_serving.py`` runs them with ``--dataset-name random
    --request-rate inf --max-concurrency``: every request created at once, each with random
    lengths (:func:`burst_loop`)."""

    prompts_per_client: int = 10
    """Requests per client, all measured: InferenceMAX's ``--num-prompts $(( CONC * 10 ))``."""
    range_ratio: float = 0.8
    """InferenceMAX's ``--random-range-ratio``: ``sample_random_requests`` draws each input and
    output length uniformly from ``int(L * 0.8) .. L`` (``np.random.randint``)."""
    seed: int = 0
    """The seed of the drawn lengths (``benchmark_serving.py``'s ``--seed`` default; its generator
    and tokenizer are not reproduced, only its rule: the lengths are drawn with numpy's
    ``default_rng``)."""
    turnaround: float = CLIENT_TURNAROUND
    """Seconds from a finish to the next request reaching the engine (:data:`CLIENT_TURNAROUND`)."""

    def __post_init__(self) -> None:
        _checks.positive_int("prompts_per_client", self.prompts_per_client)
        _checks.probability("range_ratio", self.range_ratio)
        _checks.non_negative_int("seed", self.seed)
        check_turnaround(self.turnaround)


INFERENCEMAX_CLIENTS = BurstClients()
"""InferenceMAX's clients."""


@dataclass(frozen=True)
class AIPerfClients:
    """Clients as the benchmark AIConfigurator's generator writes runs them (``aiperf profile
    --concurrency C --num-requests $((C * 20)) --warmup-request-count $((C * 2)) --isl ISL --osl
    OSL --extra-inputs ignore_eos:true --streaming``, ``generator/config/backend_templates/
    benchmark/bench_run.sh.j2``; its ``sflow`` flavour asks for ``C`` warm-up requests and as many
    dataset entries as requests): fixed lengths, ``C`` requests in flight (:func:`aiperf_loop`).

    AIPerf runs its phases one after the other and waits for each phase's requests to come back
    before it starts the next (``CreditIssuingStrategy._execute_phases`` in
    ``aiperf/timing/credit_issuing_strategy.py``), and sends each request as soon as its
    ``--concurrency`` semaphore allows (``RequestRateMode.CONCURRENCY_BURST``,
    ``request_rate_strategy.py``), so the warm-up is drained and the profiling phase starts with
    every client sending at once, on an idle server. With fixed lengths the
    requests prefilled in one step finish in one step, and their clients send again together:
    the clients stay in step from round to round, and each request's TTFT counts the prompts
    sent beside it."""

    rounds: int = 20
    """Requests per client, all measured: ``--num-requests $((concurrency *
    ${BENCH_MULTI_ROUND}))``, ``BENCH_MULTI_ROUND`` 20 unless set (the ``sflow`` flavour's
    ``MULTI_ROUND`` is 20 too)."""
    warmup: int = 2
    """Warm-up requests per client, not measured: ``--warmup-request-count $((concurrency * 2))``.
    They matter only where a later request can reuse their prompts (a pool of prompts with the
    prefix cache on); otherwise the drained server they leave behind is an idle one."""
    turnaround: float = CLIENT_TURNAROUND
    """Seconds from a finish to the next request reaching the engine (:data:`CLIENT_TURNAROUND`),
    and from the warm-up's last finish to the profiling phase's first requests."""

    def __post_init__(self) -> None:
        _checks.positive_int("rounds", self.rounds)
        _checks.non_negative_int("warmup", self.warmup)
        check_turnaround(self.turnaround)


AIPERF_CLIENTS = AIPerfClients()
"""The clients of AIConfigurator's measurements."""

GENERATOR_EXTRA_TOKENS = 1500
"""AIConfigurator's generator sizes an aggregated vLLM server for a benchmark (its benchmark rule
plugin, ``generator/rule_plugin/benchmark/vllm.rule``): ``max_batch_size`` the batch of the
point (the rows' ``batch_size``, equal to their client concurrency), ``--max-num-seqs`` that
batch, and ``agg max_num_tokens = max_batch_size + isl + 1500``, passed as
``--max-num-batched-tokens``: a step fits one prompt, a token of every running request, and this
many tokens more. The points' own TTFT rules out vLLM's default 8,192: with every client
sending at once, it puts 8 prompts of 1,024 tokens in one step, and Qwen3-32B on 2 H100s at 8
clients would wait 454 ms for its first token; the measured mean is 154 ms, and this budget
gives 208 ms there and within 2% on 4 and 8 H100s."""


@dataclass(frozen=True)
class Point:
    """One measured serving run."""

    id: str
    model: str
    """The preset (``-fp8`` for an FP8 checkpoint)."""
    gpu: str
    tp: int
    version: str
    """The engine release measured (``"unknown"`` where the row leaves it blank)."""
    isl: int
    osl: int
    concurrency: int
    ttft: float
    """Measured mean TTFT, seconds."""
    tpot: float
    """Measured mean TPOT, seconds."""
    benchmark: str = AIPERF
    """How the point was measured: one of :data:`BENCHMARKS` (:data:`SOURCE_BENCHMARKS`)."""

    @property
    def moe(self) -> bool:
        return Model.preset(self.model).experts > 1


def _provenance(row: dict[str, str]) -> dict[str, str]:
    """A row's ``silicon_data_source``, ``key=value; key=value; ...``, as a dict."""
    pairs = (part.strip().partition("=") for part in row["silicon_data_source"].split(";"))
    return {key: value.strip() for key, _, value in pairs if key}


LEFT_OUT = {
    "scope": "another engine, a disaggregated or pipelined server, data-parallel attention, or a model or GPU "
    "without a preset",
    "experts apart": "an MoE whose experts are sharded otherwise than its attention (expert parallelism)",
    "experts not timed": "an MoE whose expert layer the GPU's MoE table does not time at the row's tp",
    "no clients": "the clients' concurrency not recorded (only a batch per worker)",
    "beyond the sweep": "more clients than InferenceMAX's sweep runs",
    "published twice": "a measurement already read from another source file",
}
"""Why a silicon row is not replayed (:func:`survey`), by the key its count is reported under."""


@dataclass(frozen=True)
class Survey:
    """The silicon rows read: the points replayed, and how many rows were left out, by reason
    (:data:`LEFT_OUT`'s keys, each present)."""

    points: list[Point]
    left_out: dict[str, int]


def survey(path: Optional[str] = None) -> Survey:
    """The silicon rows osbench can replay (:func:`rows`) and the count of the others by the
    reason they are left out (:data:`LEFT_OUT`)."""
    source = str(path) if path is not None else str(datasets.fetch(SILICON))
    out = []
    left = dict.fromkeys(LEFT_OUT, 0)
    seen: set[tuple[str, ...]] = set()
    with open(source, newline="") as f:
        for r in csv.DictReader(f):
            reason, point = _replayable(r, seen)
            if point is None:
                left[reason] += 1
            else:
                out.append(point)
    return Survey(out, left)


def _replayable(r: dict[str, str], seen: set[tuple[str, ...]]) -> tuple[str, Optional[Point]]:
    """One silicon row as a :class:`Point`, or the :data:`LEFT_OUT` key of why it is not one
    (``seen``: the measurements already read, which this one joins)."""
    if r["backend"] != "vllm" or r["mode"] != "agg" or r["model_path"] not in MODELS:
        return "scope", None
    if r["system"] not in SYSTEMS or r["pp_size"] not in ("", "1") or r["attention_dp_size"] not in ("", "1"):
        return "scope", None
    # An FP8 row of a preset released in FP8 (MiniMax-M2.5) is the preset itself.
    model = Model.preset(MODELS[r["model_path"]] + ("-fp8" if r["precision"] == "fp8" else ""))
    experts_apart = r["moe_ep_size"] not in ("", "1") or r["moe_tp_size"] not in ("", r["tp_size"])
    if model.experts > 1 and experts_apart:
        return "experts apart", None
    if not measured.moe_measured(model, GPU.preset(SYSTEMS[r["system"]]), int(r["tp_size"])):
        return "experts not timed", None
    provenance = _provenance(r)
    clients = provenance.get("silicon_concurrency", "")
    if not clients.isdigit():
        return "no clients", None
    source_file = provenance.get("source_file", "").rsplit("/", 1)[-1]
    from_database = "workflow_run_id" in provenance  # InferenceMAX's db-dump rows
    benchmark = INFERENCEMAX if from_database else SOURCE_BENCHMARKS.get(source_file, AIPERF)
    if benchmark == INFERENCEMAX and int(clients) > INFERENCEMAX_MAX_CLIENTS:
        return "beyond the sweep", None
    fields = ("system", "tp_size", "isl", "osl", "silicon_ttft_ms", "silicon_tpot_ms")
    measurement = (model.name, clients, *(r[f] for f in fields))
    if measurement in seen:
        return "published twice", None
    seen.add(measurement)
    point = Point(
        id=r["id"],
        model=model.name,
        gpu=SYSTEMS[r["system"]],
        tp=int(r["tp_size"]),
        version=r["backend_version"] or "unknown",
        isl=int(r["isl"]),
        osl=int(r["osl"]),
        concurrency=int(clients),
        ttft=float(r["silicon_ttft_ms"]) / 1e3,
        tpot=float(r["silicon_tpot_ms"]) / 1e3,
        benchmark=benchmark,
    )
    return "", point


def rows(path: Optional[str] = None) -> list[Point]:
    """The silicon rows osbench can replay: vLLM, aggregated (one server), no pipeline or
    attention data parallelism (the experts sharded as the attention is), a model with a preset,
    a GPU with measured tables, and the clients' concurrency recorded (``silicon_concurrency``),
    within InferenceMAX's sweep for its points (:data:`INFERENCEMAX_MAX_CLIENTS`); a measurement
    published in two source files once (25 gpt-oss rows, 15 MiniMax-M2.5 ones). :func:`survey`
    counts the others by reason.

    Nor is a row of an MoE whose expert layer the GPU's MoE table does not time at the row's
    tensor-parallel size (:func:`osbench.serve.measured.moe_measured`: MiniMax-M2.5's block-FP8
    experts are timed at moe_tp 1, 2 and 4, so its 30 rows on 8 H200s are left out).

    A row without the clients is not replayed: its ``batch_size`` is AIConfigurator's batch per worker
    (its generator benchmarks ``workers x batch_size`` clients and more, ``estimated_concurrency``
    in ``generator/rule_plugin/vllm.rule``), not the clients one server saw. The three dense
    rows of that kind (Qwen3-32B FP8 under Dynamo, 4,000 + 1,000 tokens) confirm it: at tp 1 and
    2 their measured TPOT (16.9 and 11.6 ms) is less than the kernels of one decode step of
    ``batch_size`` requests take in the measured tables, even with an FP8 KV cache (21.6 and
    15.3 ms)."""
    return survey(path).points


@dataclass(frozen=True)
class InferenceMaxServer:
    """How InferenceMAX's script of one model launched vLLM: the flags its replay needs, each
    from the script (or, where the rows are all there is, from what they show); every other flag
    is the sweep's (:data:`INFERENCEMAX_BATCHED_TOKENS`, as many sequences as clients) or
    vLLM's default."""

    scripts: str
    """The benchmark scripts, in ``benchmarks/`` of InferenceMAX's repository."""
    kv_cache: dict[str, str]
    """GPU preset -> the KV cache's dtype (``--kv-cache-dtype``; vLLM's ``auto`` is the model's bf16)."""
    gpu_memory_utilization: float = GPU_MEMORY_UTILIZATION
    """``--gpu-memory-utilization``."""
    cuda_graph_tokens: Optional[int] = None
    """``max-cudagraph-capture-size`` (None: vLLM's default,
    :data:`osbench.serve.measured.CUDA_GRAPH_MAX_TOKENS`)."""
    mxfp4_moe: dict[str, str] = field(default_factory=dict)
    """vLLM release -> the kernel of MXFP4 experts where the script chooses it (else the tables'
    Triton kernel)."""


INFERENCEMAX_SERVERS = {
    "llama-3.1-70b-fp8": InferenceMaxServer(
        scripts="70b_fp8_h100_docker.sh, 70b_fp8_h200_slurm.sh", kv_cache={"h100-sxm": "bf16", "h200": "fp8"}
    ),
    "gpt-oss-120b": InferenceMaxServer(
        scripts="gptoss_fp4_h100.sh, gptoss_fp4_h200.sh",
        kv_cache={"h100-sxm": "bf16", "h200": "bf16"},
        cuda_graph_tokens=2048,
        mxfp4_moe={"0.18.0": "marlin"},
    ),
    "minimax-m2.5": InferenceMaxServer(
        scripts="single_node/minimaxm2.5_fp8_h200.sh", kv_cache={"h200": "bf16"}, gpu_memory_utilization=0.95
    ),
}
"""InferenceMAX's servers, by model (:func:`model_for`, :func:`config_for`, :func:`step_time_for`).

- Llama-3.1-70B FP8: the rows do not record the KV cache's dtype; the points' own queueing does,
  because the pool's size decides when clients wait and the FP8 pool holds twice the BF16 one's
  tokens. H200, FP8: on one H200, 32 clients of 1,024 + 8,192 tokens (up to 295k tokens in
  flight) were served without the queueing a BF16 pool (186k tokens) forces, which an FP8 one
  (372k) avoids, and 64 clients queue (measured TTFT 5.3 s); ``70b_fp8_h200_slurm.sh`` passes
  ``kv-cache-dtype: fp8``. H100, BF16: on two H100s the measured runs queue as only the BF16
  pool (235k tokens) makes them: 64 clients of 1,024 + 8,192 tokens, TTFT 30.8 s measured,
  29.8 s replayed with BF16 and 0.37 s with FP8; 8,192 + 1,024 tokens, 59.2 s against 55.2 s
  and 7.3 s at 64 clients, 6.5 s against 5.1 s and 1.6 s at 32. ``70b_fp8_h100_docker.sh``
  passed no ``--kv-cache-dtype`` (vLLM's ``auto``: the model's bf16) until 2025-09-23 and
  ``kv-cache-dtype: fp8`` after; these rows show the first.
- gpt-oss-120b: no ``--kv-cache-dtype``; ``max-cudagraph-capture-size: 2048``
  (``cuda-graph-sizes: 2048`` before vLLM 0.11); the scripts of the vLLM 0.18.0 image export
  ``VLLM_MXFP4_USE_MARLIN=1``, the earlier ones (the "unknown" release, 2025) did not, and
  vLLM's default there is not recorded, so they keep the tables' Triton kernel.
- MiniMax-M2.5: ``--gpu-memory-utilization 0.95``, no ``--kv-cache-dtype``, vLLM's defaults
  otherwise (the 0.16.0 image of 2026-03-01)."""


def server_of(p: Point) -> InferenceMaxServer:
    """The server of an :data:`INFERENCEMAX` point (:data:`INFERENCEMAX_SERVERS`), refused by
    name where its model's script or its GPU's KV cache is not known."""
    server = INFERENCEMAX_SERVERS.get(p.model)
    if server is None or p.gpu not in server.kv_cache:
        where = ", ".join(f"{model} on {', '.join(s.kv_cache)}" for model, s in INFERENCEMAX_SERVERS.items())
        raise ArgumentError(
            f"gpu={p.gpu!r} is not accepted for an InferenceMAX point of {p.model}: its server is known for {where}"
        )
    return server


def model_for(p: Point) -> Model:
    """The model a point's server ran: its preset, with the KV cache of its server
    (:func:`server_of`) for the :data:`INFERENCEMAX` points."""
    m = Model.preset(p.model)
    if p.benchmark != INFERENCEMAX:
        return m
    return replace(m, kv_dtype=server_of(p).kv_cache[p.gpu])


def config_for(p: Point, prefix_caching: bool = False) -> EngineConfig:
    """The engine the measured server ran, with the flags its benchmark gave: for the
    :data:`INFERENCEMAX` points, :data:`INFERENCEMAX_BATCHED_TOKENS`, as many sequences as
    clients and no prefix cache; for the AIPerf points, as many sequences as clients and ``clients
    + ISL +`` :data:`GENERATOR_EXTRA_TOKENS` tokens a step; the KV pool its memory leaves at
    :data:`GPU_MEMORY_UTILIZATION` (or the InferenceMAX server's share) for :func:`model_for`'s KV cache. ``prefix_caching``: vLLM's
    prefix cache (on by default in vLLM, ``CacheConfig.enable_prefix_caching``), which only
    matters where the clients repeat a prompt (:data:`DATASET_PROMPTS`); off, every prompt is
    computed."""
    m, g = model_for(p), GPU.preset(p.gpu)
    memory = GPU_MEMORY_UTILIZATION
    if p.benchmark == INFERENCEMAX:
        batched_tokens, seqs, prefix_caching = INFERENCEMAX_BATCHED_TOKENS, p.concurrency, False
        memory = server_of(p).gpu_memory_utilization
    else:
        batched_tokens, seqs = p.concurrency + p.isl + GENERATOR_EXTRA_TOKENS, p.concurrency
    blocks = num_blocks(m, g, tp=p.tp, gpu_memory_utilization=memory)
    return EngineConfig(
        num_blocks=blocks,
        max_num_batched_tokens=batched_tokens,
        max_num_seqs=seqs,
        max_model_len=m.max_model_len,
        enable_prefix_caching=prefix_caching,
    )


def aiperf_loop(
    config: EngineConfig,
    step_time: Callable[[Any], float],
    isl: int,
    osl: int,
    concurrency: int,
    engine: str = "native",
    clients: AIPerfClients = AIPERF_CLIENTS,
    prompts: Optional[int] = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Serve AIPerf's profiling phase (:class:`AIPerfClients`): ``clients.rounds * concurrency``
    requests of ``isl`` prompt and ``osl`` output tokens, ``concurrency`` of them in flight, the
    first ``concurrency`` sent together on an idle server and each next one ``clients.turnaround``
    seconds after one finishes, on vLLM 0.33.0's scheduler on the ``engine``, native or reference,
    equal to the last bit. Returns every request's TTFT and TPOT (:func:`_latencies`).

    ``prompts``: the distinct prompts the requests draw from, each once in a shuffled order
    (seeded by :data:`PROMPT_SEED`), then reshuffled, warm-up requests first, as the benchmark's
    dataset does (:data:`DATASET_PROMPTS`); two prompts share no block, and a repeated prompt
    hits the prefix cache where ``config`` enables it and its blocks are still cached. Then the
    ``clients.warmup * concurrency`` warm-up requests are served first, ``concurrency`` in
    flight, and the profiling phase starts ``clients.turnaround`` after the last of them finished
    (AIPerf drains a phase before the next: ``Clients(..., warmup=...)``). ``None`` (the
    default): every prompt distinct, and the warm-up, which leaves nothing the profiling phase
    could reuse, is not served."""
    concurrency = _checks.positive_int("concurrency", concurrency)
    if not isinstance(clients, AIPerfClients):
        raise ArgumentTypeError(f"clients={type(clients).__name__} is not accepted: it must be validate.AIPerfClients")
    if prompts is not None:
        prompts = _checks.positive_int("prompts", prompts)
    warm = clients.warmup * concurrency if prompts is not None else 0
    n = warm + clients.rounds * concurrency
    sent = Clients(concurrency, clients.turnaround, warmup=warm)
    outputs = np.full(n, osl)
    requests = Requests(np.zeros(n), np.full(n, isl), outputs, **_prompt_blocks(n, isl, prompts, config.block_size))
    return _latencies(_serve(requests, config, step_time, sent, engine), outputs, first=warm)


def _serve(requests: Requests, config: EngineConfig, step_time: Any, clients: Clients, engine: str) -> EngineRun:
    """``requests`` served by ``clients`` on the ``engine`` (native or reference)."""
    run = native.run if _checks.engine(engine) == "native" else reference.run
    return run(requests, config, step_time, concurrency=clients)


def _latencies(run: EngineRun, outputs: np.ndarray, first: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The measured requests' latencies, as the benchmarks compute them, seconds, in the order the
    requests were sent (those from ``first`` on): every one's TTFT, counted from when it was sent,
    and the TPOT, ``(last token - first token) / (output tokens - 1)``, of those with more than
    one output token (vLLM's ``benchmark_serving`` and AIPerf's inter-token latency alike)."""
    ttft = run.first_token[first:] - run.arrival[first:]
    several = outputs[first:] > 1
    tpot = (run.finish[first:] - run.first_token[first:])[several] / (outputs[first:][several] - 1)
    return ttft, tpot


def _prompt_blocks(n: int, isl: int, prompts: Optional[int], block_size: int) -> dict[str, Any]:
    """``Requests`` content for ``n`` requests drawn from ``prompts`` distinct prompts of ``isl``
    tokens (:func:`aiperf_loop`): prompt ``j``'s blocks are ids ``j * per + 1 ..``, one per
    ``block_size`` tokens; nothing (no content) when ``prompts`` is None."""
    if prompts is None:
        return {}
    rng = np.random.default_rng(PROMPT_SEED)
    order = np.concatenate([rng.permutation(prompts) for _ in range(-(-n // prompts))])[:n]
    per = -(-isl // block_size)
    ids = (order[:, None] * per + np.arange(1, per + 1)[None, :]).ravel()
    return {"blocks": ids, "block_offsets": np.arange(n + 1, dtype=np.int64) * per, "source_block": block_size}


def burst_loop(
    config: EngineConfig,
    step_time: Callable[[Any], float],
    isl: int,
    osl: int,
    concurrency: int,
    engine: str = "native",
    clients: BurstClients = INFERENCEMAX_CLIENTS,
) -> tuple[np.ndarray, np.ndarray]:
    """Serve ``clients.prompts_per_client * concurrency`` requests as vLLM's
    ``benchmark_serving.py`` sends them with ``--request-rate inf --max-concurrency`` and random
    lengths (:class:`BurstClients`): every request created at once, ``concurrency`` of them in
    flight (the next one sent ``clients.turnaround`` seconds after one finishes, in order), each
    with its input and output lengths drawn uniformly from ``int(L * range_ratio) .. L`` (at
    least 1), ``ignore_eos``. Every request is measured, the first ``concurrency`` ones starting
    together on an idle server. Returns every request's TTFT and TPOT (:func:`_latencies`). The
    benchmark's single test request before the run finishes before it starts and is left out."""
    concurrency = _checks.positive_int("concurrency", concurrency)
    if not isinstance(clients, BurstClients):
        raise ArgumentTypeError(f"clients={type(clients).__name__} is not accepted: it must be validate.BurstClients")
    n = clients.prompts_per_client * concurrency
    rng = np.random.default_rng(clients.seed)
    inputs = rng.integers(max(1, int(isl * clients.range_ratio)), isl + 1, size=n)
    outputs = rng.integers(max(1, int(osl * clients.range_ratio)), osl + 1, size=n)
    sent = Clients(concurrency, clients.turnaround)
    run = _serve(Requests(np.zeros(n), inputs, outputs), config, step_time, sent, engine)
    return _latencies(run, outputs)


@dataclass(frozen=True)
class Prediction:
    """One point predicted by one step-time model."""

    point: Point
    step_time: str
    ttft: float
    tpot: float

    @property
    def ttft_error(self) -> float:
        """Relative error of the predicted TTFT: ``(predicted - measured) / measured``."""
        return (self.ttft - self.point.ttft) / self.point.ttft

    @property
    def tpot_error(self) -> float:
        return (self.tpot - self.point.tpot) / self.point.tpot

    def to_dict(self) -> dict[str, Any]:
        return {
            **asdict(self.point),
            "step_time": self.step_time,
            "predicted_ttft": self.ttft,
            "predicted_tpot": self.tpot,
        }


@dataclass(frozen=True)
class HostCost:
    """The host work of a step that the kernel tables leave out, as
    :meth:`StepTime.measured <osbench.serve.steptime.StepTime.measured>` takes it."""

    step: float
    """Seconds per step (``host_step``)."""
    request: float
    """Seconds per scheduled request and step (``host_request``)."""


STEP_TIMES = ("roofline", "measured", "fitted")
"""The step-time models validated, in the order the tables show them: the roofline with its
assumed utilisations, the measured kernels with BLIS's published host overhead, and the measured
kernels with the host overhead fitted on :data:`FIT_SPLIT` (:func:`fit_host`)."""


def step_time_for(p: Point, kind: str, host: Optional[HostCost] = None) -> StepTime:
    """The step-time model ``kind`` for a point's model, GPU and tp (``"fitted"``: with
    ``host``, the fitted host work)."""
    m = model_for(p)
    if kind == "roofline":
        return StepTime.roofline(m, p.gpu, tp=p.tp)
    server: dict[str, Any] = {}
    if p.benchmark == INFERENCEMAX:
        flags = server_of(p)
        server["cuda_graph_tokens"] = flags.cuda_graph_tokens
        server["mxfp4_moe"] = flags.mxfp4_moe.get(p.version, "triton")
    if kind == "fitted":
        if host is None:
            raise ArgumentError("host=None is not accepted for the fitted model: fit it first (fit_host)")
        return StepTime.measured(m, p.gpu, tp=p.tp, host_step=host.step, host_request=host.request, **server)
    return StepTime.measured(m, p.gpu, tp=p.tp, **server)


def predict(
    p: Point,
    kind: str,
    clients: AIPerfClients = AIPERF_CLIENTS,
    step_time: Optional[StepTime] = None,
    engine: str = "native",
    prompts: Optional[int] = None,
) -> Prediction:
    """Replay one measured point with the step-time model ``kind`` (or ``step_time``) on the
    ``engine``, its clients sending what its benchmark sent: :func:`burst_loop` for the
    :data:`INFERENCEMAX` points, else :func:`aiperf_loop` with ``clients``, from a pool of
    :data:`DATASET_PROMPTS` prompts with vLLM's prefix cache on for the :data:`AIPERF_POOL`
    points and every prompt distinct for the others. ``prompts``: replay the AIPerf points from a
    pool of that many prompts instead."""
    model = step_time if step_time is not None else step_time_for(p, kind)
    if p.benchmark == INFERENCEMAX:
        ttft, tpot = burst_loop(config_for(p), model, p.isl, p.osl, p.concurrency, engine=engine)
    else:
        pool = prompts if prompts is not None else (DATASET_PROMPTS if p.benchmark == AIPERF_POOL else None)
        config = config_for(p, prefix_caching=pool is not None)
        ttft, tpot = aiperf_loop(config, model, p.isl, p.osl, p.concurrency, engine, clients, prompts=pool)
    return Prediction(p, kind, float(np.mean(ttft)), float(np.mean(tpot)))


def replay(
    points: Iterable[Point],
    kinds: Sequence[str] = STEP_TIMES,
    host: Optional[HostCost] = None,
    clients: AIPerfClients = AIPERF_CLIENTS,
    prompts: Optional[int] = None,
) -> Iterator[Prediction]:
    """:func:`predict` of every point with every step-time model of ``kinds``, point by point in
    the order of ``kinds``; each step-time model is built once per model, GPU, tp and server
    (``host``: the fitted model's, from :func:`fit_host`; ``clients``: the AIPerf points')."""
    cache: dict[tuple[Any, ...], StepTime] = {}
    for p in points:
        for kind in kinds:
            key = (model_for(p), p.gpu, p.tp, p.benchmark, p.version, kind)
            if key not in cache:
                cache[key] = step_time_for(p, kind, host)
            yield predict(p, kind, clients, step_time=cache[key], prompts=prompts)


FIT_SPLIT = ("qwen3-32b", "h100-sxm", 4)
"""The points the host overhead is fitted on (:func:`fit_host`): Qwen3-32B (bf16) on 4 H100s,
30 points of every ISL, OSL and concurrency measured. Every other point is validated on, by every
step-time model (:func:`summary`)."""

PROBE_STEP, PROBE_REQUEST = 1e-3, 10e-6
"""The host work added, seconds per step and per scheduled request, to find how a point's TPOT
moves with each (:func:`fit_host`)."""


def in_fit_split(p: Point) -> bool:
    """Whether a point is one :func:`fit_host` fits on (:data:`FIT_SPLIT`)."""
    return (p.model, p.gpu, p.tp) == FIT_SPLIT


def fit_host(points: list[Point], clients: AIPerfClients = AIPERF_CLIENTS) -> HostCost:
    """The host work per step and per scheduled request (seconds, both >= 0) that makes the
    measured step time's TPOT closest to the measured TPOT of ``points``, in relative terms:
    non-negative least squares in two unknowns
    (:func:`~osbench.serve.steptime.nonnegative_least_squares`). Each point is replayed without
    host work and with :data:`PROBE_STEP` or :data:`PROBE_REQUEST` alone, the TPOT being linear
    in them between (``clients``: the AIPerf points'). The kernel tables time the GPU alone; what vLLM's host loop adds per step
    (scheduling, broadcasting to the tensor-parallel workers, launching) and per request in it
    (input preparation, output processing, the scheduler's bookkeeping), not overlapped in the
    releases measured, are these two numbers, BLIS's per-step and per-request terms (its
    per-layer one is part of the first: the layers are fixed for one model)."""
    probes = ((0.0, 0.0), (PROBE_STEP, 0.0), (0.0, PROBE_REQUEST))
    models: dict[tuple[Any, ...], list[StepTime]] = {}  # the three models of each model, GPU and tp, built once
    rows, targets = [], []
    for p in points:
        key = (model_for(p), p.gpu, p.tp)
        if key not in models:
            models[key] = [StepTime.measured(*key, host_step=step, host_request=request) for step, request in probes]
        zero, with_step, with_request = (predict(p, "measured", clients, model).tpot for model in models[key])
        rows.append([(with_step - zero) / PROBE_STEP / p.tpot, (with_request - zero) / PROBE_REQUEST / p.tpot])
        targets.append((p.tpot - zero) / p.tpot)
    if not rows:
        raise ArgumentError("points=[] is not accepted: fit_host needs at least one measured point")
    step, request = nonnegative_least_squares(np.asarray(rows), np.asarray(targets), "fit_host")
    return HostCost(float(step), float(request))


def gemm_bound(p: Point) -> float:
    """A lower bound of the share of time the GPUs of a measured point were busy, from its own
    figures: its clients complete ``concurrency / (TTFT + (OSL - 1) TPOT)`` requests per second
    (each client one request at a time), and every token of a request, prompt or output, passes
    at least through the linear layers, whose cheapest cost per token in the GPU's measured
    tables is that of their best-batched step (``min over T of tokens[T] / T`` of the measured
    model: the GEMMs, all-reduces and elementwise kernels that depend on the token count alone;
    attention, the LM head and the host left out). Above 1, the point's throughput is more than
    the kernels can compute: its prompts were not all computed (a prefix cache hit, prompts
    shorter than stated), and no step-time model that computes them can match it."""
    tables = StepTime.measured(model_for(p), p.gpu, p.tp).tables
    assert tables is not None
    per_token = float(np.min(tables.tokens[1:] / np.arange(1, len(tables.tokens))))
    rate = p.concurrency / (p.ttft + (p.osl - 1) * p.tpot)
    return rate * (p.isl + p.osl) * per_token


def mape(errors: list[float]) -> float:
    """Mean absolute percentage error of relative errors, in percent."""
    return 100.0 * float(np.mean(np.abs(errors))) if errors else math.nan


def summary(predictions: list[Prediction]) -> list[dict[str, Any]]:
    """MAPE of TTFT and TPOT by (step time, GPU, model, version, benchmark, kind), plus "all"
    rows per step time and model kind, over every benchmark and over each: the validation table.
    The points of the fit split are left out of it for every step-time model: the fitted one is
    fitted on them, the measured one's host terms were chosen on them
    (:data:`osbench.serve.measured.HOST_PER_LAYER`), and the three models are compared on the
    same points."""
    groups: dict[tuple[str, ...], list[Prediction]] = {}
    for q in predictions:
        if in_fit_split(q.point):
            continue  # fitted or chosen on: never reported
        p, kind = q.point, "moe" if q.point.moe else "dense"
        for key in (
            (q.step_time, p.gpu, p.model, p.version, p.benchmark, kind),
            (q.step_time, "all", "all", "all", p.benchmark, kind),
            (q.step_time, "all", "all", "all", "all", kind),
        ):
            groups.setdefault(key, []).append(q)
    return [
        {
            "step_time": k[0],
            "gpu": k[1],
            "model": k[2],
            "version": k[3],
            "benchmark": k[4],
            "kind": k[5],
            "points": len(g),
            "ttft_mape": mape([q.ttft_error for q in g]),
            "tpot_mape": mape([q.tpot_error for q in g]),
        }
        for k, g in sorted(groups.items())
    ]


__all__ = [
    "AIPERF",
    "AIPERF_CLIENTS",
    "AIPERF_POOL",
    "BENCHMARKS",
    "CLIENT_TURNAROUND",
    "DATASET_PROMPTS",
    "FIT_SPLIT",
    "GENERATOR_EXTRA_TOKENS",
    "GPU_MEMORY_UTILIZATION",
    "INFERENCEMAX",
    "INFERENCEMAX_BATCHED_TOKENS",
    "INFERENCEMAX_CLIENTS",
    "INFERENCEMAX_MAX_CLIENTS",
    "INFERENCEMAX_SERVERS",
    "LEFT_OUT",
    "MODELS",
    "PROBE_REQUEST",
    "PROBE_STEP",
    "PROMPT_SEED",
    "SILICON",
    "SOURCE_BENCHMARKS",
    "STEP_TIMES",
    "SYSTEMS",
    "AIPerfClients",
    "BurstClients",
    "HostCost",
    "InferenceMaxServer",
    "Point",
    "Prediction",
    "Survey",
    "aiperf_loop",
    "burst_loop",
    "config_for",
    "fit_host",
    "gemm_bound",
    "in_fit_split",
    "mape",
    "model_for",
    "predict",
    "replay",
    "rows",
    "server_of",
    "step_time_for",
    "summary",
    "survey",
]
