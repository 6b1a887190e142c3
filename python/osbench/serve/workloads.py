"""Generated requests: Poisson and bursty (gamma) arrivals, lengths from a distribution or a
trace, shared system prompts, multi-turn conversations: the :class:`~osbench.serve.columns.Columns`
behind :meth:`Requests.poisson <osbench.serve.Requests.poisson>`, :meth:`~osbench.serve.Requests.gamma`
and :meth:`~osbench.serve.Requests.conversations`, which check and wrap them.

Every generator takes a ``seed`` and draws from ``numpy.random.default_rng(seed)`` in a fixed
order (said in each docstring), so the same seed gives the same requests. The work goes in
steps of about a million elements (:mod:`osbench._steps`), draws included: numpy fills an array
draw by draw, so an array drawn in steps holds the draws one call would give, and Ctrl-C stops a
generation of any size at once (numpy releases the GIL inside each step). Lengths are given as
an ``int`` (every request the same), a :class:`Lognormal` or an :class:`Empirical` sample of
real lengths (``Empirical(Requests.read("azure-conv-2023").prompt_len)``).

Prompt content (``Requests.blocks``, in ``source_block``-token blocks, 16 by default: vLLM's
block size, so an engine with that block size sees sharing to the token) is given where
prompts share something: a system prompt, or a conversation's history. Ids are allocated so
that equal ids mean equal tokens: each system prompt's full blocks have ids of their own, and
every other block is unique to its request (or, in a conversation, to its place in the
conversation's token stream).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field
from typing import Any, Optional, Union

import numpy as np

from osbench import _checks, _steps
from osbench.errors import ArgumentError, ArgumentTypeError
from osbench.serve.columns import MAX_TOKENS, Columns


@dataclass(frozen=True)
class Lognormal:
    """Token counts from a lognormal distribution with the given ``mean`` (tokens) and
    ``sigma`` (of the underlying normal: 0 gives the mean every time, 1 a long tail), rounded
    to the nearest integer and at least 1. ``max``: clip longer draws to it (a model's
    context length, say); None keeps them."""

    mean: float
    sigma: float
    max: Optional[int] = None

    def __post_init__(self) -> None:
        _checks.positive_float("mean", self.mean)
        if isinstance(self.sigma, bool) or not isinstance(self.sigma, numbers.Real) or not 0 <= self.sigma < math.inf:
            raise ArgumentError(f"sigma={self.sigma!r} is not accepted: it must be a finite number >= 0")
        if self.max is not None:
            _checks.positive_int("max", self.max, maximum=MAX_TOKENS)

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` token counts (int64)."""
        mu = math.log(self.mean) - self.sigma**2 / 2  # so that the lognormal's mean is `mean`
        upper = MAX_TOKENS if self.max is None else self.max
        return _steps.filled(n, np.int64, lambda a, b: np.clip(np.rint(rng.lognormal(mu, self.sigma, b - a)), 1, upper))


@dataclass(frozen=True, eq=False)
class Empirical:
    """Token counts drawn uniformly, with replacement, from ``values`` (lengths seen in a
    trace, e.g. ``Requests.read("mooncake-conversation").output_len``)."""

    values: np.ndarray = field(repr=False)

    def __post_init__(self) -> None:
        arr = np.asarray(self.values)
        if arr.ndim != 1 or arr.size == 0 or arr.dtype.kind not in "iu" or arr.dtype == np.bool_:
            raise ArgumentError(
                f"values is not accepted: it must be a non-empty 1-D array of integer token counts, got {arr.dtype} {arr.shape}"
            )
        if arr.min() < 1 or arr.max() > MAX_TOKENS:
            raise ArgumentError(f"values is not accepted: token counts must be from 1 to {MAX_TOKENS}")
        object.__setattr__(self, "values", np.array(arr, dtype=np.int64))

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` token counts (int64)."""
        values = self.values
        return _steps.filled(n, np.int64, lambda a, b: values[rng.integers(0, len(values), b - a)])


LengthSpec = Union[int, Lognormal, Empirical]
"""A length distribution: an ``int`` (always that many tokens), :class:`Lognormal` or :class:`Empirical`."""


def _draw(name: str, spec: Any, rng: np.random.Generator, n: int) -> np.ndarray:
    if isinstance(spec, (Lognormal, Empirical)):
        return spec.sample(rng, n)
    if isinstance(spec, numbers.Integral) and not isinstance(spec, bool):
        value = _checks.positive_int(name, spec, maximum=MAX_TOKENS)
        return _steps.filled(n, np.int64, lambda a, b: value)
    raise ArgumentTypeError(f"{name}={spec!r} is not accepted: give an int (tokens), a Lognormal or an Empirical")


@dataclass(frozen=True)
class SystemPrompts:
    """A share of the requests (``fraction``) start with one of ``count`` system prompts of
    ``length`` tokens each, chosen uniformly; their KV can be shared through the prefix cache."""

    count: int
    length: int
    fraction: float = 1.0

    def __post_init__(self) -> None:
        _checks.positive_int("count", self.count, maximum=2**31 - 1)
        _checks.positive_int("length", self.length, maximum=MAX_TOKENS)
        _checks.probability("fraction", self.fraction)

    def assign(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """Which system prompt each of ``n`` requests starts with (-1: none)."""
        has = _steps.filled(n, np.bool_, lambda a, b: rng.random(b - a) < self.fraction)
        which = _steps.filled(n, np.int64, lambda a, b: rng.integers(0, self.count, b - a))
        for a, b in _steps.spans(n):
            which[a:b][~has[a:b]] = -1
        return which


def _arithmetic_runs(bases: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """``[b, b+1, ..., b+len-1]`` for each (base, length), concatenated (int64)."""
    total = int(lengths.sum())
    starts = np.zeros(len(lengths), dtype=np.int64)
    np.cumsum(lengths[:-1], out=starts[1:])
    out = np.arange(total, dtype=np.int64)
    out += np.repeat(bases - starts, lengths)
    return out


def _content(
    prompt_len: np.ndarray,
    system: np.ndarray,
    system_prompts: Optional[SystemPrompts],
    stream: Optional[np.ndarray],
    stream_blocks: np.ndarray,
    source_block: int,
    size: tuple[str, int],
) -> tuple[np.ndarray, np.ndarray]:
    """Block ids of each prompt, packed as ``(ids, offsets)``: request ``r`` is a prefix of token
    stream ``stream[r]`` (its conversation; None: stream ``r``, a stream of its own), which
    starts with system prompt ``system[r]`` (-1: none). A system prompt's full blocks have the
    ids ``p * full + b``; the rest of stream ``c`` (``stream_blocks[c]`` blocks at most) has ids
    of its own, after all the system prompts'. ``size``: the argument (name, value) that sets
    how many requests there are, named when their content would not fit in memory."""
    full = system_prompts.length // source_block if system_prompts is not None else 0
    n_system = system_prompts.count if system_prompts is not None else 0
    stream_base = _steps.offsets(len(stream_blocks), lambda a, b: stream_blocks[a:b])
    where = _steps.offsets(len(prompt_len), lambda a, b: -(-prompt_len[a:b] // source_block))
    _checks.affordable(*size, 8.0 * int(where[-1]), "the prompts' content ids")
    ids = np.empty(int(where[-1]), dtype=np.int64)
    for a, b in _steps.groups(where):
        blocks = where[a + 1 : b + 1] - where[a:b]
        sys_ = system[a:b]
        shared = np.where(sys_ >= 0, np.minimum(full, blocks), 0)
        own = stream_base[a:b] if stream is None else stream_base[stream[a:b]]
        # Two runs per request: its system prompt's shared blocks, then its own.
        bases = np.stack([np.maximum(sys_, 0) * full, own + n_system * full], axis=1).ravel()
        lengths = np.stack([shared, blocks - shared], axis=1).ravel()
        ids[where[a] : where[b]] = _arithmetic_runs(bases, lengths)
    return ids, where


def _arrivals(rng: np.random.Generator, n: int, rate: float, cv: Optional[float]) -> np.ndarray:
    """``n`` arrival times from 0: exponential gaps (cv None) or gamma gaps of mean 1/rate."""
    if cv is None:
        scale = 1.0 / rate

        def gaps(k: int) -> np.ndarray:
            return rng.exponential(scale, k)

    else:
        shape = 1.0 / cv**2
        scale = 1.0 / (rate * shape)

        def gaps(k: int) -> np.ndarray:
            return rng.gamma(shape, scale, k)

    arrival = np.zeros(n)
    carry = 0.0
    for a, b in _steps.spans(max(n - 1, 0)):
        carry = _steps.cumsum_from(gaps(b - a), arrival[a + 1 : b + 1], carry)
    return arrival


def _independent(
    n: int,
    rate: float,
    cv: Optional[float],
    prompt_len: Any,
    output_len: Any,
    system_prompts: Optional[SystemPrompts],
    source_block: int,
    seed: Any,
    name: str,
) -> Columns:
    n = _checks.non_negative_int("n", n)
    rate = _checks.positive_float("rate", rate)
    source_block = _checks.positive_int("source_block", source_block, maximum=2**31 - 1)
    if system_prompts is not None and not isinstance(system_prompts, SystemPrompts):
        raise ArgumentTypeError(
            f"system_prompts={system_prompts!r} is not accepted: give a SystemPrompts(count, length, fraction) or None"
        )
    # About six 8-byte columns a request, with the generator's temporaries: refused at once when
    # that cannot fit, rather than failing deep in numpy or exhausting the machine.
    _checks.affordable("n", n, 48.0 * n, "the requests")
    rng = np.random.default_rng(_checks.seed(seed))
    arrival = _arrivals(rng, n, rate, cv)
    prompt = _draw("prompt_len", prompt_len, rng, n)
    output = _draw("output_len", output_len, rng, n)
    if system_prompts is None:
        return Columns(arrival, prompt, output, None, None, source_block, name)
    system = system_prompts.assign(rng, n)
    for a, b in _steps.spans(n):
        prompt[a:b] += np.where(system[a:b] >= 0, system_prompts.length, 0)
    blocks = _steps.filled(n, np.int64, lambda a, b: -(-prompt[a:b] // source_block))
    ids, offsets = _content(prompt, system, system_prompts, None, blocks, source_block, ("n", n))
    return Columns(arrival, prompt, output, ids, offsets, source_block, name)


def poisson(
    n: int,
    rate: float,
    *,
    prompt_len: LengthSpec = 1024,
    output_len: LengthSpec = 128,
    system_prompts: Optional[SystemPrompts] = None,
    source_block: int = 16,
    seed: Any = 0,
) -> Columns:
    """``n`` requests arriving as a Poisson process of ``rate`` per second (the first at 0).

    ``prompt_len`` is the length of each request's own text; a request given a system prompt
    (``system_prompts``) has it in front, so its prompt is that much longer. Draws, in order:
    the ``n - 1`` exponential gaps, the prompt lengths, the output lengths, then (with system
    prompts) whether each request has one and which."""
    return _independent(
        n, rate, None, prompt_len, output_len, system_prompts, source_block, seed, f"poisson(n={n}, rate={rate:g})"
    )


def gamma(
    n: int,
    rate: float,
    cv: float,
    *,
    prompt_len: LengthSpec = 1024,
    output_len: LengthSpec = 128,
    system_prompts: Optional[SystemPrompts] = None,
    source_block: int = 16,
    seed: Any = 0,
) -> Columns:
    """``n`` requests whose gaps are gamma-distributed with mean ``1 / rate`` and coefficient
    of variation ``cv`` (shape ``1 / cv**2``): ``cv > 1`` is burstier than Poisson, ``cv < 1``
    more regular, ``cv = 1`` has Poisson's distribution (not its draws). Otherwise as
    :func:`poisson`."""
    cv = _checks.positive_float("cv", cv)
    return _independent(
        n,
        rate,
        cv,
        prompt_len,
        output_len,
        system_prompts,
        source_block,
        seed,
        f"gamma(n={n}, rate={rate:g}, cv={cv:g})",
    )


def _turns(value: Any) -> tuple[int, int]:
    if isinstance(value, tuple) and len(value) == 2:
        lo = _checks.positive_int("turns", value[0])
        hi = _checks.positive_int("turns", value[1])
        if lo > hi:
            raise ArgumentError(f"turns={value!r} is not accepted: give (lo, hi) with lo <= hi")
        return lo, hi
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        t = _checks.positive_int("turns", value)
        return t, t
    raise ArgumentTypeError(f"turns={value!r} is not accepted: give an int or a (lo, hi) range (uniform, inclusive)")


def _stable_order(keys: np.ndarray) -> np.ndarray:
    """``np.argsort(keys, kind="stable")`` in bounded steps: the indices are bucketed by key
    range (buckets cut at quantiles of a sample), in index order within each bucket, then each
    bucket is sorted stably on its own."""
    n = len(keys)
    n_buckets = -(-n // _steps.CHUNK)
    if n_buckets <= 1:
        return np.argsort(keys, kind="stable")
    sample = np.sort(keys[:: max(1, n // 4096)])
    edges = np.unique(sample[(np.arange(1, n_buckets) * (len(sample) - 1)) // n_buckets])
    bucket = _steps.filled(n, np.int64, lambda a, b: np.searchsorted(edges, keys[a:b], side="right"))
    counts = np.zeros(len(edges) + 1, dtype=np.int64)
    for a, b in _steps.spans(n):
        counts += np.bincount(bucket[a:b], minlength=len(counts))
    starts = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=starts[1:])
    order = np.empty(n, dtype=np.int64)
    written = starts[:-1].copy()
    for a, b in _steps.spans(n):
        by_bucket = np.argsort(bucket[a:b], kind="stable")
        which = bucket[a:b][by_bucket]
        here = np.bincount(which, minlength=len(counts))
        first = np.zeros(len(counts), dtype=np.int64)
        np.cumsum(here[:-1], out=first[1:])
        order[written[which] + np.arange(b - a) - first[which]] = by_bucket + a
        written += here
    for lo, hi in zip(starts[:-1].tolist(), starts[1:].tolist()):
        part = order[lo:hi]
        part[:] = part[np.argsort(keys[part], kind="stable")]
    return order


def conversations(
    n_conversations: int,
    rate: float,
    *,
    turns: Any = (1, 6),
    message_len: LengthSpec = 256,
    answer_len: LengthSpec = 256,
    think_time: float = 30.0,
    system_prompts: Optional[SystemPrompts] = None,
    source_block: int = 16,
    seed: Any = 0,
) -> Columns:
    """Multi-turn conversations (lecture section 5.2): each turn's prompt is the previous
    turn's prompt, its answer, and a new message, so every turn shares its history as a prefix.

    Conversations start as a Poisson process of ``rate`` per second, each with ``turns`` turns
    (an int, or a ``(lo, hi)`` range drawn uniformly), optionally after one of the
    ``system_prompts``. Turn ``t``'s prompt is ``system + m_1 + a_1 + ... + m_t`` tokens and its
    output ``a_t``. The next turn arrives an exponential ``think_time`` (mean, seconds) after
    the previous one arrived: an open loop, as in a trace, so under a slow engine a turn may
    arrive before the answer it follows is finished. Requests come in arrival order (ties by
    conversation, then turn).

    The content ids follow each conversation's token stream (system prompt, message, answer,
    message, ...), so a turn's prompt blocks equal the previous turn's prompt blocks and
    the answer that followed them. Draws, in order: the conversations' start gaps, their turn
    counts, the message lengths, the answer lengths (turn by turn, conversation by
    conversation), the think times, then (with system prompts) which each conversation has.
    """
    n_conversations = _checks.non_negative_int("n_conversations", n_conversations)
    rate = _checks.positive_float("rate", rate)
    lo, hi = _turns(turns)
    if isinstance(think_time, bool) or not isinstance(think_time, numbers.Real) or not 0 <= think_time < math.inf:
        raise ArgumentError(f"think_time={think_time!r} is not accepted: it must be a finite number >= 0 (seconds)")
    source_block = _checks.positive_int("source_block", source_block, maximum=2**31 - 1)
    if system_prompts is not None and not isinstance(system_prompts, SystemPrompts):
        raise ArgumentTypeError(
            f"system_prompts={system_prompts!r} is not accepted: give a SystemPrompts(count, length, fraction) or None"
        )
    _checks.affordable("n_conversations", n_conversations, 48.0 * n_conversations * hi, "the requests")
    rng = np.random.default_rng(_checks.seed(seed))
    start = _arrivals(rng, n_conversations, rate, None)
    n_turns = _steps.filled(n_conversations, np.int64, lambda a, b: rng.integers(lo, hi + 1, b - a))
    first = _steps.offsets(n_conversations, lambda a, b: n_turns[a:b])  # each conversation's first row
    total = int(first[-1])
    message = _draw("message_len", message_len, rng, total)
    answer = _draw("answer_len", answer_len, rng, total)
    scale = float(think_time)
    think = _steps.filled(total, np.float64, lambda a, b: rng.exponential(scale, b - a) if scale > 0 else 0.0)
    system = (
        system_prompts.assign(rng, n_conversations)
        if system_prompts is not None
        else _steps.filled(n_conversations, np.int64, lambda a, b: -1)
    )
    length = system_prompts.length if system_prompts is not None else 0
    full = system_prompts.length // source_block if system_prompts is not None else 0
    # One row per turn, conversation by conversation, built a run of conversations at a time.
    # Arrivals and histories are sums over the turns before in the conversation: differences
    # of one running sum over all rows (carried from run to run, so it adds in one order).
    conversation = np.empty(total, dtype=np.int64)
    arrival = np.empty(total)
    prompt = np.empty(total, dtype=np.int64)
    stream_blocks = np.empty(n_conversations, dtype=np.int64)
    think_sum, history_sum, longest = 0.0, 0, 0
    for c0, c1 in _steps.groups(first):
        r0, r1 = int(first[c0]), int(first[c1])
        conv = np.repeat(np.arange(c0, c1), n_turns[c0:c1])
        conversation[r0:r1] = conv
        local = first[c0:c1] - r0  # each conversation's first row, in the run
        th = think[r0:r1]
        th[local] = 0.0  # the first turn arrives when its conversation starts
        before = np.empty(r1 - r0)
        think_sum = _steps.cumsum_from(th, before, think_sum)
        before -= th
        waited = before - before[local][conv - c0]
        arrival[r0:r1] = start[conv] + waited + th
        said = message[r0:r1] + answer[r0:r1]
        turns_before = np.empty(r1 - r0, dtype=np.int64)
        history_sum = _steps.cumsum_from(said, turns_before, history_sum)
        turns_before -= said
        history = turns_before - turns_before[local][conv - c0]
        has = system[c0:c1] >= 0
        run_prompt = prompt[r0:r1]
        run_prompt[:] = np.where(has, length, 0)[conv - c0] + history + message[r0:r1]
        longest = max(longest, int(run_prompt.max(initial=0)))
        # Each conversation's stream ends with its last turn's answer.
        last = first[c0 + 1 : c1 + 1] - 1 - r0
        stream_len = run_prompt[last] + answer[r0:r1][last]
        stream_blocks[c0:c1] = -(-stream_len // source_block) - np.where(has, full, 0)
    if longest > MAX_TOKENS:
        raise ArgumentError(
            f"turns={turns!r} is not accepted with these lengths: a prompt reaches {longest} tokens, "
            f"more than {MAX_TOKENS}"
        )
    # Arrival order, ties by conversation then turn: the rows' own order, so a stable sort.
    order = _stable_order(arrival)

    def take(values: np.ndarray) -> np.ndarray:
        return _steps.filled(total, values.dtype, lambda a, b: values[order[a:b]])

    stream, prompt = take(conversation), take(prompt)
    ids, offsets = _content(
        prompt,
        _steps.filled(total, np.int64, lambda a, b: system[stream[a:b]]),
        system_prompts,
        stream,
        stream_blocks,
        source_block,
        ("n_conversations", n_conversations),
    )
    return Columns(
        take(arrival),
        prompt,
        take(answer),
        ids,
        offsets,
        source_block,
        f"conversations(n={n_conversations}, rate={rate:g})",
    )


__all__ = ["Empirical", "LengthSpec", "Lognormal", "SystemPrompts", "conversations", "gamma", "poisson"]
