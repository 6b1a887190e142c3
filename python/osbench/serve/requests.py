"""Requests for the serving engine: arrival times, prompt and output lengths, prompt content.

A request's prompt content is optional: ``blocks`` gives one content id per ``source_block``
tokens of the prompt (equal ids mean equal content, e.g. Mooncake's prefix-chained
``hash_ids``), so that requests sharing a prefix share KV blocks in the engine's prefix
cache. Without it every prompt is unique.

Where requests come from: :meth:`Requests.read` (the Azure and Mooncake traces, by path or
dataset name; :mod:`osbench.serve.readers`) and the generators :meth:`Requests.poisson`,
:meth:`Requests.gamma` and :meth:`Requests.conversations` (:mod:`osbench.serve.workloads`).
"""

from __future__ import annotations

import inspect
import math
import numbers
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Optional, Union

import numpy as np

from osbench import _checks, _steps
from osbench._record import Record
from osbench.errors import ArgumentError, ArgumentTypeError, TraceFileError
from osbench.serve import readers, workloads
from osbench.serve.columns import MAX_TOKENS, Columns
from osbench.serve.hashing import mix64 as mix64
from osbench.serve.hashing import mix64_array as mix64_array

if TYPE_CHECKING:  # typing.ParamSpec is Python 3.10's; the annotations are never evaluated
    from typing import ParamSpec

    _P = ParamSpec("_P")

MAX_BLOCK = 2**31 - 1
"""The largest ``source_block`` and ``block_size`` accepted, in tokens."""

_NO_CONTENT = 1 << 63  # tags the keys of prompts without content, apart from the content keys


# ---------------------------------------------------------------------------- argument checks


class _RequestRefused(ArgumentError):
    """A check of one request's values failed; ``index`` is the request's, so that a reader
    can say where its file has it."""

    def __init__(self, message: str, index: int) -> None:
        super().__init__(message)
        self.index = index


def _first_bad(name: str, arr: np.ndarray, bad: np.ndarray, accepted: str) -> ArgumentError:
    """The refusal of the first ``bad`` entry of a per-request array."""
    i = int(np.argmax(bad))
    return _RequestRefused(f"{name}[{i}]={arr[i].item()!r} is not accepted: {name} must hold {accepted}", i)


def _lengths(name: str, value: Any, n: Optional[int]) -> np.ndarray:
    """Token counts: integers in [1, MAX_TOKENS], one per request."""
    arr = _checks.one_d(name, value)
    if arr.size and (arr.dtype.kind not in "iu" or arr.dtype == np.bool_):
        raise ArgumentTypeError(f"{name} is not accepted: it must hold integers (token counts), got dtype {arr.dtype}")
    if n is not None and len(arr) != n:
        raise ArgumentError(f"{name} is not accepted: it has {len(arr)} entries, one per request is {n}")
    if arr.size:
        bad = (arr < 1) | (arr > MAX_TOKENS)
        if bad.any():
            raise _first_bad(name, arr, bad, f"integers from 1 to {MAX_TOKENS} (tokens)")
    return np.array(arr, dtype=np.int64)


def _arrivals(value: Any) -> np.ndarray:
    """Seconds: finite, >= 0, non-decreasing."""
    arr = _checks.one_d("arrival", value)
    if arr.size and (arr.dtype.kind not in "iuf" or arr.dtype == np.bool_):
        raise ArgumentTypeError(f"arrival is not accepted: it must hold numbers (seconds), got dtype {arr.dtype}")
    arr = np.array(arr, dtype=np.float64)
    bad = ~np.isfinite(arr) | (arr < 0)
    if bad.any():
        raise _first_bad("arrival", arr, bad, "finite numbers >= 0 (seconds)")
    if len(arr) > 1:
        down = arr[1:] < arr[:-1]
        if down.any():
            i = int(np.argmax(down)) + 1
            raise ArgumentError(
                f"arrival[{i}]={arr[i].item()!r} is not accepted: arrivals must be non-decreasing "
                f"(arrival[{i - 1}]={arr[i - 1].item()!r}); requests come in arrival order"
            )
    return arr


def _priorities(value: Any, n: int) -> np.ndarray:
    arr = _checks.one_d("priority", value)
    if arr.size and (arr.dtype.kind not in "iu" or arr.dtype == np.bool_):
        raise ArgumentTypeError(f"priority is not accepted: it must hold integers, got dtype {arr.dtype}")
    if len(arr) != n:
        raise ArgumentError(f"priority is not accepted: it has {len(arr)} entries, one per request is {n}")
    if arr.dtype == np.uint64 and arr.size and int(arr.max()) > np.iinfo(np.int64).max:
        raise _first_bad("priority", arr, arr > np.iinfo(np.int64).max, "integers within int64")
    return np.array(arr, dtype=np.int64)


def _predictions(value: Any, n: int) -> np.ndarray:
    name = "predicted_output_len"
    arr = _checks.one_d(name, value)
    if arr.size and (arr.dtype.kind not in "iu" or arr.dtype == np.bool_):
        raise ArgumentTypeError(f"{name} is not accepted: it must hold integers (tokens), got dtype {arr.dtype}")
    if len(arr) != n:
        raise ArgumentError(f"{name} is not accepted: it has {len(arr)} entries, one per request is {n}")
    bad = (arr < 0) | (arr > 2**62)
    if bad.any():
        raise _first_bad(name, arr, bad, "integers from 0 to 2**62 (tokens)")
    return np.array(arr, dtype=np.int64)


def _ids(name: str, value: Any) -> np.ndarray:
    """Content ids: integers within int64."""
    arr = _checks.one_d(name, value)
    if arr.size == 0:
        return np.zeros(0, dtype=np.int64)
    if arr.dtype.kind not in "iu" or arr.dtype == np.bool_:
        what = "integers outside int64" if arr.dtype == object else f"dtype {arr.dtype}"
        raise ArgumentTypeError(f"{name} is not accepted: content ids must be integers within int64, got {what}")
    if arr.dtype == np.uint64 and int(arr.max()) > np.iinfo(np.int64).max:
        i = int(np.argmax(arr > np.iinfo(np.int64).max))  # a position among the ids, not a request
        raise ArgumentError(f"{name}[{i}]={arr[i].item()!r} is not accepted: {name} must hold integers within int64")
    return np.asarray(arr, dtype=np.int64)


def _readonly(arr: np.ndarray) -> np.ndarray:
    arr.setflags(write=False)
    return arr


# ---------------------------------------------------------------------------- requests


@dataclass(frozen=True)
class RequestsSummary(Record):
    """Figures of a set of requests (:meth:`Requests.summary`)."""

    name: str
    requests: int
    #: seconds from the first arrival to the last
    duration: float
    #: arrivals per second: (requests - 1) / duration (nan below two requests, inf when they
    #: all arrive at once)
    rate: float
    mean_prompt_len: float
    mean_output_len: float
    p50_prompt_len: float
    p99_prompt_len: float
    max_prompt_len: int
    p50_output_len: float
    p99_output_len: float
    max_output_len: int
    prompt_tokens: int
    output_tokens: int
    #: whether prompt content is given (prefix caching can hit), and its granularity
    has_blocks: bool
    source_block: int


def _generator(make: Callable[_P, Columns]) -> classmethod[Requests, _P, Requests]:
    """A generator of :mod:`osbench.serve.workloads` as a constructor of :class:`Requests`
    (``Requests.poisson``...): the generator's signature, defaults and docstring, its columns
    checked and wrapped (without copying their content: :meth:`Requests._adopt`)."""

    def generate(cls: type[Requests], /, *args: _P.args, **kwargs: _P.kwargs) -> Requests:
        return cls._adopt(make(*args, **kwargs))

    generate.__name__ = make.__name__
    generate.__qualname__ = f"Requests.{make.__name__}"
    generate.__doc__ = make.__doc__
    shown = inspect.signature(make)
    cls = inspect.Parameter("cls", inspect.Parameter.POSITIONAL_ONLY)
    generate.__signature__ = shown.replace(  # type: ignore[attr-defined]
        parameters=[cls, *shown.parameters.values()], return_annotation="Requests"
    )
    return classmethod(generate)


class Requests:
    """The requests of one run, in arrival order.

    ``arrival``: seconds (finite, >= 0, non-decreasing). ``prompt_len``, ``output_len``:
    tokens (integers from 1 to ``MAX_TOKENS``). ``blocks``: optional prompt content, one
    sequence of integer ids (within int64) per request, one id per ``source_block`` tokens:
    ``ceil(prompt_len / source_block)`` ids, the last one covering a partial block when the
    prompt is not a whole number of them (Mooncake's ``hash_ids`` with ``source_block=512``).
    ``block_offsets``: give ``blocks`` packed instead, as one flat id array where request
    ``i``'s ids are ``blocks[block_offsets[i]:block_offsets[i + 1]]``. ``priority``: optional
    integers, smaller is more urgent (vLLM's convention), used by ``policy="priority"``.
    ``predicted_output_len``: optional predicted output lengths (integers >= 0, one per
    request), used by ``policy="sjf"`` or ``"srpt"`` with ``prediction="given"``.

    Requests are immutable (their arrays are read-only); :meth:`at_rate` and slicing
    (``requests[:1000]``, ``requests[mask]``) make new ones.
    """

    def __init__(
        self,
        arrival: Any,
        prompt_len: Any,
        output_len: Any,
        blocks: Any = None,
        priority: Any = None,
        source_block: int = 512,
        name: str = "",
        *,
        block_offsets: Any = None,
        predicted_output_len: Any = None,
    ) -> None:
        self.arrival: np.ndarray = _readonly(_arrivals(arrival))
        n = len(self.arrival)
        self.prompt_len: np.ndarray = _readonly(_lengths("prompt_len", prompt_len, n))
        self.output_len: np.ndarray = _readonly(_lengths("output_len", output_len, n))
        self.source_block = _checks.positive_int("source_block", source_block, maximum=MAX_BLOCK)
        self.priority: Optional[np.ndarray] = None if priority is None else _readonly(_priorities(priority, n))
        self.predicted_output_len: Optional[np.ndarray] = (
            None if predicted_output_len is None else _readonly(_predictions(predicted_output_len, n))
        )
        if not isinstance(name, str):
            raise ArgumentTypeError(f"name={name!r} is not accepted: it must be a str")
        self.name = name
        self.block_ids: Optional[np.ndarray] = None
        """The prompt content packed: request ``i``'s ids are
        ``block_ids[block_offsets[i]:block_offsets[i + 1]]`` (None without content)."""
        self.block_offsets: Optional[np.ndarray] = None
        if blocks is not None:
            ids, offsets = self._pack_blocks(blocks, block_offsets, n)
            self.block_ids, self.block_offsets = _readonly(ids), _readonly(offsets)
        elif block_offsets is not None:
            raise ArgumentError("block_offsets is not accepted without blocks: it says where each request's ids start")
        self._blocks: Optional[list[np.ndarray]] = None

    def _pack_blocks(self, blocks: Any, block_offsets: Any, n: int, copy: bool = True) -> tuple[np.ndarray, np.ndarray]:
        if block_offsets is None:
            if isinstance(blocks, (str, bytes)) or not hasattr(blocks, "__len__"):
                raise ArgumentTypeError(
                    "blocks is not accepted: it must be a sequence of id sequences, one per request"
                )
            if len(blocks) != n:
                raise ArgumentError(f"blocks is not accepted: it has {len(blocks)} sequences, one per request is {n}")
            parts = [_ids(f"blocks[{i}]", b) for i, b in enumerate(blocks)]
            counts = np.array([len(p) for p in parts], dtype=np.int64)
            ids = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
            offsets = np.zeros(n + 1, dtype=np.int64)
            np.cumsum(counts, out=offsets[1:])
        else:
            ids = _ids("blocks", blocks)  # int64
            if copy:
                ids = np.array(ids)
            offsets = _checks.one_d("block_offsets", block_offsets)
            if offsets.size and (offsets.dtype.kind not in "iu" or offsets.dtype == np.bool_):
                raise ArgumentTypeError(
                    f"block_offsets is not accepted: it must hold integers, got dtype {offsets.dtype}"
                )
            offsets = np.array(offsets, dtype=np.int64)
            if len(offsets) != n + 1 or offsets[0] != 0 or offsets[-1] != len(ids) or (np.diff(offsets) < 0).any():
                raise ArgumentError(
                    f"block_offsets is not accepted: it must be {n + 1} non-decreasing offsets from 0 to "
                    f"len(blocks)={len(ids)}"
                )
            counts = np.diff(offsets)
        expected = -(-self.prompt_len // self.source_block)  # ceil division
        wrong = counts != expected
        if wrong.any():
            i = int(np.argmax(wrong))
            raise _RequestRefused(
                f"blocks[{i}] is not accepted: it has {int(counts[i])} ids, but prompt_len[{i}]={int(self.prompt_len[i])} "
                f"needs ceil({int(self.prompt_len[i])} / source_block={self.source_block}) = {int(expected[i])}",
                i,
            )
        return ids, offsets

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Unpickled (in a worker): every array aligned and read-only again. Pickle's out-of-band
        buffers, as Dask sends them, may land at any offset of a frame, and the native engine
        reads arrays in place, which needs them aligned."""
        for name, value in state.items():
            if isinstance(value, np.ndarray):
                state[name] = _readonly(np.require(value, requirements=["C", "A"]))
        state["_blocks"] = None  # views of the ids it had, rebuilt on demand
        self.__dict__.update(state)

    # ------------------------------------------------------------------ sequence protocol

    def __len__(self) -> int:
        return len(self.arrival)

    def __repr__(self) -> str:
        label = f" {self.name!r}" if self.name else ""
        content = f", content in {self.source_block}-token blocks" if self.block_ids is not None else ""
        return f"<Requests{label}: {len(self)} requests{content}>"

    @property
    def blocks(self) -> Optional[list[np.ndarray]]:
        """The prompt content, one read-only id array per request (None without content)."""
        if self.block_ids is None or self.block_offsets is None:
            return None
        if self._blocks is None:
            self._blocks = np.split(self.block_ids, self.block_offsets[1:-1]) if len(self) else []
        return self._blocks

    def __getitem__(self, index: Any) -> Requests:
        """The requests at ``index``: a slice (``requests[:1000]``), a boolean mask, or an
        array of indices in increasing order (arrivals must stay in order). Times are kept as
        they are (not shifted to start at 0)."""
        n = len(self)
        if isinstance(index, slice):
            rows = np.arange(n)[index]
        elif isinstance(index, numbers.Integral) and not isinstance(index, bool):
            raise ArgumentTypeError(
                f"index={index!r} is not accepted: Requests are indexed by a slice, a mask or an index array "
                "(requests[i:i+1] is the one request i); read single values from the arrays (requests.arrival[i])"
            )
        else:
            rows = np.asarray(index)
            if rows.dtype == np.bool_:
                if rows.shape != (n,):
                    raise ArgumentError(f"index is not accepted: a mask needs {n} entries, got shape {rows.shape}")
                rows = np.flatnonzero(rows)
            elif rows.ndim != 1 or (rows.size and rows.dtype.kind not in "iu"):
                raise ArgumentTypeError(
                    f"index is not accepted: use a slice, a boolean mask or integer indices, got {index!r:.60}"
                )
            rows = rows.astype(np.int64)
            if rows.size and (rows.min() < -n or rows.max() >= n):
                raise IndexError(f"index is not accepted: indices must be in [-{n}, {n}) for {n} requests")
            rows = np.where(rows < 0, rows + n, rows)
        return self.received(rows, self.arrival[rows])

    def received(self, rows: np.ndarray, arrival: np.ndarray) -> Requests:
        """Requests ``rows`` (int indices) in that order, reaching an engine at ``arrival``
        (non-decreasing): what an engine that receives them in another order than theirs sees
        (the decode instance of a disaggregated deployment)."""
        r = Requests(
            arrival,
            self.prompt_len[rows],
            self.output_len[rows],
            priority=None if self.priority is None else self.priority[rows],
            source_block=self.source_block,
            name=self.name,
            predicted_output_len=None if self.predicted_output_len is None else self.predicted_output_len[rows],
        )
        if self.block_ids is not None and self.block_offsets is not None:
            r._set_content(*_gather(self.block_ids, self.block_offsets, rows))
        return r

    # ------------------------------------------------------------------ figures

    @property
    def duration(self) -> float:
        """Seconds from the first arrival to the last (0 for fewer than two requests)."""
        return float(self.arrival[-1] - self.arrival[0]) if len(self) > 1 else 0.0

    @property
    def rate(self) -> float:
        """Mean arrival rate, requests per second: ``(len - 1) / duration`` (the number of
        gaps over their total length; nan below two requests, inf if all arrive at once)."""
        if len(self) < 2:
            return math.nan
        span = self.duration
        return (len(self) - 1) / span if span > 0 else math.inf

    def summary(self) -> RequestsSummary:
        """Count, duration, rate, and the prompt and output lengths (mean, p50, p99, max)."""
        n = len(self)
        has_blocks = self.block_ids is not None
        if n == 0:
            figures: dict[str, Any] = dict.fromkeys(RequestsSummary.__dataclass_fields__, math.nan)
            figures.update(name=self.name, requests=0, duration=0.0, max_prompt_len=0, max_output_len=0)
            figures.update(prompt_tokens=0, output_tokens=0, has_blocks=has_blocks, source_block=self.source_block)
            return RequestsSummary(**figures)
        p50_p, p99_p = np.percentile(self.prompt_len, [50, 99])
        p50_o, p99_o = np.percentile(self.output_len, [50, 99])
        return RequestsSummary(
            name=self.name,
            requests=n,
            duration=self.duration,
            rate=self.rate,
            mean_prompt_len=float(self.prompt_len.mean()),
            mean_output_len=float(self.output_len.mean()),
            p50_prompt_len=float(p50_p),
            p99_prompt_len=float(p99_p),
            max_prompt_len=int(self.prompt_len.max()),
            p50_output_len=float(p50_o),
            p99_output_len=float(p99_o),
            max_output_len=int(self.output_len.max()),
            prompt_tokens=int(self.prompt_len.sum()),
            output_tokens=int(self.output_len.sum()),
            has_blocks=has_blocks,
            source_block=self.source_block,
        )

    def to_dict(self) -> dict[str, Any]:
        """The summary figures as a dict (the arrays stay in the object)."""
        return self.summary().to_dict()

    # ------------------------------------------------------------------ transformations

    def at_rate(self, qps: float) -> Requests:
        """The same requests with arrivals rescaled (about the first one, which moves to 0)
        so that the mean rate (:attr:`rate`) is ``qps`` requests per second: the arrival
        pattern, burstiness included, at another load."""
        qps = _checks.positive_float("qps", qps)
        if len(self) < 2 or self.duration == 0:
            raise ArgumentError(
                f"qps={qps!r} is not accepted for these requests: rescaling needs at least two requests "
                f"with different arrival times (got {len(self)} spanning {self.duration} s)"
            )
        scale = self.rate / qps
        return self.arriving((self.arrival - self.arrival[0]) * scale)

    def arriving(self, arrival: Any) -> Requests:
        """The same requests arriving at ``arrival`` instead (checked as the constructor checks
        it), their other arrays and content shared, not copied."""
        r = Requests(
            arrival,
            self.prompt_len,
            self.output_len,
            priority=self.priority,
            source_block=self.source_block,
            name=self.name,
            predicted_output_len=self.predicted_output_len,
        )
        if self.block_ids is not None:
            r._set_content(self.block_ids, self.block_offsets)  # read-only: shared, not copied
        return r

    # ------------------------------------------------------------------ prompt content

    def prompt_block_keys(self, block_size: int) -> tuple[np.ndarray, np.ndarray]:
        """The content key of every full ``block_size``-token block of each prompt:
        ``(keys, offsets)``, ``keys`` uint64, request ``i``'s keys being
        ``keys[offsets[i]:offsets[i + 1]]`` (``prompt_len[i] // block_size`` of them; a
        trailing partial block has none, as it is never cached).

        The property the engine relies on: two blocks (of any requests, at any positions)
        have equal keys when their tokens are equal as far as ``blocks`` tells, that is,
        when they cover the same token ranges of source blocks with the same ids, in the
        same order; an engine block spanning several source blocks combines all of them
        (and differs when any of them differs). Different content gives different keys
        (up to 64-bit hash collisions). The keys are not chained: the engine chains them
        along the prompt, so a hit also needs the whole prefix before it to match.
        Without ``blocks`` every key is unique to its request and position.

        Deterministic (the same content gives the same keys in every run) and vectorised;
        the definition, for block ``k`` covering tokens ``[k*B, (k+1)*B)``, with
        segments ``j = 0, 1, ...`` over the source blocks ``s`` it meets, each covering
        tokens ``[lo, hi)`` of its source block::

            range(lo, hi, j) = mix64((mix64(lo << 32 | hi) + j) mod 2**64)
            key = mix64(sum over j of mix64(mix64(id[s]) ^ range(lo, hi, j)) mod 2**64)

        and without ``blocks``, ``key = mix64(2**63 ^ (i << 32) ^ k)`` for request ``i`` (its
        index in these requests)."""
        block_size = _checks.positive_int("block_size", block_size, maximum=MAX_BLOCK)
        counts = self.prompt_len // block_size
        offsets = np.zeros(len(self) + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        keys = np.empty(int(offsets[-1]), dtype=np.uint64)
        # Requests in chunks of about _CHUNK blocks keep the temporaries small.
        bounds = np.searchsorted(offsets, np.arange(0, int(offsets[-1]), _CHUNK), side="right") - 1
        starts = np.unique(np.concatenate([bounds, [len(self)]])) if len(self) else np.zeros(1, dtype=np.int64)
        for a, b in zip(starts[:-1], starts[1:]):
            a, b = int(a), int(b)
            out = keys[offsets[a] : offsets[b]]
            if self.block_ids is None or self.block_offsets is None:
                out[:] = _keys_without_content(counts[a:b], a)
            else:
                out[:] = _keys_from_content(
                    counts[a:b], self.block_ids, self.block_offsets[a : b + 1], block_size, self.source_block
                )
        return keys, offsets

    # ------------------------------------------------------------------ sources (thin: the work is elsewhere)

    @classmethod
    def read(cls, source: Union[str, os.PathLike[str]], format: Optional[str] = None) -> Requests:
        """Requests from a trace: a dataset name (``"azure-conv-2023"``, ``"azure-code-2023"``,
        ``"mooncake-conversation"``, ``"mooncake-synthetic"``) or a file path; see
        :func:`osbench.serve.readers.read`. Requests come in arrival order (a stable sort: the
        logs are in order already, and ties keep their file order), arrivals in seconds from
        the first; a request the checks refuse is a :class:`~osbench.errors.TraceFileError`
        naming the file and its line."""
        return cls.of_log(*readers.read(source, format))[0]

    @classmethod
    def of_log(cls, columns: Columns, per_second: float) -> tuple[Requests, np.ndarray]:
        """A log's requests (:func:`osbench.serve.readers.read`: its columns in file order, and
        how many of its time units make a second) in arrival order, checked as :meth:`read`
        checks them, and that order: the file index of each request."""
        n = len(columns.arrival)
        try:
            in_file_order = cls._from(columns._replace(arrival=np.zeros(n)))
        except _RequestRefused as exc:
            if columns.path is None or columns.line is None:
                raise
            raise TraceFileError(f"{columns.path}: line {int(columns.line[exc.index])}: {exc}") from None
        except ArgumentError as exc:
            raise ArgumentError(f"{columns.name}: {exc}") from None
        order = np.argsort(columns.arrival, kind="stable")
        t = np.asarray(columns.arrival)[order]
        r = in_file_order[order]
        arrival = (t - t[0]).astype(np.float64) / per_second if n else np.zeros(0)
        return cls._adopt(  # r's content is read-only: shared, not copied
            Columns(arrival, r.prompt_len, r.output_len, r.block_ids, r.block_offsets, r.source_block, columns.name)
        ), order

    @classmethod
    def _from(cls, c: Columns) -> Requests:
        return cls(
            c.arrival,
            c.prompt_len,
            c.output_len,
            blocks=c.block_ids,
            block_offsets=c.block_offsets,
            source_block=c.source_block,
            name=c.name,
        )

    @classmethod
    def _adopt(cls, c: Columns) -> Requests:
        """:meth:`_from` columns whose content nothing can change (a generator's, or another
        Requests'), without copying it (see :meth:`_set_content`)."""
        if c.block_ids is None or c.block_offsets is None:
            return cls._from(c)
        r = cls._from(c._replace(block_ids=None, block_offsets=None))
        r._set_content(c.block_ids, c.block_offsets)
        return r

    def _set_content(self, ids: np.ndarray, offsets: Any) -> None:
        """Give these requests packed content that nothing can change: arrays only they hold,
        or another Requests' (read-only). The ids, the largest array by far (billions for
        millions of long prompts), are checked but not copied, and become read-only in place."""
        ids, offsets = self._pack_blocks(ids, offsets, len(self), copy=False)
        self.block_ids, self.block_offsets = _readonly(ids), _readonly(offsets)

    poisson = _generator(workloads.poisson)
    gamma = _generator(workloads.gamma)
    conversations = _generator(workloads.conversations)


def _gather(ids: np.ndarray, offsets: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The packed content of requests ``rows`` (``(ids, offsets)``), gathered in steps."""
    starts = offsets[rows]
    out_offsets = _steps.offsets(len(rows), lambda a, b: offsets[rows[a:b] + 1] - starts[a:b])
    out = np.empty(int(out_offsets[-1]), dtype=np.int64)
    for a, b in _steps.groups(out_offsets):
        lo, hi = int(out_offsets[a]), int(out_offsets[b])
        shift = np.repeat(starts[a:b] - out_offsets[a:b], np.diff(out_offsets[a : b + 1]))
        out[lo:hi] = ids[shift + np.arange(lo, hi)]
    return out, out_offsets


# ---------------------------------------------------------------------------- block keys

_CHUNK = 1 << 22
"""Blocks per chunk of :meth:`Requests.prompt_block_keys` (32 MiB per uint64 temporary)."""

_PHASE_TABLE_MAX = 1 << 20
"""Largest table of per-phase range hashes (one entry per block position inside a repeat of
source and engine block boundaries); beyond it the hashes are computed per block."""


def _local_positions(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For items grouped in runs of ``counts``: each item's run index and position in its run."""
    total = int(counts.sum())
    run = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
    starts = np.zeros(len(counts), dtype=np.int64)
    np.cumsum(counts[:-1], out=starts[1:])
    return run, np.arange(total, dtype=np.int64) - starts[run]


def _keys_without_content(counts: np.ndarray, first_request: int) -> np.ndarray:
    request, k = _local_positions(counts)
    x = (request + first_request).astype(np.uint64) << np.uint64(32)
    x ^= k.astype(np.uint64)
    x ^= np.uint64(_NO_CONTENT)
    return mix64_array(x)


def _range_hash(lo: np.ndarray, hi: np.ndarray, j: np.ndarray) -> np.ndarray:
    x = mix64_array((lo.astype(np.uint64) << np.uint64(32)) | hi.astype(np.uint64))
    x += j.astype(np.uint64)
    return mix64_array(x)


def _keys_from_content(
    counts: np.ndarray, ids: np.ndarray, id_offsets: np.ndarray, block_size: int, source_block: int
) -> np.ndarray:
    """Keys of the full blocks of a run of requests (``counts`` blocks each; their ids start at
    ``id_offsets``)."""
    request, k = _local_positions(counts)
    if len(k) == 0:
        return np.zeros(0, dtype=np.uint64)
    start = k * block_size
    first_source = start // source_block
    last_source = (start + block_size - 1) // source_block
    # mix64 of each id once (many engine blocks share a source block), then gathered.
    mixed = mix64_array(ids[id_offsets[0] : id_offsets[-1]].view(np.uint64))
    id_base = id_offsets[:-1][request] - id_offsets[0]
    if int((last_source - first_source).max()) == 0:
        # Every block lies inside one source block: one segment (j = 0) each.
        lo = start - first_source * source_block
        content = mixed[id_base + first_source]
        g = math.gcd(block_size, source_block)
        if source_block // g <= _PHASE_TABLE_MAX:
            # lo is a multiple of g below source_block: hash each possible lo once.
            table_lo = np.arange(0, source_block, g, dtype=np.int64)
            table = _range_hash(table_lo, table_lo + block_size, np.zeros_like(table_lo))
            ranges = table[lo // g]
        else:
            ranges = _range_hash(lo, lo + block_size, np.zeros_like(lo))
        content ^= ranges
        return mix64_array(mix64_array(content))
    # Some blocks span several source blocks: one segment per (block, source block) pair.
    n_segments = last_source - first_source + 1
    block, j = _local_positions(n_segments)
    s = first_source[block] + j
    seg_start = s * source_block
    lo = np.maximum(start[block], seg_start) - seg_start
    hi = np.minimum(start[block] + block_size, seg_start + source_block) - seg_start
    segment = mixed[id_base[block] + s]
    segment ^= _range_hash(lo, hi, j)
    segment = mix64_array(segment)
    first_segment = np.zeros(len(k), dtype=np.int64)
    np.cumsum(n_segments[:-1], out=first_segment[1:])
    return mix64_array(np.add.reduceat(segment, first_segment))
