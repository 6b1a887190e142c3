"""The loop of a disaggregated deployment, a prefill pool handing requests to a decode pool on
one clock: the reference of the native ``rust/osbench-core/src/serve/disagg.rs``. Each
instance is a :class:`~osbench.serve.drive.Stepper` with its own KV, recorder and livelock
guard, stepped as :func:`osbench.serve.drive.drive` steps one engine, and requests are sent as
there (:class:`~osbench.serve.drive.Sender`; under closed-loop clients a request leaves room
when its last token comes out of its decode instance).

A request's path, as vLLM's disaggregated serving runs it (``examples/online_serving/
disaggregated_serving``'s proxy, the NixlConnector):

1. when it is sent, the prefill router picks a prefill instance (seeing what a router sees,
   :mod:`osbench.serve.routers.base`); there it is served with one output token
   (``max_tokens=1``), its prompt's KV computed (and cached: prefix caching on the prefill
   side) by the end of the step that gives that token;
2. its KV then moves over the instance's link (:class:`~osbench.serve.links.Link`), the whole
   blocks of its prompt, after the prefill completes (vLLM's NixlConnector reads it then):
   transfers from one prefill instance go one at a time, in the order their prefills completed,
   each taking ``bytes / bandwidth`` on the wire and arriving ``latency`` later. With
   ``layers`` (``overlap="layerwise"``, as Mooncake and DistServe stream it), the KV goes layer
   by layer during the prefill's last step instead: that step's time split evenly over the
   model's layers, layer ``l``'s share of the bytes (the earlier chunks' KV with it) goes on
   the wire once the layer is computed and the share before it is sent, and the KV has arrived
   ``latency`` after its last layer's share;
3. when its KV arrives, the decode router picks a decode instance (which numbers its requests
   as it receives them, as an engine of its own would: in any order) (the link's time does not
   depend on which: every pair is joined by the same link), which takes the request with the
   KV of all its prompt but the last token as computed (the scheduler's remote prefill,
   ``num_external_computed_tokens``; the last token is computed again for its logits, as
   ``_update_waiting_for_remote_kv`` sets ``num_computed_tokens = num_tokens - 1``), and admits
   it only when its blocks fit in the decode pool's KV (the KV waits in the sender's memory
   until then); its first output token comes out of the decode instance.

Simplified against the NixlConnector, which has the decode instance pull the KV once it has
allocated the request's blocks (``WAITING_FOR_REMOTE_KVS``) and the prefill instance keep its
blocks until that read completes (``delay_free_blocks``, freed on ``finished_sending``): here
the KV moves at the prefill's end and the prefill instance frees its blocks then, so a decode
pool short of room never holds back the prefill pool.

The clock: the loop takes the earliest event, a send, a KV arrival, or a busy instance's next
step; on a tie a send goes first, then a KV arrival (in the order they arrive, and of the
transfers' order), then the prefill instances by index, then the decode instances by index.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Optional

import numpy as np

from osbench.serve.drive import Guard, Sender, Stepper
from osbench.serve.links import Link
from osbench.serve.replicas import _Engine, _own, checked
from osbench.serve.requests import Requests
from osbench.serve.routers.base import Replica, Request, Router
from osbench.serve.run import Concurrency, EngineRun, Recorder, StepTimeModel


@dataclass(frozen=True, eq=False)
class DisaggRun:
    """One run of a prefill pool and a decode pool: per request, where it was served and when
    its KV moved; per instance, its own run, its requests numbered as it received them."""

    prefill_replica: np.ndarray
    """Per request (int64): the prefill instance that computed its prompt."""
    decode_replica: np.ndarray
    """Per request (int64): the decode instance that produced its output."""
    transfer_start: np.ndarray
    """Per request: when its KV went on the wire (its prefill's end, or later behind other
    transfers from the same instance)."""
    kv_arrival: np.ndarray
    """Per request: when its KV reached the decode pool."""
    prefill_runs: tuple[EngineRun, ...]
    """Per prefill instance: its run over the requests it served (one output token each)."""
    decode_runs: tuple[EngineRun, ...]
    """Per decode instance: its run over the requests it served."""
    decode_order: tuple[np.ndarray, ...]
    """Per decode instance (int64): the requests it served, in the order it received them (its
    own numbering; a prefill instance receives its requests in their order)."""


@dataclass(frozen=True)
class Pool:
    """One pool of a loop: its instances (a stepper and its livelock guard each), the router in
    front of it, each step's time, and the KV each instance has (``usable_blocks`` of
    ``block_size`` tokens)."""

    engines: Sequence[tuple[Stepper, Optional[Guard]]]
    router: Router
    step_time: StepTimeModel
    usable_blocks: int
    block_size: int


def views(reps: Sequence[_Engine], now: float, tokens: np.ndarray, pool: Pool) -> list[Replica]:
    """The instances of a pool as its router sees them at ``now``."""
    return [rep.view(k, now, tokens, pool.usable_blocks, pool.block_size) for k, rep in enumerate(reps)]


def step(
    rep: _Engine, pool: Pool, tokens: np.ndarray, next_send: Optional[float], local: bool
) -> tuple[float, list[int]]:
    """The next step of ``rep``: when it ends and the requests it finished (by index), in
    order; ``local``: as :meth:`_Engine.give <osbench.serve.replicas._Engine.give>`."""
    end, finished, _, repeats = rep.step(pool.step_time, tokens, local)
    if repeats:
        assert rep.guard is not None
        raise rep.guard.error(next_send)
    return end, finished


def one_token(requests: Requests) -> Requests:
    """``requests`` as a prefill instance serves them: one output token each (``max_tokens=1``,
    as vLLM's disaggregated proxy sends a request to its prefill instance)."""
    return Requests(
        requests.arrival,
        requests.prompt_len,
        np.ones(len(requests), dtype=np.int64),
        blocks=requests.block_ids,
        block_offsets=requests.block_offsets,
        priority=requests.priority,
        source_block=requests.source_block,
        name=requests.name,
    )


def transfer(link: Link, free: float, num_bytes: float, start: float, end: float, layers: int) -> tuple[float, float]:
    """A prompt's KV of ``num_bytes`` on a link free from ``free``, its prefill's last step
    running from ``start`` to ``end``: when its first byte goes on the wire and when its last
    one is off it (see the module: after the prefill, or layer by layer when ``layers``)."""
    wire = link.seconds(num_bytes)
    if layers == 0:
        begin = max(end, free)
        return begin, begin + wire
    share = wire / layers
    begin = done = free
    for layer in range(layers):
        ready = end if layer == layers - 1 else start + (end - start) * (layer + 1) / layers
        go = max(ready, done)
        if layer == 0:
            begin = go
        done = go + share
    return begin, done


def drive_disaggregated(
    requests: Requests,
    prefill_requests: Requests,
    prefill: Pool,
    decode: Pool,
    link: Link,
    kv_bytes: np.ndarray,
    *,
    record: bool = False,
    concurrency: Optional[Concurrency] = None,
    layers: int = 0,
) -> DisaggRun:
    """Serve ``requests`` on the ``prefill`` pool (whose steppers serve ``prefill_requests``,
    the same requests with one output token each) and the ``decode`` pool, request ``i``'s KV
    taking ``kv_bytes[i]`` bytes per GPU over ``link``, after its prefill or, with ``layers``
    (the model's), layer by layer during its last prefill step (see the module's docstring)."""
    n = len(requests)
    pre = [_Engine(s, g, Recorder(n, record)) for s, g in prefill.engines]
    dec = [_Engine(s, g, Recorder(n, record)) for s, g in decode.engines]
    prefill.router.start(len(pre), prefill_requests, prefill.block_size)
    decode.router.start(len(dec), requests, decode.block_size)
    prompt_len = requests.prompt_len.tolist()
    output_len = requests.output_len.tolist()
    pre_tokens = requests.prompt_len + 1
    dec_tokens = requests.prompt_len + requests.output_len
    sender = Sender(requests.arrival.tolist(), concurrency)
    prefill_replica = np.zeros(n, dtype=np.int64)
    decode_replica = np.zeros(n, dtype=np.int64)
    transfer_start = np.zeros(n)
    kv_arrival = np.zeros(n)
    link_free = [0.0] * len(pre)
    arrivals: list[tuple[float, int, int]] = []  # (when, order of transfer, request)
    transfers = 0
    num_finished = 0
    while num_finished < n:
        t_send = sender.time()
        t_kv = arrivals[0][0] if arrivals else math.inf
        busy: Optional[_Engine] = None
        for rep in (*pre, *dec):
            if rep.stepper.has_unfinished_requests() and (busy is None or rep.clock < busy.clock):
                busy = rep
        t_step = math.inf if busy is None else busy.clock
        if t_send <= t_kv and t_send <= t_step:
            if t_send == math.inf:  # cannot happen: something runs, moves, or room is free
                raise RuntimeError("no request can be sent and no instance runs: this is a bug")
            index, sent = sender.send()
            seen = views(pre, sent, pre_tokens, prefill)
            k = checked(
                prefill.router.route(Request(index, sent, prompt_len[index], 1), seen), len(pre), prefill.router, index
            )
            prefill_replica[index] = k
            pre[k].give(index, sent, prompt_len[index], prompt_len[index] + 1, prefill.block_size, False)
        elif t_kv <= t_step:
            when, _, index = heapq.heappop(arrivals)
            seen = views(dec, when, dec_tokens, decode)
            route = Request(index, when, prompt_len[index], output_len[index])
            k = checked(decode.router.route(route, seen), len(dec), decode.router, index)
            decode_replica[index] = k
            tokens = prompt_len[index] + output_len[index]
            dec[k].give(index, when, prompt_len[index], tokens, decode.block_size, True)
        else:
            assert busy is not None
            next_send = sender.time() if sender.more() else None
            if any(busy is rep for rep in pre):
                started = busy.clock
                end, finished = step(busy, prefill, pre_tokens, next_send, False)
                k = next(j for j, rep in enumerate(pre) if rep is busy)
                for index in finished:  # its prefill done: the KV goes on the wire
                    begin, link_free[k] = transfer(link, link_free[k], float(kv_bytes[index]), started, end, layers)
                    transfer_start[index] = begin
                    kv_arrival[index] = link_free[k] + link.latency
                    heapq.heappush(arrivals, (float(kv_arrival[index]), transfers, index))
                    transfers += 1
            else:
                end, finished = step(busy, decode, dec_tokens, next_send, True)
                num_finished += len(finished)
                sender.finished(end, len(finished))
    return DisaggRun(
        prefill_replica,
        decode_replica,
        transfer_start,
        kv_arrival,
        tuple(_own(rep.recorder.result(), rep.given, n) for rep in pre),
        tuple(_own(rep.recorder.result(), list(range(len(rep.given))), n) for rep in dec),
        tuple(np.asarray(rep.given, dtype=np.int64) for rep in dec),
    )


__all__ = ["DisaggRun", "Pool", "drive_disaggregated", "one_token", "transfer"]
