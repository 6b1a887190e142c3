"""Disaggregated prefill and decode (Splitwise, DistServe, Mooncake; vLLM's disaggregated
serving with the NixlConnector): :func:`simulate_disaggregated` serves requests on a pool of
``prefill`` instances and a pool of ``decode`` instances, each with its own KV cache and GPU,
driven on one clock by one deterministic event loop (:mod:`osbench.serve.pools`, whose
docstring states the rules): a request prefills on a prefill instance picked by ``router``,
its KV moves over ``kv_link`` after the prefill completes (:mod:`osbench.serve.links`), and a
decode instance picked by ``decode_router`` admits it when its blocks fit and produces its
output. It returns a :class:`DisaggResult`: every instance's own
:class:`~osbench.serve.ServeResult`, the merged one (each request from its arrival to its last
token), where each request went, when its KV moved, and TTFT split into queueing, prefill,
transfer and the decode instance's first step.

The fact it keeps (tests/serve/test_disagg.py): with an instant link (``kv_link="ideal"``) and
pools large enough, the prefill side is the cluster of :func:`osbench.serve.simulate_cluster`
serving one token per request, and TTFT is its queueing and prefill plus the decode step that
produces the first token.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional, Union

import numpy as np

from osbench import _checks
from osbench._record import Record
from osbench.errors import ArgumentError
from osbench.serve import native
from osbench.serve.cluster import pool_size
from osbench.serve.links import Link, link_of
from osbench.serve.models import GPU, GPUS, Model
from osbench.serve.pools import DisaggRun, Pool, drive_disaggregated, one_token
from osbench.serve.requests import Requests
from osbench.serve.result import ServeResult, ServeSummary, Stats
from osbench.serve.routers import router_of
from osbench.serve.run import (
    Clients,
    Concurrency,
    EngineRun,
    Steps,
    check_concurrency,
    moves,
    sends_reach,
    shortest_step,
)
from osbench.serve.simulate import configure, sent_to

OVERLAPS = ("after-prefill", "layerwise")
"""When the KV moves: after the prefill, or layer by layer during its last step."""
TAKES = (
    "prefill, decode, kv_link, overlap, router, decode_router, engine, semantics, model, gpu, prefill_gpu, decode_gpu, tp, "
    "step_time, num_blocks, record, concurrency"
)


@dataclass(frozen=True)
class DisaggSummary(Record):
    """Figures of one disaggregated run (:meth:`DisaggResult.summary`)."""

    prefill: int
    decode: int
    link: str
    #: when the KV moves (:data:`OVERLAPS`)
    overlap: str
    router: str
    decode_router: str
    #: every request from its arrival to its last token (TTFT, TPOT on the decode side,
    #: goodput...; its steps and KV those of the decode pool; its prefix hits the prefill side's)
    merged: ServeSummary
    #: TTFT's parts (seconds): waiting (for a prefill instance, and for room in a decode
    #: instance), the prefill, the KV transfer (its wait for the link included), the decode
    #: instance's first step
    queueing: Stats
    prefill_time: Stats
    transfer: Stats
    first_decode_step: Stats
    #: KV bytes moved from the prefill pool to the decode pool, over all GPUs
    bytes_moved: int
    requests_per_prefill: tuple[int, ...]
    requests_per_decode: tuple[int, ...]
    #: prompt tokens served from the prefill instances' prefix caches / prompt tokens
    prefix_hit_rate: float


@dataclass(frozen=True, eq=False)
class DisaggResult:
    """The outcome of one disaggregated run: the ``requests`` (their arrivals as sent), each
    pool's engine configuration, the ``link`` and the ``overlap``, the routers, the loop's raw ``run`` (which
    instance served each request, when its KV moved), each instance's own
    :class:`ServeResult` (``prefill``: its requests with one output token each; ``decode``: its
    requests in the order it received them, arriving when their KV did),
    ``merged`` (every request from arrival to last token), and ``kv_bytes``: the KV bytes of
    each request moved over all GPUs."""

    requests: Requests
    prefill_config: Any
    decode_config: Any
    link: Link
    overlap: str
    router: str
    decode_router: str
    run: DisaggRun
    prefill: tuple[ServeResult, ...]
    decode: tuple[ServeResult, ...]
    merged: ServeResult
    kv_bytes: np.ndarray

    @classmethod
    def from_run(
        cls,
        run: DisaggRun,
        requests: Requests,
        configs: tuple[Any, Any],
        link: Link,
        routers: tuple[str, str],
        kv_bytes: np.ndarray,
        overlap: str = "after-prefill",
    ) -> DisaggResult:
        """Wrap a loop's raw ``run`` over ``requests`` (as sent), each instance's checked as
        :meth:`ServeResult.from_run` checks one engine's."""
        n = len(requests)
        prefill_requests = one_token(requests)
        pre_rows = [np.flatnonzero(run.prefill_replica == k) for k in range(len(run.prefill_runs))]
        dec_rows = list(run.decode_order)
        pre = tuple(
            ServeResult.from_run(o, prefill_requests[r], configs[0]) for r, o in zip(pre_rows, run.prefill_runs)
        )
        dec = tuple(
            ServeResult.from_run(o, requests.received(r, run.kv_arrival[r]), configs[1])
            for r, o in zip(dec_rows, run.decode_runs)
        )

        def column(runs: tuple[EngineRun, ...], rows: list[np.ndarray], name: str) -> np.ndarray:
            out = np.zeros(n, dtype=np.asarray(getattr(runs[0], name)).dtype)
            for r, own in zip(rows, runs):
                out[r] = getattr(own, name)
            return out

        def both(name: str) -> np.ndarray:
            return column(run.prefill_runs, pre_rows, name) + column(run.decode_runs, dec_rows, name)

        merged_run = EngineRun(
            arrival=column(run.prefill_runs, pre_rows, "arrival"),
            admitted=column(run.prefill_runs, pre_rows, "admitted"),
            first_token=column(run.decode_runs, dec_rows, "first_token"),
            finish=column(run.decode_runs, dec_rows, "finish"),
            preemptions=both("preemptions"),
            cached_tokens=column(run.prefill_runs, pre_rows, "cached_tokens"),
            steps=Steps.merged(run.decode_runs),  # the decode pool's
        )
        merged = ServeResult.from_run(merged_run, requests, configs[1])
        return cls(
            requests, configs[0], configs[1], link, overlap, routers[0], routers[1], run, pre, dec, merged, kv_bytes
        )

    def _per_request(self, pool: str, name: str) -> np.ndarray:
        """Per request, the column ``name`` of the instance of ``pool`` that served it."""
        if pool == "prefill":
            results = self.prefill
            rows = [np.flatnonzero(self.run.prefill_replica == k) for k in range(len(results))]
        else:
            results, rows = self.decode, list(self.run.decode_order)
        out = np.zeros(len(self.requests))
        for r, result in zip(rows, results):
            out[r] = getattr(result, name)
        return out

    @property
    def prefill_end(self) -> np.ndarray:
        """Per request: when its prefill completed (its one token out of the prefill instance)."""
        return self._per_request("prefill", "first_token")

    @property
    def queueing(self) -> np.ndarray:
        """Per request: waiting for a prefill instance to schedule it, and for a decode
        instance to admit it once its KV arrived."""
        decode_wait = self._per_request("decode", "admitted") - self.run.kv_arrival
        return np.asarray(self._per_request("prefill", "admitted") - self.requests.arrival + decode_wait)

    @property
    def prefill_time(self) -> np.ndarray:
        """Per request: from its first prefill step's start to its prefill's end."""
        return np.asarray(self.prefill_end - self._per_request("prefill", "admitted"))

    @property
    def transfer(self) -> np.ndarray:
        """Per request: from its prefill's end to its KV's arrival (the wait for the link
        included)."""
        return np.asarray(self.run.kv_arrival - self.prefill_end)

    @property
    def first_decode_step(self) -> np.ndarray:
        """Per request: the decode step that computes its last prompt token and gives its first
        output token."""
        return np.asarray(self._per_request("decode", "first_token") - self._per_request("decode", "admitted"))

    def summary(self, slo_ttft: Optional[float] = None, slo_tpot: Optional[float] = None) -> DisaggSummary:
        """The merged summary (:meth:`ServeResult.summary`, at the SLOs given), TTFT's parts,
        the bytes moved and the requests per instance."""
        merged = self.merged.summary(slo_ttft, slo_tpot)
        return DisaggSummary(
            prefill=len(self.prefill),
            decode=len(self.decode),
            link=self.link.name,
            overlap=self.overlap,
            router=self.router,
            decode_router=self.decode_router,
            merged=merged,
            queueing=Stats.of(self.queueing),
            prefill_time=Stats.of(self.prefill_time),
            transfer=Stats.of(self.transfer),
            first_decode_step=Stats.of(self.first_decode_step),
            bytes_moved=int(self.kv_bytes.sum()),
            requests_per_prefill=tuple(len(r.requests) for r in self.prefill),
            requests_per_decode=tuple(len(r.requests) for r in self.decode),
            prefix_hit_rate=merged.prefix_hit_rate,
        )


def check_transfers_move_clock(
    requests: Requests, clients: Optional[Clients], link: Link, per_gpu: np.ndarray, step_time: Any
) -> None:
    """Refuse a link so slow or so late that its transfers could carry the clock where a step of
    ``step_time`` (the decode pool's, one token) no longer moves it, as
    :func:`~osbench.serve.run.check_clock_moves` refuses arrivals and turnarounds (which it has
    passed): a prefill instance's transfers queue on its link, each arriving ``latency`` after
    it leaves the wire, so they add at most their wire times and one latency each to where the
    sends reach (:func:`~osbench.serve.run.sends_reach`)."""
    shortest = shortest_step(step_time)
    if len(requests) == 0 or not shortest > 0:
        return
    wire = math.fsum(link.seconds(float(b)) for b in per_gpu)
    reach = sends_reach(requests, clients) + wire + len(requests) * link.latency
    if not moves(reach, shortest):
        raise ArgumentError(
            f"kv_link={link.name!r} is not accepted for these {len(requests)} requests: its transfers "
            f"({wire:.3g} s on the wire, {link.latency:.3g} s of latency each) could carry the clock to {reach:.3g} s, "
            f"where a decode step of {shortest:.3g} s no longer moves it (float64 keeps 53 bits)"
        )


def kv_bytes_per_gpu(requests: Requests, model: Model, tp: Optional[int], block_size: int) -> np.ndarray:
    """Per request, the KV bytes one GPU sends: the whole blocks of its prompt, its shard of the
    model's KV (``model.kv_bytes_per_token(tp)``)."""
    blocks = -(-requests.prompt_len // block_size)
    return blocks * block_size * model.kv_bytes_per_token(tp)


def simulate_disaggregated(
    requests: Requests,
    *,
    prefill: int,
    decode: int,
    kv_link: Union[str, Link] = "ib-ndr-400g",
    overlap: str = "after-prefill",
    router: Any = "round-robin",
    decode_router: Any = "round-robin",
    engine: str = "native",
    semantics: str = "vllm",
    model: Union[str, Model, None] = None,
    gpu: Union[str, GPU, None] = None,
    prefill_gpu: Union[str, GPU, None] = None,
    decode_gpu: Union[str, GPU, None] = None,
    tp: Optional[int] = None,
    step_time: Any = None,
    num_blocks: Optional[int] = None,
    record: bool = False,
    concurrency: Optional[Concurrency] = None,
    **config: Any,
) -> DisaggResult:
    """Serve ``requests`` on ``prefill`` prefill instances and ``decode`` decode instances
    joined by ``kv_link``, and return the :class:`DisaggResult` (the rules:
    :mod:`osbench.serve.pools`).

    - ``prefill``, ``decode``: the pools' sizes, each instance an engine of ``semantics`` with
      its own KV pool (``num_blocks``, by default what ``model`` leaves on its GPU) and
      ``tp`` GPUs.
    - ``kv_link``: a name of :data:`osbench.serve.links.LINKS` (``nvlink-4``, ``nvlink-5``,
      ``ib-ndr-400g``, ``roce-200g``, ``roce-400g``, ``pcie-5-x16``, ``ideal``) or a
      :class:`~osbench.serve.links.Link`.
    - ``overlap``: when the KV of a prompt moves: ``"after-prefill"`` (the default, as vLLM's
      NixlConnector reads it once the prefill is done) or ``"layerwise"`` (streamed layer by
      layer during the prefill's last step, as Mooncake and DistServe overlap it; the step's
      time split evenly over the model's layers).
    - ``router``, ``decode_router``: the rules that pick a prefill instance when a request is
      sent and a decode instance when its KV arrives, as :func:`osbench.serve.simulate_cluster`
      takes them (round-robin both by default, as vLLM's disaggregated proxy cycles its
      instances).
    - ``gpu``: both pools' GPU; ``prefill_gpu``, ``decode_gpu``: one pool's (a heterogeneous
      deployment), each pool's step time (the roofline) and KV pool from its own GPU.
    - ``model`` is needed: the bytes moved are its KV.
    - the other arguments are :func:`osbench.serve.simulate_cluster`'s, with the same
      defaults, taken by both pools.

    >>> import osbench as ob
    >>> reqs = ob.serve.Requests.poisson(40, rate=20.0, seed=1)
    >>> r = ob.serve.simulate_disaggregated(reqs, prefill=1, decode=1, model="llama-3-8b", gpu="h100")
    >>> s = r.summary()
    >>> s.requests_per_decode, s.bytes_moved == int(r.kv_bytes.sum()) > 0
    ((40,), True)
    """
    engine = _checks.engine(engine)
    prefill = pool_size("prefill", prefill, "prefill instances")
    decode = pool_size("decode", decode, "decode instances")
    the_link = link_of(kv_link)
    overlap = _checks.choice("overlap", overlap, OVERLAPS)
    routers = (router_of(router), router_of(decode_router))
    if routers[0] is routers[1]:
        raise ArgumentError(
            f"decode_router={decode_router!r} is not accepted: it is the router object of router=; "
            "give each pool a router of its own (a router keeps state)"
        )
    if model is None:
        raise ArgumentError(
            "model=None is not accepted by simulate_disaggregated: the KV moved between the pools is the model's; "
            "name a model (presets: osbench.serve.MODELS)"
        )
    pools = []
    for name, own_gpu in (("prefill_gpu", prefill_gpu), ("decode_gpu", decode_gpu)):
        if isinstance(own_gpu, str):
            _checks.choice(name, own_gpu, GPUS)
        g = gpu if own_gpu is None else own_gpu
        if g is None and (num_blocks is None or step_time is None):
            raise ArgumentError(
                f"{name}=None is not accepted with gpu=None: name gpu (both pools) or {name} (presets: "
                "osbench.serve.GPUS), or give step_time and num_blocks"
            )
        given = dict(config)
        module, cfg, st = configure(
            requests,
            "simulate_disaggregated",
            semantics=semantics,
            model=model,
            gpu=g,
            tp=tp,
            step_time=step_time,
            num_blocks=num_blocks,
            config=given,
            takes=TAKES,
            concurrency=concurrency,
        )
        pools.append((module, cfg, st))
    concurrency = check_concurrency(concurrency)
    record = _checks.flag("record", record)
    (module, pre_cfg, pre_st), (_, dec_cfg, dec_st) = pools
    m = Model.preset(model)
    per_gpu = kv_bytes_per_gpu(requests, m, tp, pre_cfg.block_size)
    check_transfers_move_clock(requests, concurrency, the_link, per_gpu, dec_st)
    kv_bytes = per_gpu * (m.tp if tp is None else m.check_tp(tp))
    prefill_requests = one_token(requests)
    layers = m.layers if overlap == "layerwise" else 0
    if engine == "native":
        if semantics != "vllm":
            raise ArgumentError(
                f"semantics={semantics!r} is not accepted by simulate_disaggregated with engine='native': "
                "the native loop runs vLLM's semantics; use engine='reference'"
            )
        out = native.disaggregated_call(
            requests,
            (pre_cfg, dec_cfg),
            (pre_st, dec_st),
            (prefill, decode),
            routers,
            the_link,
            per_gpu,
            record=record,
            concurrency=concurrency,
            layers=layers,
        )
        run = native.disagg_run(out)
    else:
        if not hasattr(module, "decode_stepper"):
            raise ArgumentError(
                f"semantics={semantics!r} is not accepted by simulate_disaggregated: its scheduler takes no KV "
                "computed elsewhere"
            )
        external = requests.prompt_len - 1
        run = drive_disaggregated(
            requests,
            prefill_requests,
            Pool(
                [module.stepper(prefill_requests, pre_cfg) for _ in range(prefill)],
                routers[0],
                pre_st,
                pre_cfg.usable_blocks,
                pre_cfg.block_size,
            ),
            Pool(
                [module.decode_stepper(requests, dec_cfg, external) for _ in range(decode)],
                routers[1],
                dec_st,
                dec_cfg.usable_blocks,
                dec_cfg.block_size,
            ),
            the_link,
            per_gpu,
            record=record,
            concurrency=concurrency,
            layers=layers,
        )
    # Latencies count from when each request was sent.
    sent = requests if concurrency is None else sent_to(requests, run.prefill_replica, run.prefill_runs)
    return DisaggResult.from_run(
        run, sent, (pre_cfg, dec_cfg), the_link, (repr(routers[0]), repr(routers[1])), np.asarray(kv_bytes), overlap
    )


__all__ = ["OVERLAPS", "DisaggResult", "DisaggSummary", "simulate_disaggregated"]
