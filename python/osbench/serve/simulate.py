"""``simulate``: serve requests on a model and GPU, with either engine, and get a
:class:`~osbench.serve.ServeResult`."""

from __future__ import annotations

import dataclasses
from types import ModuleType
from typing import Any, Optional, Union

import numpy as np

from osbench import _checks
from osbench.errors import ArgumentError, ArgumentTypeError
from osbench.serve.config import EngineConfig, server_batch_defaults
from osbench.serve.engines import semantics as semantics_of
from osbench.serve.models import GPU, Model
from osbench.serve.models import num_blocks as pool_blocks
from osbench.serve.requests import Requests
from osbench.serve.result import ServeResult
from osbench.serve.run import batch_of, check_clock_moves
from osbench.serve.steptime import StepTime


def simulate(
    requests: Requests,
    *,
    engine: str = "native",
    semantics: str = "vllm",
    model: Union[str, Model, None] = None,
    gpu: Union[str, GPU, None] = None,
    tp: Optional[int] = None,
    step_time: Any = None,
    num_blocks: Optional[int] = None,
    record: bool = False,
    concurrency: Optional[int] = None,
    **config: Any,
) -> ServeResult:
    """Serve ``requests`` as vLLM 0.33.0 would (continuous batching, paged KV cache, prefix
    caching; see :mod:`osbench.serve.reference`) and return the :class:`ServeResult`.

    - ``model``, ``gpu``, ``tp``: presets by name (``MODELS``, ``GPUS``) or objects; ``tp``
      None is the model's own degree. They give the defaults below.
    - ``step_time``: a :class:`StepTime`; by default the roofline of ``model`` on ``gpu``
      (:meth:`StepTime.roofline`). ``engine="reference"`` also takes any callable
      ``step_time(batch) -> seconds``.
    - ``num_blocks``: the KV pool, vLLM's null block included; by default what ``model``
      leaves on ``gpu`` (:func:`osbench.serve.num_blocks`).
    - ``**config``: the other :class:`EngineConfig` fields (``block_size``,
      ``max_num_batched_tokens``, ``max_num_seqs``, ``enable_chunked_prefill``, ``policy``...),
      with ``EngineConfig``'s defaults, except that, as vLLM does, ``max_model_len`` defaults
      to the model's and the step's token and sequence budgets to the GPU's tier
      (:func:`osbench.serve.config.server_batch_defaults`) when they are named.
    - ``engine``: ``"native"`` (Rust, the default) or ``"reference"`` (readable Python); the
      two give equal results.
    - ``semantics``: the engine whose scheduling is reproduced, by name (``ENGINES``; today
      ``"vllm"``, vLLM 0.33.0).
    - ``record``: keep every step's detail in ``result.record``.
    - ``concurrency``: closed-loop clients, as ``benchmark_serving --max-concurrency`` sends
      requests: at most that many in flight, request ``i`` sent at its arrival or when one
      finishes and leaves room, whichever is later; its TTFT counts from when it was sent.
      None (the default): each request is sent at its arrival.

    >>> import osbench as ob
    >>> reqs = ob.serve.Requests.poisson(50, rate=5.0, seed=1)
    >>> r = ob.serve.simulate(reqs, model="llama-3-8b", gpu="h100")
    >>> r.summary().requests, bool(r.ttft.min() > 0)
    (50, True)
    """
    engine = _checks.engine(engine)
    module, cfg, step_time = configure(
        requests,
        "simulate",
        semantics=semantics,
        model=model,
        gpu=gpu,
        tp=tp,
        step_time=step_time,
        num_blocks=num_blocks,
        config=config,
    )
    run = module.run(requests, cfg, step_time, engine=engine, record=record, concurrency=concurrency)
    alone = service_alone(module, requests, cfg, step_time, engine) if isinstance(requests, Requests) else None
    if concurrency is not None:  # latencies count from when each request was sent
        requests = sent_at(requests, run.arrival)
    return ServeResult.from_run(run, requests, cfg, alone=alone)


def sent_at(requests: Requests, arrival: Any) -> Requests:
    """``requests`` with their arrivals replaced by when they were sent (``concurrency``)."""
    return Requests(
        arrival,
        requests.prompt_len,
        requests.output_len,
        blocks=requests.block_ids,
        block_offsets=requests.block_offsets,
        priority=requests.priority,
        predicted_output_len=requests.predicted_output_len,
        source_block=requests.source_block,
        name=requests.name,
    )


def configure(
    requests: Requests,
    caller: str,
    *,
    semantics: str,
    model: Union[str, Model, None],
    gpu: Union[str, GPU, None],
    tp: Optional[int],
    step_time: Any,
    num_blocks: Optional[int],
    config: dict[str, Any],
    takes: str = "engine, semantics, model, gpu, tp, step_time, num_blocks, record, concurrency",
) -> tuple[ModuleType, Any, Any]:
    """What :func:`simulate` (and every caller named ``caller`` that serves as it does) makes of
    its arguments: the semantics' module, its configuration and the step time, the defaults
    filled in as :func:`simulate` says. ``config``: the configuration fields given (filled
    in place); ``takes``: the caller's own arguments, for the error naming an unknown one."""
    row = semantics_of(semantics)
    fields = tuple(name for name in row.config_fields if name != "num_blocks")
    unknown = sorted(set(config) - set(fields))
    if unknown:
        raise ArgumentTypeError(
            f"{unknown[0]}={config[unknown[0]]!r} is not accepted: {caller} takes {takes} and the engine's configuration "
            f"fields {', '.join(fields)}"
        )
    module = row.module()
    m = None if model is None else Model.preset(model)
    g = None if gpu is None else GPU.preset(gpu)
    if tp is not None and m is None:
        raise ArgumentError(f"tp={tp!r} is not accepted without model: it is the model's tensor-parallel degree")
    if m is not None:
        config.setdefault("max_model_len", m.max_model_len)
    if g is not None and ("max_num_batched_tokens" not in config or "max_num_seqs" not in config):
        batched_tokens, seqs = server_batch_defaults(g.memory_bytes, g.name)
        config.setdefault("max_num_batched_tokens", batched_tokens)
        config.setdefault("max_num_seqs", seqs)
    if step_time is None or num_blocks is None:
        if m is None or g is None:
            raise ArgumentError(
                f"{'model' if m is None else 'gpu'}=None is not accepted without "
                f"{'step_time' if step_time is None else 'num_blocks'}: name a model and a GPU (presets: "
                "osbench.serve.MODELS, osbench.serve.GPUS), or give both step_time and num_blocks"
            )
        if step_time is None:
            step_time = StepTime.roofline(m, g, tp)
        if num_blocks is None:
            num_blocks = pool_blocks(m, g, tp=tp, block_size=config.get("block_size", EngineConfig.block_size))
    cfg = module.Config(num_blocks=num_blocks, **config)
    if isinstance(step_time, StepTime) and isinstance(requests, Requests):
        check_clock_moves(requests, step_time(batch_of([(1, 1, 1)])))
    return module, cfg, step_time


def service_alone(module: Any, requests: Requests, config: Any, step_time: Any, engine: str) -> Optional[np.ndarray]:
    """Each request's service time alone on the engine ``config`` describes: its E2E when it is
    the only request in the engine, with a cold prefix cache, under any policy (one request at
    a time, prefix caching off: the same engine run with one client). None when some request
    takes no time at all (a step time of 0), which leaves slowdown undefined. The native
    engine runs it whenever it can take the step time (it equals the reference)."""
    alone_config = dataclasses.replace(config, enable_prefix_caching=False, policy="fcfs")
    engine = "native" if isinstance(step_time, StepTime) else engine
    run = module.run(requests, alone_config, step_time, engine=engine, concurrency=1)
    seconds = np.asarray(run.finish - run.arrival)
    return seconds if len(seconds) == 0 or seconds.min() > 0 else None
