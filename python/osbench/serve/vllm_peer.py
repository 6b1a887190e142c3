"""The real vLLM 0.33.0 scheduler, driven like osbench's engine: the fidelity peer.

``run(requests, config, step_time)`` builds vLLM's own ``Scheduler`` (with its
``KVCacheManager`` and ``BlockPool``) from the same :class:`EngineConfig`, feeds it the same
requests on the same clock, and plays the model: after each ``schedule()`` it hands back a
``ModelRunnerOutput`` with one sampled token for every request whose tokens are all computed, so
requests stop at ``output_len`` (``check_stop``). The result is the :class:`EngineRun` that
:func:`osbench.serve.reference.run` returns with ``record=True``, to be compared array for array.

Prompts become token ids that carry exactly the content :meth:`Requests.prompt_block_keys`
describes: a full prompt block with key ``k`` is the tokens ``[k, 1, 2, ..., block_size - 1]``
(equal keys at equal positions give equal tokens), while the trailing partial block and the
output tokens are negative ids unique to the request and position.

vLLM is an optional peer, like ``libcachesim`` elsewhere. Only the Python sources of the
scheduler and its KV cache manager are used, unpacked from the vLLM wheel into
``$OSBENCH_PEERS_DIR/vllm-0.33.0`` (default ``~/.cache/osbench/peers``) by ``make vllm-peer``
(``python -m osbench.serve.vllm_peer fetch``); no vLLM code is part of osbench. The modules they
import that need a GPU stack (torch, CUDA kernels, the model runner, KV connectors, metrics,
multimodal inputs) are replaced while vLLM runs by inert placeholders: every name in them is a
class that can be subclassed, called and indexed, whose instances accept any attribute or call
and are falsy. A few names get a working stand-in because the scheduler's path really uses them
(:data:`_STAND_INS`). The real modules are swapped into ``sys.modules`` only while vLLM runs.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import types
import zipfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Optional

from osbench.errors import ArgumentError
from osbench.serve.config import EngineConfig
from osbench.serve.requests import Requests
from osbench.serve.run import EngineRun, Recorder, StepTimeModel, batch_of, check_requests, step_duration

VLLM_VERSION = "0.33.0"

SOURCES = (
    "vllm/utils/hashing.py",
    "vllm/utils/math_utils.py",
    "vllm/v1/core/block_pool.py",
    "vllm/v1/core/kv_cache_coordinator.py",
    "vllm/v1/core/kv_cache_manager.py",
    "vllm/v1/core/kv_cache_utils.py",
    "vllm/v1/core/sched/interface.py",
    "vllm/v1/core/sched/output.py",
    "vllm/v1/core/sched/request_queue.py",
    "vllm/v1/core/sched/scheduler.py",
    "vllm/v1/core/sched/utils.py",
    "vllm/v1/core/single_type_kv_cache_manager.py",
    "vllm/v1/kv_cache_interface.py",
    "vllm/v1/kv_cache_spec_registry.py",
    "vllm/v1/request.py",
)
"""The vLLM source files the peer runs; every other ``vllm`` module is a placeholder."""

_PACKAGES = ("vllm", "vllm.utils", "vllm.v1", "vllm.v1.core", "vllm.v1.core.sched")
"""Packages of the real modules, created empty (their ``__init__`` would import the world)."""

_THIRD_PARTY = ("torch", "cbor2")
"""Libraries the real modules import but do not use on the scheduler's path."""

_STAMP = "osbench-sources.txt"

# Any wheel of the release has the same Python sources; this one installs on the most machines.
_PIP_DOWNLOAD = (
    *(sys.executable, "-m", "pip", "download", f"vllm=={VLLM_VERSION}", "--no-deps", "--quiet"),
    *("--only-binary=:all:", "--platform", "manylinux_2_28_x86_64", "--python-version", "3.12"),
)


def peers_dir() -> Path:
    """Where optional peers are kept: ``$OSBENCH_PEERS_DIR``, else ``~/.cache/osbench/peers``."""
    return Path(os.environ.get("OSBENCH_PEERS_DIR") or Path.home() / ".cache" / "osbench" / "peers")


def sources_dir() -> Path:
    """The folder holding the vLLM sources (``vllm/...`` inside it)."""
    return peers_dir() / f"vllm-{VLLM_VERSION}"


def _stamp_text() -> str:
    return "\n".join((f"vllm {VLLM_VERSION}", *SOURCES)) + "\n"


def _sources_present() -> bool:
    stamp = sources_dir() / _STAMP
    return stamp.is_file() and stamp.read_text() == _stamp_text()


def missing_reason() -> Optional[str]:
    """Why the peer cannot run here, or ``None`` when it can."""
    if not _sources_present():
        return f"vLLM {VLLM_VERSION} sources not found in {sources_dir()}: run make vllm-peer"
    if sys.version_info < (3, 11):
        return f"the vLLM {VLLM_VERSION} sources need Python >= 3.11 (this is {sys.version.split()[0]})"
    return None


def fetch(wheel: Optional[str] = None) -> Path:
    """Unpack :data:`SOURCES` from the vLLM wheel into :func:`sources_dir`, downloading the wheel
    from PyPI (``pip download vllm==0.33.0 --no-deps``) unless ``wheel`` names one on disk. Does
    nothing when they are already there; the folder appears whole or not at all."""
    target = sources_dir()
    if _sources_present():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".vllm-fetch-") as tmp:
        if wheel is None:
            subprocess.run(
                [*_PIP_DOWNLOAD, "--dest", tmp],
                check=True,
            )
            wheels = sorted(Path(tmp).glob(f"vllm-{VLLM_VERSION}-*.whl"))
            if not wheels:
                raise FileNotFoundError(f"pip download left no vllm {VLLM_VERSION} wheel in {tmp}")
            wheel = str(wheels[0])
        if f"vllm-{VLLM_VERSION}-" not in Path(wheel).name:
            raise ArgumentError(f"wheel={wheel!r} is not accepted: it must be a vllm-{VLLM_VERSION} wheel")
        staged = Path(tmp) / "sources"
        with zipfile.ZipFile(wheel) as archive:
            for name in SOURCES:
                out = staged / name
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_bytes(archive.read(name))
        (staged / _STAMP).write_text(_stamp_text())
        if target.exists():
            shutil.rmtree(target)
        os.replace(staged, target)
    return target


# --------------------------------------------------------------------------- placeholders


class _PlaceholderType(type):
    """The type of placeholder classes: reading any attribute of one gives another placeholder
    class, indexing it gives itself (``Foo[int]`` in annotations), it iterates as empty, and it
    is falsy."""

    def __getattr__(cls, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return _placeholder(f"{cls.__qualname__}.{name}", cls.__module__)

    def __getitem__(cls, item: Any) -> Any:
        return cls

    def __iter__(cls) -> Iterator[Any]:  # else iter() would index it 0, 1, 2... forever
        return iter(())

    def __bool__(cls) -> bool:
        return False


class _Placeholder(metaclass=_PlaceholderType):
    """An instance of a placeholder class: takes any arguments, attribute or call (giving
    itself back), iterates as empty, works as a context manager, and is falsy."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return self

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self

    def __iter__(self) -> Iterator[Any]:
        return iter(())

    def __bool__(self) -> bool:
        return False

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: Any) -> None:
        return None


def _placeholder(qualname: str, module: str) -> type:
    return _PlaceholderType(
        qualname.rsplit(".", 1)[-1], (_Placeholder,), {"__qualname__": qualname, "__module__": module}
    )


class _PlaceholderModule(types.ModuleType):
    """A module left out: each name read from it is a placeholder class (made once)."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        value = _placeholder(name, self.__name__)
        setattr(self, name, value)
        return value


class _NoGrammar:
    @staticmethod
    def from_sampling_params(sampling_params: Any) -> None:
        return None


_STAND_INS: dict[str, dict[str, Any]] = {
    # Request.__init__ reads the prompt's length through it.
    "vllm.utils": {"length_from_prompt_token_ids_or_embeds": lambda token_ids, embeds: len(token_ids)},
    # Read-only views of a request's token lists: check_stop reads the last output token.
    "vllm.v1.utils": {
        "ConstantList": lambda items: items,
        "record_function_or_nullcontext": lambda name: contextlib.nullcontext(),
    },
    # No request asks for structured output: it has no grammar to wait for.
    "vllm.v1.structured_output.request": {"StructuredOutputRequest": _NoGrammar},
}
"""Working stand-ins for the few left-out names the scheduler's path really uses."""


class _Finder(importlib.abc.MetaPathFinder):
    """Serves the real modules from the sources folder, and placeholders for everything else in
    ``vllm`` and for :data:`_THIRD_PARTY`."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.real = {name[: -len(".py")].replace("/", "."): root / name for name in SOURCES}

    def find_spec(
        self, fullname: str, path: Any = None, target: Any = None
    ) -> Optional[importlib.machinery.ModuleSpec]:
        if fullname in _PACKAGES:
            return importlib.machinery.ModuleSpec(fullname, _PackageLoader(self.root), is_package=True)
        if fullname in self.real:
            return importlib.util.spec_from_file_location(fullname, self.real[fullname])
        if fullname.split(".")[0] in ("vllm", *_THIRD_PARTY):
            return importlib.machinery.ModuleSpec(fullname, _PlaceholderLoader(), is_package=True)
        return None


class _PackageLoader(importlib.abc.Loader):
    def __init__(self, root: Path) -> None:
        self.root = root

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        module = types.ModuleType(spec.name)
        module.__path__ = [str(self.root.joinpath(*spec.name.split(".")))]
        module.__dict__.update(_STAND_INS.get(spec.name, {}))
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        pass


class _PlaceholderLoader(importlib.abc.Loader):
    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        module = _PlaceholderModule(spec.name)
        module.__path__ = []
        module.__dict__.update(_STAND_INS.get(spec.name, {}))
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        pass


def _ours(name: str) -> bool:
    return name.split(".")[0] in ("vllm", *_THIRD_PARTY)


class _Vllm:
    """The loaded vLLM modules, kept aside and swapped into ``sys.modules`` only while in use."""

    def __init__(self) -> None:
        reason = missing_reason()
        if not _sources_present():
            raise FileNotFoundError(reason)
        if reason is not None:
            raise RuntimeError(reason)
        self.finder = _Finder(sources_dir())
        self.modules: dict[str, types.ModuleType] = {}
        with self.active():
            from vllm.utils.hashing import sha256  # type: ignore[import-not-found]
            from vllm.v1 import kv_cache_interface, request  # type: ignore[import-not-found]
            from vllm.v1.core import kv_cache_utils  # type: ignore[import-not-found]
            from vllm.v1.core.sched import scheduler  # type: ignore[import-not-found]

            kv_cache_utils.init_none_hash(sha256)
        self.sha256 = sha256
        self.kv_cache_utils = kv_cache_utils
        self.scheduler = scheduler
        self.kv_cache_interface = kv_cache_interface
        self.request = request

    @contextlib.contextmanager
    def active(self) -> Iterator[None]:
        """Put the vLLM modules (and the placeholders) in ``sys.modules`` for the duration."""
        before = {name: module for name, module in sys.modules.items() if _ours(name)}
        for name in before:
            del sys.modules[name]
        sys.modules.update(self.modules)
        sys.meta_path.insert(0, self.finder)
        try:
            yield
        finally:
            sys.meta_path.remove(self.finder)
            for name in [name for name in sys.modules if _ours(name)]:
                self.modules[name] = sys.modules.pop(name)
            sys.modules.update(before)


_loaded: dict[Path, _Vllm] = {}


def _vllm() -> _Vllm:
    """The vLLM modules from :func:`sources_dir`, loaded once."""
    folder = sources_dir()
    if folder not in _loaded:
        _loaded[folder] = _Vllm()
    return _loaded[folder]


class _Namespace:
    """A stand-in for one of vLLM's config objects: only the attributes given; reading any
    other is an error, so a scheduler that reads a setting we did not model fails loudly."""

    def __init__(self, label: str, **attributes: Any) -> None:
        self.__dict__["_label"] = label
        self.__dict__.update(attributes)

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(f"the vLLM peer does not model {self._label}.{name}")


def _scheduler(v: _Vllm, config: EngineConfig) -> Any:
    """vLLM's Scheduler for a one-group full-attention model with this configuration, set up
    as ``EngineCore`` sets it up for synchronous scheduling, no speculative decoding, no KV
    connector and no statistics."""
    scheduler_config = _Namespace(
        "scheduler_config",
        max_num_seqs=config.max_num_seqs,
        max_num_active_seqs=None,
        max_num_batched_tokens=config.max_num_batched_tokens,
        max_num_scheduled_tokens=None,
        long_prefill_token_threshold=config.long_prefill_token_threshold,
        long_prefill_token_threshold_adaptive=False,
        enable_chunked_prefill=config.enable_chunked_prefill,
        policy=config.policy,
        watermark=config.watermark,
        scheduler_reserve_full_isl=config.scheduler_reserve_full_isl,
        prefill_schedule_interval=1,
    )
    vllm_config = _Namespace(
        "vllm_config",
        scheduler_config=scheduler_config,
        cache_config=_Namespace(
            "cache_config",
            num_gpu_blocks=config.num_blocks,
            block_size=config.block_size,
            enable_prefix_caching=config.enable_prefix_caching,
            enable_mamba_shared_prefix_checkpoint=False,
            mamba_cache_mode="none",
        ),
        model_config=_Namespace(
            "model_config",
            max_model_len=config.max_model_len,
            runner_type="generate",
            is_diffusion=False,
            is_encoder_decoder=False,
            uses_mrope=False,
            supports_multimodal_inputs=False,
            return_sampling_mask=False,
        ),
        parallel_config=_Namespace(
            "parallel_config",
            data_parallel_index=0,
            data_parallel_size=1,
            decode_context_parallel_size=1,
            prefill_context_parallel_size=1,
            pipeline_parallel_size=1,
        ),
        observability_config=_Namespace(
            "observability_config",
            per_request_spec_decode_metrics="none",
            kv_cache_metrics=False,
            enable_mfu_metrics=False,
            enable_logging_iteration_details=False,
        ),
        ec_manager_config=_Namespace("ec_manager_config", get_encoder_cache_manager_obj=lambda: None),
        aux_output_config=_Namespace("aux_output_config", enabled=False),
        lora_config=None,
        kv_events_config=None,
        kv_transfer_config=None,
        ec_transfer_config=None,
        speculative_config=None,
        is_mm_encoder_only=False,
        num_speculative_tokens=0,
        num_lookahead_tokens=0,
        num_prefill_lookahead_tokens=0,
        num_hash_lookahead_tokens=0,
        max_in_flight_tokens=None,
        max_concurrent_batches=1,
        use_v2_model_runner=False,
    )
    kvi = v.kv_cache_interface
    spec = kvi.FullAttentionSpec(block_size=config.block_size, num_kv_heads=1, head_size=1, dtype=None)
    kv_cache_config = kvi.KVCacheConfig(
        num_blocks=config.num_blocks, kv_cache_tensors=[], kv_cache_groups=[kvi.KVCacheGroupSpec(["layers"], spec)]
    )
    grammars = _Namespace("structured_output_manager", accept_tokens=lambda request, token_ids: True)
    return v.scheduler.Scheduler(vllm_config, kv_cache_config, grammars, block_size=config.block_size)


def _private_token(index: int, position: int) -> int:
    """A token id no other request and position has (all content keys are >= 0)."""
    return -(1 + (index << 32) + position)


def _prompt_tokens(index: int, prompt_len: int, keys: Sequence[int], block_size: int) -> list[int]:
    tokens: list[int] = []
    for key in keys:
        tokens.append(key)
        tokens.extend(range(1, block_size))
    tokens.extend(_private_token(index, position) for position in range(len(tokens), prompt_len))
    return tokens


def run(requests: Requests, config: EngineConfig, step_time: StepTimeModel) -> EngineRun:
    """Serve ``requests`` with vLLM's own scheduler on osbench's clock; the result is what
    :func:`osbench.serve.reference.run` returns with ``record=True``.

    Raises ``FileNotFoundError`` when the vLLM sources are absent (``make vllm-peer``)."""
    priority = check_requests(requests, config)
    v = _vllm()
    block_size = config.block_size
    keys, offsets = requests.prompt_block_keys(block_size)
    arrival = requests.arrival.tolist()
    n = len(arrival)
    recorder = Recorder(n, record=True)
    with v.active():
        scheduler = _scheduler(v, config)
        pool = scheduler.kv_cache_manager.block_pool
        hasher = (
            v.kv_cache_utils.get_request_block_hasher(block_size, v.sha256) if config.enable_prefix_caching else None
        )
        preempted: list[Any] = []
        preempt = scheduler._preempt_request

        def logged_preempt(request: Any, *args: Any, **kwargs: Any) -> None:
            preempted.append(request)
            preempt(request, *args, **kwargs)

        scheduler._preempt_request = logged_preempt  # to learn the order of preemptions
        index_of: dict[str, int] = {}
        produced = [0] * n
        now = 0.0
        next_arrival = 0
        num_finished = 0
        while num_finished < n:
            while next_arrival < n and arrival[next_arrival] <= now:
                i = next_arrival
                own_keys = keys[offsets[i] : offsets[i + 1]].tolist()
                sampling = _Namespace(
                    "sampling_params",
                    max_tokens=int(requests.output_len[i]),
                    min_tokens=0,
                    eos_token_id=None,
                    stop_token_ids=None,
                    repetition_detection=None,
                    skip_reading_prefix_cache=None,
                    num_logprobs=None,
                    extra_args=None,
                )
                request_id = f"{i:012d}"  # ids order as indices: they break priority ties
                request = v.request.Request(
                    request_id,
                    _prompt_tokens(i, int(requests.prompt_len[i]), own_keys, block_size),
                    sampling,
                    None,
                    arrival_time=arrival[i],
                    priority=int(priority[i]),
                    block_hasher=hasher,
                )
                index_of[request_id] = i
                scheduler.add_request(request)
                next_arrival += 1
            if scheduler.get_num_unfinished_requests() == 0:
                now = arrival[next_arrival]
                continue
            running_before = {r.request_id for r in scheduler.running}
            preempted.clear()
            output = scheduler.schedule()
            num_scheduled = output.num_scheduled_tokens
            work = []
            sampled = []
            for request_id, tokens in num_scheduled.items():
                request = scheduler.requests[request_id]
                cached = request.num_computed_tokens - tokens
                work.append((tokens, cached, request.num_tokens - cached))
                if request.num_computed_tokens >= request.num_tokens:  # the model samples a token
                    sampled.append([_private_token(index_of[request_id], request.num_tokens)])
                else:
                    sampled.append([])
            admitted = [
                (index_of[rid], scheduler.requests[rid].num_computed_tokens - tokens)
                for rid, tokens in num_scheduled.items()
                if rid not in running_before
            ]
            batch = batch_of(work)
            free_blocks = pool.get_num_free_blocks()
            num_waiting = len(scheduler.waiting)
            duration = step_duration(step_time, batch)
            end = now + duration
            ids = list(num_scheduled)
            model_output = _Namespace(
                "model_runner_output",
                req_ids=ids,
                req_id_to_index={rid: k for k, rid in enumerate(ids)},
                sampled_token_ids=sampled,
                logprobs=None,
                prompt_logprobs_dict={},
                prompt_token_id_logprobs_dict={},
                pooler_output=[],
                num_nans_in_logits=None,
                kv_connector_output=None,
                ec_connector_output=None,
                cudagraph_stats=None,
                aux_output_connector_output=None,
            )
            scheduler.update_from_output(output, model_output)
            for rid, tokens_out in zip(ids, sampled):
                if tokens_out:
                    i = index_of[rid]
                    produced[i] += 1
                    done = rid not in scheduler.requests  # a finished request is dropped at once
                    recorder.token(i, end, produced[i] == 1, done)
                    num_finished += done
            recorder.step(
                now,
                duration,
                batch,
                [(index_of[rid], tokens) for rid, tokens in num_scheduled.items()],
                [index_of[r.request_id] for r in preempted],
                admitted,
                num_waiting,
                config.usable_blocks - free_blocks,
                free_blocks,
                len(pool.cached_block_hash_to_block),
            )
            now = end
    return recorder.result()


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m osbench.serve.vllm_peer", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    get = sub.add_parser("fetch", help=f"unpack the vLLM {VLLM_VERSION} sources the peer runs into {sources_dir()}")
    get.add_argument("--wheel", help="a vllm wheel already on disk (else pip downloads it)")
    args = parser.parse_args(argv)
    print(fetch(args.wheel))
    return 0


if __name__ == "__main__":
    sys.exit(main())
