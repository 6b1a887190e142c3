"""SGLang 0.5.23's own scheduling code, driven like osbench's engine: the fidelity peer.

SGLang's ``Scheduler`` class is entangled with its processes (ZMQ sockets, the TP worker, the
model runner); what decides is a handful of pieces, and this harness drives those, SGLang's
own: its requests (``managers/schedule_batch.py: Req``), its radix tree
(``mem_cache/radix_cache.py: RadixCache``), the queue policy
(``managers/schedule_policy.py: SchedulePolicy``), prefill admission (``PrefillAdder`` over
``mem_cache/prefill_budget.py: PrefillBudget``), the decode memory check and retraction
(``ScheduleBatch.check_decode_mem``, ``retract_decode``, ``release_req``), the KV release and
checkpoint paths (``mem_cache/common.py``) and the ratio tracker
(``scheduler_components/new_token_ratio_tracker.py``). The harness plays the rest in the order
``managers/scheduler.py: get_next_batch_to_run`` and ``_get_new_batch_prefill_raw`` call them
(the loop without overlap), and the model: a prefilled or decoded request samples one token.
The token pool is a list of slot indices (``allocator/base.py: BaseTokenToKVPoolAllocator``,
subclassed); the request rows are lists.

Prompts become the token ids of :func:`osbench.serve.sglang.stepper.prompt_tokens`; outputs
are private ids. The result is the :class:`EngineRun` that
:func:`osbench.serve.sglang.run` returns with ``record=True``, to be compared array for array.

SGLang is an optional peer: only the Python sources named in :data:`SOURCES` are used, unpacked
from the SGLang wheel into ``$OSBENCH_PEERS_DIR/sglang-0.5.23`` by ``make sglang-peer``
(``python -m osbench.serve.sglang.peer fetch``). The modules they import that need a GPU stack
are inert placeholders of :mod:`osbench.serve.peers.sandbox`; ``torch`` is a stand-in whose
tensors are lists (:data:`_STAND_INS`), so torch need not be installed. Page size 1 only.
"""

from __future__ import annotations

import argparse
import itertools
import random
import time
from array import array
from pathlib import Path
from typing import Any, Optional

from osbench.errors import ArgumentError
from osbench.serve.drive import Output, Planned, drive, recomputed
from osbench.serve.peers.fetch import Wheel, peers_dir
from osbench.serve.peers.sandbox import Sandbox
from osbench.serve.requests import Requests
from osbench.serve.run import Concurrency, EngineRun, Recorder, StepTimeModel, check_concurrency
from osbench.serve.sglang.config import EngineConfig
from osbench.serve.sglang.request import private_token
from osbench.serve.sglang.stepper import check_requests, prompt_tokens
from osbench.serve.steptime import StepWork

SGLANG_VERSION = "0.5.23"

SOURCES = (
    "sglang/srt/environ.py",
    "sglang/srt/managers/schedule_batch.py",
    "sglang/srt/managers/schedule_policy.py",
    "sglang/srt/managers/scheduler_components/new_token_ratio_tracker.py",
    "sglang/srt/mem_cache/allocator/base.py",
    "sglang/srt/mem_cache/base_prefix_cache.py",
    "sglang/srt/mem_cache/cache_init_params.py",
    "sglang/srt/mem_cache/common.py",
    "sglang/srt/mem_cache/evict_policy.py",
    "sglang/srt/mem_cache/prefill_budget.py",
    "sglang/srt/mem_cache/radix_cache.py",
    "sglang/srt/mem_cache/utils.py",
)
"""The SGLang source files the peer runs; every other ``sglang`` module is a placeholder."""

_PACKAGES = (
    "sglang",
    "sglang.srt",
    "sglang.srt.managers",
    "sglang.srt.managers.scheduler_components",
    "sglang.srt.mem_cache",
    "sglang.srt.mem_cache.allocator",
)

_THIRD_PARTY = ("torch", "msgspec")

_WHEEL = Wheel(
    "sglang",
    SGLANG_VERSION,
    SOURCES,
    ("--only-binary=:all:", "--platform", "manylinux_2_34_x86_64", "--python-version", "3.11"),
)

__all__ = ["SGLANG_VERSION", "SOURCES", "fetch", "missing_reason", "peers_dir", "run", "sources_dir"]


def sources_dir() -> Path:
    """The folder holding the SGLang sources (``sglang/...`` inside it)."""
    return _WHEEL.folder()


def missing_reason() -> Optional[str]:
    """Why the peer cannot run here, or ``None`` when it can."""
    return _WHEEL.missing_reason("SGLang", "sglang-peer")


def fetch(wheel: Optional[str] = None) -> Path:
    """Unpack :data:`SOURCES` from the SGLang wheel into :func:`sources_dir`, downloading it
    (``pip download sglang==0.5.23 --no-deps``) unless ``wheel`` names one on disk."""
    return _WHEEL.fetch(wheel)


# --------------------------------------------------------------------------- the sandbox


class _Tensor(list):
    """A ``torch.Tensor`` of int64 as the tree and the rows use it: a list that slices to a list."""

    def __getitem__(self, i: Any) -> Any:
        item = list.__getitem__(self, i)
        return _Tensor(item) if isinstance(i, slice) else item

    def clone(self) -> _Tensor:
        return _Tensor(self)

    def to(self, *args: Any, **kwargs: Any) -> _Tensor:
        return _Tensor(self)

    def tolist(self) -> list:
        return list(self)

    def numel(self) -> int:
        return len(self)


class _IInfo:
    def __init__(self, dtype: Any) -> None:
        self.max, self.min = 2**63 - 1, -(2**63)


class _Device:
    def __init__(self, name: str = "cpu") -> None:
        self.type = name


def _empty(size: Any, dtype: Any = None, device: Any = None, **kwargs: Any) -> _Tensor:
    return _Tensor([0] * (size[0] if isinstance(size, tuple) else size))


class _Struct:
    """``msgspec.Struct``: only subclassed by data classes the scheduler's path never builds."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        pass


class _Settings:
    """One of SGLang's runtime configuration namespaces (``runtime_context.get_schedule()``
    and the like): the attributes given; any other reads as False (off, unset)."""

    def __init__(self, **attributes: Any) -> None:
        self.__dict__.update(attributes)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return False


def _stand_ins(config: EngineConfig) -> dict[str, dict[str, Any]]:
    schedule = _Settings(
        schedule_policy=config.schedule_policy,
        schedule_conservativeness=config.schedule_conservativeness,
        retraction_policy="length",
        schedule_low_priority_values_first=False,
        prefill_max_requests=None,
        page_size=config.page_size,
    )
    memory = _Settings(radix_eviction_policy="lru")
    disagg = _Settings(disaggregation_mode="null", disaggregation_decode_retraction_backup=None)
    parallel = _Settings(pp_max_micro_batch_size=config.running_cap, pp_size=1, dcp_enabled=False)
    return {
        "torch": {
            "Tensor": _Tensor,
            "tensor": lambda data, dtype=None, device=None, **kw: _Tensor(list(data)),
            "empty": _empty,
            "cat": lambda tensors, dim=0: _Tensor([x for t in tensors for x in t]),
            "int64": "int64",
            "int32": "int32",
            "bool": "bool",
            "device": _Device,
            "iinfo": _IInfo,
        },
        "msgspec": {"Struct": _Struct},
        "sglang.srt.runtime_context": {
            "get_schedule": lambda: schedule,
            "get_memory": lambda: memory,
            "get_disagg": lambda: disagg,
            "get_parallel": lambda: parallel,
            "get_exec": lambda: _Settings(features=_Settings()),
            "get_serving": lambda: _Settings(),
            "get_observability": lambda: _Settings(),
            "get_context": lambda: _Settings(is_config_namespace_published=lambda name: False),
        },
        # One KV shard, no beams: the identity and nothing.
        "sglang.srt.mem_cache.allocator.page_interleave": {"page_interleave_shard_size": lambda allocator: 1},
        "sglang.srt.beam_search.batch_tail": {
            "beam_retraction_order": lambda order, reqs: order,
            "num_beam_member_rows": lambda reqs: 0,
            "strip_beam_tail": lambda batch: None,
        },
        "sglang.srt.utils": {"is_hip": lambda: False, "is_gfx95_supported": lambda: False},
        "sglang.srt.utils.common": {"ceil_align": lambda x, a: -(-x // a) * a},
    }


class _Sglang:
    """The loaded SGLang modules for one configuration (the runtime settings are module-level
    stand-ins), swapped into ``sys.modules`` only while in use."""

    def __init__(self, config: EngineConfig) -> None:
        reason = missing_reason()
        if reason is not None:
            raise FileNotFoundError(reason) if not _WHEEL.present() else RuntimeError(reason)
        self.sandbox = Sandbox(sources_dir(), SOURCES, _PACKAGES, _THIRD_PARTY, _stand_ins(config))
        self.active = self.sandbox.active
        with self.active():
            from sglang.srt.managers import schedule_batch, schedule_policy  # type: ignore[import-not-found]
            from sglang.srt.managers.scheduler_components import (  # type: ignore[import-not-found]
                new_token_ratio_tracker,
            )
            from sglang.srt.mem_cache import (  # type: ignore[import-not-found]
                base_prefix_cache,
                cache_init_params,
                common,
                radix_cache,
            )
            from sglang.srt.mem_cache.allocator import base  # type: ignore[import-not-found]
        self.schedule_batch, self.schedule_policy = schedule_batch, schedule_policy
        self.tracker = new_token_ratio_tracker
        self.base_prefix_cache, self.cache_init_params = base_prefix_cache, cache_init_params
        self.common, self.radix_cache, self.allocator = common, radix_cache, base


# --------------------------------------------------------------------------- the harness


def _pool_class(sglang: _Sglang) -> type:
    base = sglang.allocator.BaseTokenToKVPoolAllocator

    class TokenPool(base):  # type: ignore[misc, valid-type]
        """The token pool: free slot indices, first free first (``allocator/token.py``)."""

        def __init__(self, size: int) -> None:
            super().__init__(size, 1, "int64", "cpu", None, False)
            self.clear()

        def clear(self) -> None:
            self.free_pages = list(range(1, self.size + 1))
            self.release_pages: list[int] = []

        def available_size(self) -> int:
            return len(self.free_pages)

        def alloc(self, need_size: int) -> Optional[_Tensor]:
            if need_size > len(self.free_pages):
                return None
            taken, self.free_pages = self.free_pages[:need_size], self.free_pages[need_size:]
            return _Tensor(taken)

        def free(self, free_index: Any) -> None:
            self.free_pages.extend(list(free_index))

    return TokenPool


class _Rows:
    """``req_to_token``: a row of slot indices per request-pool slot, indexed ``[row, cols]``."""

    def __init__(self, size: int) -> None:
        self.rows: list[list[int]] = [[] for _ in range(size)]

    def __getitem__(self, key: Any) -> Any:
        if not isinstance(key, tuple):
            return _Tensor(self.rows[key])
        row, cols = key
        if isinstance(cols, slice):
            return _Tensor(self.rows[row][cols])
        return self.rows[row][cols]


class _ReqToTokenPool:
    """``mem_cache/memory_pool.py: ReqToTokenPool``: one row per running request."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.req_to_token = _Rows(size)
        self.free_slots = list(range(size))

    def available_size(self) -> int:
        return len(self.free_slots)

    def alloc_row(self, req: Any) -> None:
        if req.kv.req_pool_idx is None:
            req.kv.req_pool_idx = self.free_slots.pop(0)
            self.req_to_token.rows[req.kv.req_pool_idx] = []

    def write(self, key: tuple, values: Any) -> None:
        row, cols = key
        r = self.req_to_token.rows[row]
        start = cols.start or 0
        stop = start + len(values)
        if len(r) < stop:
            r.extend([0] * (stop - len(r)))
        r[start:stop] = list(values)

    def free(self, req: Any) -> None:
        if req.kv.req_pool_idx is not None:
            self.free_slots.append(req.kv.req_pool_idx)
            req.kv.req_pool_idx = None


class _Batch:
    """What the harness needs of ``ScheduleBatch``: its requests, the flag, and SGLang's own
    ``check_decode_mem`` / ``retract_decode`` / ``release_req`` bound to it."""

    check_decode_mem: Any
    new_tokens_required_next_decode: Any
    retract_decode: Any
    release_req: Any

    def __init__(self, peer: Stepper, reqs: Optional[list] = None, extend: bool = False) -> None:
        self.reqs: list = reqs if reqs is not None else []
        self.extend = extend
        self.batch_is_full = False
        self.chunked_req: Any = None
        self.decoding_reqs: list = []
        self.token_to_kv_pool_allocator = peer.pool
        self.tree_cache = peer.tree
        self.req_to_token_pool = peer.rows
        self.hisparse_coordinator = None
        self.spec_algorithm = _Settings(is_none=lambda: True)
        cls = peer.sglang.schedule_batch.ScheduleBatch
        for name in ("check_decode_mem", "new_tokens_required_next_decode", "retract_decode", "release_req"):
            setattr(self, name, getattr(cls, name).__get__(self))
        self._get_decode_retraction_order = cls._get_decode_retraction_order

    def batch_size(self) -> int:
        return len(self.reqs)

    def is_empty(self) -> bool:
        return not self.reqs

    def filter_batch(self, reqs_to_exclude: Any = None, keep_indices: Optional[list[int]] = None) -> None:
        """``ScheduleBatch.filter_batch`` on the request list."""
        if keep_indices is None:
            exclude = reqs_to_exclude or []
            keep_indices = [i for i, r in enumerate(self.reqs) if not r.finished() and r not in exclude]
        self.reqs = [self.reqs[i] for i in keep_indices]


class Stepper:
    """SGLang's scheduling code as :func:`osbench.serve.drive.drive` runs it."""

    def __init__(self, sglang: _Sglang, requests: Requests, config: EngineConfig) -> None:
        self.sglang, self.requests, self.config = sglang, requests, config
        self.tokens, self.offsets = prompt_tokens(requests)
        self.pool = _pool_class(sglang)(config.max_total_tokens)
        self.rows = _ReqToTokenPool(config.running_cap)
        params = sglang.cache_init_params.CacheInitParams(
            disable=False, req_to_token_pool=self.rows, token_to_kv_pool_allocator=self.pool, page_size=1
        )
        self.tree = sglang.radix_cache.RadixCache(params)
        # The tree's access times: a logical clock, each reading the next tick (as osbench.radix).
        clock = itertools.count(1)
        logical = _Settings(monotonic=lambda: float(next(clock)), perf_counter=time.perf_counter, time=time.time)
        sglang.radix_cache.time = sglang.base_prefix_cache.time = logical
        self.policy = sglang.schedule_policy.SchedulePolicy(config.schedule_policy, self.tree, False, False, False)
        random.seed(config.random_seed)  # _sort_randomly shuffles with the global random
        self.rng_state = random.getstate()
        self.ratio = sglang.tracker.NewTokenRatioTracker.from_config()
        self.waiting: list = []
        self.running = _Batch(self)
        self.last_batch: Optional[_Batch] = None
        self.chunked_req: Any = None
        self.index_of: dict[str, int] = {}
        self.computed_high: dict[int, int] = {}
        """Per request, the most tokens its KV has held (:func:`~osbench.serve.drive.recomputed`)."""
        self.batch: Optional[_Batch] = None
        self.retracted: list = []
        self.admitted: list = []
        self.processed_tokens = 0  # Scheduler.processed_tokens_counter

    def add_request(self, index: int, arrival: float) -> None:
        sg = self.sglang
        prompt = self.tokens[self.offsets[index] : self.offsets[index + 1]].tolist()
        sampling = _Settings(
            max_new_tokens=int(self.requests.output_len[index]),
            ignore_eos=False,
            stop_token_ids=None,
            min_new_tokens=0,
            custom_params=None,
            json_schema=None,
            regex=None,
            ebnf=None,
            structural_tag=None,
            stop_strs=(),
            stop_regex_strs=(),
            n=1,
        )
        with sg.active():
            req = sg.schedule_batch.Req(f"{index:012d}", "", array("q", prompt), sampling)
        self.index_of[req.rid] = index
        req.time_stats.wait_queue_entry_time = arrival  # set_wait_queue_entry_time, on the engine's clock
        self._add_request_to_queue(req)

    def _add_request_to_queue(self, req: Any) -> None:
        """``Scheduler._add_request_to_queue``: to the back, with the prefill-token counter."""
        self.waiting.append(req)
        req.arrival_processed_tokens = self.processed_tokens

    def has_unfinished_requests(self) -> bool:
        last = self.last_batch
        busy = (
            bool(self.waiting)
            or any(not r.finished() for r in self.running.reqs)
            or self.chunked_req is not None
            or (last is not None and last.extend and any(not r.finished() for r in last.reqs))
        )
        if not busy:
            self.ratio.reset()  # Scheduler.on_idle
        return busy

    # ----------------------------------------------------------------------- one step

    def schedule(self) -> Planned:
        sg = self.sglang
        with sg.active():
            random.setstate(self.rng_state)
            batch = self._get_next_batch_to_run()
            self.rng_state = random.getstate()
        self.batch = batch
        decoding = batch.decoding_reqs if batch.extend else batch.reqs
        scheduled, work, again = [], [], 0
        for r in batch.reqs:
            if r in decoding:
                new, cached = 1, r.kv.kv_committed_len - 1
            else:
                new, cached = r.extend_end - r.prefix_len, r.prefix_len
            total = len(r.origin_input_ids) + len(r.output_ids)
            index = self.index_of[r.rid]
            scheduled.append((index, new))
            work.append((new, cached, total - cached))
            more, self.computed_high[index] = recomputed(cached, new, self.computed_high.get(index, 0))
            again += more
        free = self.pool.available_size() + self.tree.evictable_size()
        return Planned(
            StepWork.of(work),
            scheduled,
            [self.index_of[r.rid] for r in self.retracted],
            [(self.index_of[r.rid], hit) for r, hit in self.admitted],
            len(self.waiting),
            self.config.max_total_tokens - free,
            free,
            recomputed_tokens=again,
        )

    def _get_next_batch_to_run(self) -> _Batch:
        sg = self.sglang
        self.retracted, self.admitted = [], []
        exclude: list = []
        if self.chunked_req is not None:
            exclude.append(self.chunked_req)
            if self.chunked_req.extend_end > self.chunked_req.prefix_len:
                sg.common.checkpoint_kv_cache(self.chunked_req, self.tree)  # stash_chunked_request
        last = self.last_batch
        if last is not None and last.extend:
            if last.chunked_req is not None:
                exclude.append(last.chunked_req)
            before = last.batch_size()
            last.filter_batch(reqs_to_exclude=exclude)
            if last.batch_size() < before:
                self.running.batch_is_full = False
            if not last.is_empty():
                if self.running.is_empty():
                    self.running = last
                    last.extend = False
                else:
                    self.running.reqs.extend(last.reqs)
        before = self.running.batch_size()
        self.running.filter_batch()
        if self.running.batch_size() < before:
            self.running.batch_is_full = False
        batch = self._get_new_batch_prefill()
        if batch is None:
            batch = self._update_running_batch()
        else:  # run_batch: the counter takes the batch's extend_num_tokens
            self.processed_tokens += sum(
                1 if any(r is d for d in batch.decoding_reqs) else r.extend_end - r.prefix_len for r in batch.reqs
            )
        self.last_batch = batch
        return batch

    def _num_allocatable_reqs(self, num_held_rows: int) -> int:
        running_bs = self.running.batch_size()
        return min(self.config.running_cap - running_bs, max(self.rows.available_size() + num_held_rows, 0))

    def _get_new_batch_prefill(self) -> Optional[_Batch]:
        sg, cfg, running = self.sglang, self.config, self.running
        AddReqResult = sg.schedule_policy.AddReqResult
        if running.is_empty():
            running.batch_is_full = False
        if (running.batch_is_full or not self.waiting) and self.chunked_req is None:
            return None
        if self._num_allocatable_reqs(0) <= 0 and self.chunked_req is None:
            running.batch_is_full = True
            return None
        self.policy.calc_priority(self.waiting, running, processed_tokens=self.processed_tokens)
        adder = sg.schedule_policy.PrefillAdder(
            1,
            self.tree,
            self.pool,
            running,
            self.ratio.current,
            cfg.max_prefill_tokens,
            cfg.chunk_tokens,
            running.batch_size() if cfg.is_mixed_chunk else 0,
            0,
            max_prefill_bs=0,
            max_running_requests=cfg.running_cap,
            prefill_max_requests=None,
            prefill_delayer_single_pass=None,
            dllm_config=None,
            waiting_queue_len=len(self.waiting),
        )
        if self.chunked_req is not None:
            self.chunked_req.init_next_round_input()
            adder.chunked_req_limit = self.policy.shortest_prefill_chunk_limit(
                self.chunked_req, self.waiting, adder.rem_chunk_tokens or 0, 1
            )
            self.chunked_req = adder.add_chunked_req(self.chunked_req)
        for req in self.waiting:
            if adder.budget_state() == AddReqResult.OTHER:
                break
            held = sum(r.kv.holds_kv for r in adder.can_run_list)
            if len(adder.can_run_list) >= self._num_allocatable_reqs(held):
                running.batch_is_full = True
            if running.batch_is_full:
                break
            req.init_next_round_input(self.tree)
            res = adder.add_one_req(req, has_chunked_req=self.chunked_req is not None, truncation_align_size=None)
            if res != AddReqResult.CONTINUE:
                if res == AddReqResult.NO_TOKEN:
                    running.batch_is_full = len(adder.can_run_list) > 0 or not running.is_empty()
                break
        can_run = list(adder.can_run_list)
        if not can_run:
            return None
        for r in can_run:
            if any(r is w for w in self.waiting):
                self.admitted.append((r, r.prefix_len))
        self.waiting = [x for x in self.waiting if not any(x is c for c in can_run)]
        if adder.new_chunked_req is not None:
            self.chunked_req = adder.new_chunked_req
        if self.chunked_req is not None:
            self.chunked_req.inflight_middle_chunks += 1
        batch = _Batch(self, can_run, extend=True)
        batch.chunked_req = self.chunked_req
        self._prepare_for_extend(batch)
        if cfg.is_mixed_chunk and not running.is_empty() and running.check_decode_mem():
            self._prepare_for_decode(running.reqs)
            batch.decoding_reqs = list(running.reqs)
            batch.reqs = batch.reqs + running.reqs
            flag = running.batch_is_full
            self.running = _Batch(self)
            self.running.batch_is_full = flag
        return batch

    def _prepare_for_extend(self, batch: _Batch) -> None:
        """``alloc_for_extend``: rows, then eviction for the new tokens, then the slots."""
        for r in batch.reqs:
            if not r.kv.holds_kv:
                self.rows.alloc_row(r)
                self.rows.write((r.kv.req_pool_idx, slice(0, None)), self.tree.path_device_indices(r.last_node))
        need = sum(r.extend_end - r.prefix_len for r in batch.reqs)
        self.sglang.common.evict_from_tree_cache(self.tree, need)
        if need > self.pool.available_size():  # alloc_token_slots
            raise RuntimeError(f"Out of memory. Try to lower your batch size.\nTry to allocate {need} tokens.")
        for r in batch.reqs:
            slots = self.pool.alloc(r.extend_end - r.prefix_len)
            assert slots is not None
            self.rows.write((r.kv.req_pool_idx, slice(r.prefix_len, None)), slots)
            r.kv.kv_allocated_len = r.kv.kv_committed_len = r.extend_end

    def _prepare_for_decode(self, reqs: list) -> None:
        """``alloc_for_decode``: eviction, then a slot for each request's last token."""
        self.sglang.common.evict_from_tree_cache(self.tree, len(reqs))
        for r in reqs:
            slot = self.pool.alloc(1)
            assert slot is not None, "the pool ran out in decode"
            self.rows.write((r.kv.req_pool_idx, slice(r.kv.kv_committed_len, None)), slot)
            r.kv.kv_committed_len += 1
            r.kv.kv_allocated_len = r.kv.kv_committed_len

    def _update_running_batch(self) -> _Batch:
        batch = self.running
        initial = batch.batch_size()
        if not batch.check_decode_mem():
            retracted, ratio, aborted = batch.retract_decode()
            assert not aborted, "a request could not decode even alone"
            self.ratio.current = ratio
            self.retracted = list(retracted)
            for r in retracted:
                self._add_request_to_queue(r)
        else:
            self.ratio.decay_step()
        if batch.batch_size() < initial:
            batch.batch_is_full = False
        self._prepare_for_decode(batch.reqs)
        return batch

    # ----------------------------------------------------------------------- its result

    def update_from_output(self) -> Output:
        sg, batch = self.sglang, self.batch
        assert batch is not None
        tokens, finished = [], 0
        with sg.active():
            decoding = batch.decoding_reqs if batch.extend else batch.reqs
            for r in list(batch.reqs):
                if batch.extend and r.inflight_middle_chunks > 0:
                    r.inflight_middle_chunks -= 1
                    if r is self.chunked_req:
                        continue  # a middle chunk: no token
                index = self.index_of[r.rid]
                r.output_ids.append(private_token(index, len(r.origin_input_ids) + len(r.output_ids)))
                r.update_finish_state()
                done = r.finished()
                tokens.append((index, len(r.output_ids) == 1, done))
                if done:
                    sg.common.release_kv_cache(r, self.tree, checkpoint=True)
                    finished += 1
                elif batch.extend and not any(r is d for d in decoding):
                    sg.common.checkpoint_kv_cache(r, self.tree)
        return Output(tokens, finished, self.tree.total_size())


def run(
    requests: Requests,
    config: EngineConfig,
    step_time: StepTimeModel,
    *,
    concurrency: Optional[Concurrency] = None,
) -> EngineRun:
    """Serve ``requests`` with SGLang 0.5.23's own scheduling code on the engine loop,
    recording every step."""
    check_requests(requests, config)
    concurrency = check_concurrency(concurrency)
    if config.page_size != 1:
        raise ArgumentError(
            f"page_size={config.page_size} is not accepted by the SGLang peer: it drives SGLang's unpaged "
            "token pool (allocator/token.py), page_size=1"
        )
    sglang = _Sglang(config)
    recorder = Recorder(len(requests), True)
    with sglang.active():
        stepper = Stepper(sglang, requests, config)
    return drive(requests, stepper, step_time, recorder, concurrency=concurrency)


def _main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m osbench.serve.sglang.peer")
    sub = parser.add_subparsers(dest="command", required=True)
    get = sub.add_parser("fetch", help=f"unpack the SGLang {SGLANG_VERSION} sources the peer runs")
    get.add_argument("--wheel", help="a wheel on disk instead of downloading one")
    args = parser.parse_args(argv)
    print(fetch(args.wheel))
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())
