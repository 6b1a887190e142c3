"""The native engine: the reference's algorithm in Rust (``osbench._native.serve_simulate``, and
``serve_simulate_cluster`` for replicas behind a router, ``serve_simulate_disaggregated`` for a
prefill pool and a decode pool).

Same arguments and the same :class:`~osbench.serve.run.EngineRun` as
:func:`osbench.serve.reference.run`, held to it step for step (tests/serve/test_native.py),
with one difference: the step time must be a :class:`~osbench.serve.StepTime` (linear,
roofline, corrected or measured), whose arithmetic the engine repeats bit for bit; an arbitrary callable runs on the
reference engine only.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from osbench import _native
from osbench.errors import ArgumentTypeError
from osbench.serve.config import EngineConfig
from osbench.serve.engines import ENGINES
from osbench.serve.links import Link
from osbench.serve.pools import DisaggRun, one_token
from osbench.serve.replicas import ClusterRun
from osbench.serve.requests import Requests
from osbench.serve.routers import ROUTERS, PrefixAware, Random, Router
from osbench.serve.run import Concurrency, EngineRun, check_memory, client_options, engine_run
from osbench.serve.steptime import native_step_time
from osbench.serve.vllm.checks import check_requests
from osbench.serve.vllm.prediction import predicted_output_len

_SETTINGS = ENGINES["vllm"].config_fields
"""The configuration's fields the binding takes, as the core declares them."""


def run(
    requests: Requests,
    config: EngineConfig,
    step_time: Any,
    *,
    record: bool = False,
    jump: bool = True,
    concurrency: Optional[Concurrency] = None,
    steps: bool = True,
) -> EngineRun:
    """Serve ``requests`` with the engine ``config`` describes, each step taking
    ``step_time(batch)`` seconds; see :func:`osbench.serve.reference.run`.

    ``jump``: skip decode-only stretches in one jump when nothing but token counts can change
    (no arrival, admission, preemption, finish or block boundary); every step is still recorded,
    and the results are the same with ``jump=False``. ``steps=False``: keep no per-step rows
    (the run's ``steps`` come back empty), for a run that needs only its per-request times. The
    run releases the GIL and stops on Ctrl-C (``KeyboardInterrupt``)."""
    if not isinstance(steps, bool):
        raise ArgumentTypeError(f"steps={steps!r} is not accepted: it must be True or False")
    inputs = _inputs(requests, config, step_time, record, jump, concurrency)
    inputs["options"]["steps"] = steps
    columns, detail, _ = _native.serve_simulate(**inputs)
    return engine_run(columns, detail)


def _inputs(
    requests: Requests, config: EngineConfig, step_time: Any, record: Any, jump: Any, concurrency: Any
) -> dict[str, Any]:
    """What every native entry point checks and takes, by the binding's keywords: the requests'
    arrays (``requests``), the engine's settings and step time (``engine``), and the run's
    ``options``."""
    priority = check_requests(requests, config)
    clients = client_options(concurrency)
    timing = native_step_time(step_time)
    for name, value in (("record", record), ("jump", jump)):
        if not isinstance(value, bool):
            raise ArgumentTypeError(f"{name}={value!r} is not accepted: it must be True or False")
    check_memory(requests, config.max_num_seqs, config.block_size, record)
    keys = offsets = None
    # Prompts without content go keyless: the engine caches their blocks without hashing them.
    if config.enable_prefix_caching and requests.block_ids is not None:
        keys, offsets = requests.prompt_block_keys(config.block_size)
    arrays = {
        "arrival": requests.arrival,
        "prompt_len": requests.prompt_len,
        "output_len": requests.output_len,
        "priority": priority,
        "keys": keys,
        "key_offsets": offsets,
        "predicted": predicted_output_len(requests, config),
    }
    engine = {"settings": {name: getattr(config, name) for name in _SETTINGS}, **timing}
    return {
        "requests": arrays,
        "engine": engine,
        "options": {"record": record, "jump": jump, **clients},
    }


def run_cluster(
    requests: Requests,
    config: EngineConfig,
    step_time: Any,
    replicas: int,
    router: Router,
    *,
    record: bool = False,
    jump: bool = True,
    concurrency: Optional[Concurrency] = None,
) -> ClusterRun:
    """Serve ``requests`` on ``replicas`` engines behind ``router`` in Rust
    (``_native.serve_simulate_cluster``), equal to :func:`osbench.serve.replicas.drive_replicas`
    over the reference engines; ``router`` one of :data:`osbench.serve.routers.ROUTERS`' own
    classes (a user's rule runs with the reference loop)."""
    inputs = _inputs(requests, config, step_time, record, jump, concurrency)
    router_args = _router(router, requests, config.block_size, "router")
    replica, load, runs = _native.serve_simulate_cluster(**inputs, replicas=replicas, router=router_args)
    return ClusterRun(replica, load.reshape(len(requests), replicas), tuple(engine_run(c, d) for c, d, _ in runs))


def _router(router: Router, requests: Requests, block_size: int, argument: str) -> dict[str, Any]:
    """A router of :data:`ROUTERS` as the binding takes it: its name and every parameter
    (``prefix-aware``'s with the prompts' block keys at its granularity, ``block_size`` by
    default; :data:`ROUTER_DEFAULTS` for those it does not read); ``argument``: its name, for the
    error."""
    name = next((n for n, cls in ROUTERS.items() if type(router) is cls), None)
    if name is None:
        raise ArgumentTypeError(
            f"{argument}={router!r} is not accepted by engine='native': it runs the routers of "
            f"osbench.serve.routers.ROUTERS ({', '.join(ROUTERS)}); a rule of your own runs with engine='reference'"
        )
    args: dict[str, Any] = {"name": name, **ROUTER_DEFAULTS}
    if isinstance(router, Random):
        args["seed"] = router.seed
    if isinstance(router, PrefixAware):
        granularity = block_size if router.block_size is None else router.block_size
        keys, offsets = requests.prompt_block_keys(granularity)
        args.update(
            cache_threshold=router.cache_threshold,
            balance_abs_threshold=router.balance_abs_threshold,
            balance_rel_threshold=router.balance_rel_threshold,
            block_size=granularity,
            keys=keys,
            key_offsets=offsets,
        )
    return args


ROUTER_DEFAULTS = {
    "seed": 0,
    "cache_threshold": 0.3,
    "balance_abs_threshold": 64,
    "balance_rel_threshold": 1.5,
    "block_size": 16,
}
"""The router parameters the binding takes for a router that does not read them (it ignores
them)."""


def disaggregated_call(
    requests: Requests,
    configs: tuple[EngineConfig, EngineConfig],
    step_times: tuple[Any, Any],
    sizes: tuple[int, int],
    routers: tuple[Router, Router],
    link: Link,
    kv_bytes: np.ndarray,
    *,
    record: bool = False,
    jump: bool = True,
    concurrency: Optional[Concurrency] = None,
    layers: int = 0,
) -> Any:
    """Serve ``requests`` on a prefill pool and a decode pool (``configs``, ``step_times``,
    ``sizes`` and ``routers``: the prefill pool's, then the decode pool's) joined by ``link``,
    request ``i``'s KV taking ``kv_bytes[i]`` bytes per GPU (after its prefill, or layer by layer
    over ``layers``), in Rust: the binding's answer as it gives it, each run's jumped steps
    included (tests show the jump is taken); :func:`disagg_run` makes it the
    :class:`~osbench.serve.pools.DisaggRun` that
    :func:`osbench.serve.pools.drive_disaggregated` gives over the reference engines."""
    inputs = _inputs(requests, configs[1], step_times[1], record, jump, concurrency)
    prefill = _inputs(one_token(requests), configs[0], step_times[0], record, jump, concurrency)
    decode_engine = inputs.pop("engine")
    return _native.serve_simulate_disaggregated(
        **inputs,
        prefill_engine=prefill["engine"],
        decode_engine=decode_engine,
        prefill=sizes[0],
        decode=sizes[1],
        router=_router(routers[0], requests, configs[0].block_size, "router"),
        decode_router=_router(routers[1], requests, configs[1].block_size, "decode_router"),
        link=(float(link.bandwidth), float(link.latency), layers),
        kv_bytes=np.ascontiguousarray(kv_bytes, dtype=np.int64),
        prefill_predicted=prefill["requests"]["predicted"],
    )


def disagg_run(out: Any) -> DisaggRun:
    """What :func:`disaggregated_call` returns, as a :class:`~osbench.serve.pools.DisaggRun`."""
    pre_replica, dec_replica, start, arrival, pre_runs, dec_runs, order = out
    return DisaggRun(
        pre_replica,
        dec_replica,
        start,
        arrival,
        tuple(engine_run(c, d) for c, d, _ in pre_runs),
        tuple(engine_run(c, d) for c, d, _ in dec_runs),
        tuple(order),
    )
