"""``simulate``: serve requests on a model and GPU, with either engine, and get a
:class:`~osbench.serve.ServeResult`."""

from __future__ import annotations

from collections.abc import Sequence
from types import ModuleType
from typing import Any, Optional, Union

import numpy as np

from osbench import _checks
from osbench.errors import ArgumentError, ArgumentTypeError
from osbench.serve.engines import semantics as semantics_of
from osbench.serve.models import GPU, Model
from osbench.serve.requests import Requests
from osbench.serve.result import ServeResult
from osbench.serve.run import Concurrency, EngineRun, check_clock_moves, check_concurrency, shortest_step
from osbench.serve.steptime import StepTime

STEP_TIME_NAMES = ("roofline", "measured")
"""The step-time models ``step_time`` takes by name, built for the run's model, GPU and tp."""


def simulate(
    requests: Requests,
    *,
    engine: Optional[str] = None,
    semantics: str = "vllm",
    model: Union[str, Model, None] = None,
    gpu: Union[str, GPU, None] = None,
    tp: Optional[int] = None,
    step_time: Any = None,
    num_blocks: Optional[int] = None,
    record: bool = False,
    concurrency: Optional[Concurrency] = None,
    **config: Any,
) -> ServeResult:
    """Serve ``requests`` as vLLM 0.33.0 would (continuous batching, paged KV cache, prefix
    caching; see :mod:`osbench.serve.reference`), or as the ``semantics`` named, and return the
    :class:`ServeResult`.

    - ``model``, ``gpu``, ``tp``: presets by name (``MODELS``, ``GPUS``) or objects; ``tp``
      None is the model's own degree. They give the defaults below.
    - ``step_time``: a :class:`StepTime`, or the name of one built for ``model`` on ``tp``
      of ``gpu`` (:data:`STEP_TIME_NAMES`: ``"roofline"``, :meth:`StepTime.roofline`;
      ``"measured"``, :meth:`StepTime.measured`, the GPU's kernel tables); by default the
      roofline. ``engine="reference"`` also takes any callable ``step_time(batch) -> seconds``.
    - ``num_blocks``: vLLM's KV pool, its null block included; by default what ``model``
      leaves on ``gpu`` (:func:`osbench.serve.num_blocks`).
    - ``**config``: the other fields of the semantics' configuration (vLLM's
      :class:`EngineConfig`: ``block_size``, ``max_num_batched_tokens``, ``max_num_seqs``,
      ``enable_chunked_prefill``, ``policy``...), with its defaults, except that, as vLLM
      does, ``max_model_len`` defaults to the model's and the step's token and sequence
      budgets to the GPU's tier (:func:`osbench.serve.config.server_batch_defaults`) when
      they are named.
    - ``engine``: ``"native"`` (Rust) or ``"reference"`` (readable Python), which give equal
      results; None (the default): the semantics' first engine in ``ENGINES`` (``"native"``
      for vLLM's and SGLang's). An engine the semantics has not is refused.
    - ``semantics``: the engine whose scheduling is reproduced, by name (``ENGINES``):
      ``"vllm"`` (vLLM 0.33.0, the default) or ``"sglang"`` (SGLang 0.5.23,
      :mod:`osbench.serve.sglang`, native or reference). SGLang's configuration
      is :class:`osbench.serve.sglang.EngineConfig`, by SGLang's option names
      (``schedule_policy``, ``page_size``, ``max_running_requests``...); its pool is
      ``max_total_tokens`` (``num_blocks`` is refused), by default what ``model`` leaves on
      ``gpu`` by SGLang's ``mem_fraction_static`` rule, ``chunked_prefill_size`` the GPU's
      tier and ``context_len`` the model's (:func:`osbench.serve.sglang.engines.configure`).
    - ``record``: keep every step's detail in ``result.record``.
    - ``concurrency``: closed-loop clients, as ``benchmark_serving --max-concurrency`` sends
      requests: at most that many in flight, request ``i`` sent at its arrival or when one
      finishes and leaves room, whichever is later; its TTFT counts from when it was sent.
      :class:`~osbench.serve.Clients` ``(N, turnaround)`` sends it ``turnaround`` seconds after
      the finish (the round trip through the client), and ``Clients(N, turnaround, warmup=K)``
      holds every request after the first ``K`` until all ``K`` have finished (a benchmark's
      drained warm-up phase). None (the default): each request is sent at its arrival.

    >>> import osbench as ob
    >>> reqs = ob.serve.Requests.poisson(50, rate=5.0, seed=1)
    >>> r = ob.serve.simulate(reqs, model="llama-3-8b", gpu="h100")
    >>> r.summary().requests, bool(r.ttft.min() > 0)
    (50, True)
    """
    engine = semantics_of(semantics).engine(engine)
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
        concurrency=concurrency,
    )
    run = module.run(requests, cfg, step_time, engine=engine, record=record, concurrency=concurrency)
    served = requests
    # The slowdown's second run, one request at a time, is paid only when a slowdown is asked for.
    alone = (lambda: service_alone(module, served, cfg, step_time, engine)) if isinstance(requests, Requests) else None
    if concurrency is not None:  # latencies count from when each request was sent
        requests = sent_at(requests, run.arrival)
    return ServeResult.from_run(run, requests, cfg, module.pool_blocks(cfg), alone=alone)


def sent_at(requests: Requests, arrival: Any) -> Requests:
    """``requests`` with their arrivals replaced by when they were sent (``concurrency``)."""
    return requests.arriving(arrival)


def sent_to(requests: Requests, replica: np.ndarray, runs: Sequence[EngineRun]) -> Requests:
    """``requests`` arriving when they were sent (:func:`sent_at`) to engines each serving the
    requests ``replica`` gives it (``runs``: engine ``k``'s, as it numbers its requests)."""
    arrival = np.zeros(len(requests))
    for k, own in enumerate(runs):
        arrival[replica == k] = own.arrival
    return sent_at(requests, arrival)


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
    concurrency: Optional[Concurrency] = None,
) -> tuple[ModuleType, Any, Any]:
    """What :func:`simulate` (and every caller named ``caller`` that serves as it does) makes of
    its arguments: the semantics' module, its configuration and the step time, the defaults
    filled in as :func:`simulate` says. ``config``: the configuration fields given (filled
    in place); ``takes``: the caller's own arguments, for the error naming an unknown one;
    ``concurrency``: the caller's clients, whose turnaround must keep the clock moving too."""
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
    if step_time is None or isinstance(step_time, str):
        name = "roofline" if step_time is None else _checks.choice("step_time", step_time, STEP_TIME_NAMES)
        if m is None or g is None:
            raise ArgumentError(
                f"{'model' if m is None else 'gpu'}=None is not accepted without a step_time object: name a model and "
                "a GPU (presets: osbench.serve.MODELS, osbench.serve.GPUS), or give a StepTime"
            )
        step_time = getattr(StepTime, name)(m, gpu if isinstance(gpu, str) else g, tp)  # errors name the caller's GPU
    cfg = module.configure(config, m, g, tp, num_blocks)  # the semantics' own defaults from the presets
    if isinstance(requests, Requests):
        check_clock_moves(requests, shortest_step(step_time), check_concurrency(concurrency))
    return module, cfg, step_time


def service_alone(module: Any, requests: Requests, config: Any, step_time: Any, engine: str) -> Optional[np.ndarray]:
    """Each request's service time alone on the engine ``config`` describes: its E2E when it is
    the only request in the engine, with a cold prefix cache (the semantics' ``run_alone``).
    None when the semantics does not give it, or when some request takes no time at all (a
    step time of 0), which leaves slowdown undefined."""
    run = module.run_alone(requests, config, step_time, engine)
    if run is None:
        return None
    seconds = np.asarray(run.finish - run.arrival)
    return seconds if len(seconds) == 0 or seconds.min() > 0 else None
