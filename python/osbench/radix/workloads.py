"""Request streams for the radix cache: a batch type, a vocabulary for words, the multi-turn
conversation generator of lecture demo 05, and Mooncake traces as requests of block ids.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional, Union

import numpy as np

from osbench import _checks, _steps, datasets
from osbench.errors import ArgumentError, ArgumentTypeError
from osbench.traces.formats.mooncake import MOONCAKE_BLOCK_TOKENS
from osbench.traces.formats.mooncake import read_log as read_mooncake_log


class Vocabulary:
    """Words to integer token ids and back. Ids are given in order of first appearance
    (``Vocabulary(words)`` fixes them up front, e.g. ``Vocabulary(sorted(words))``)."""

    def __init__(self, words: Iterable[str] = ()) -> None:
        self._ids: dict[str, int] = {}
        self._words: list[str] = []
        for w in words:
            self.id(w)

    def id(self, word: str) -> int:
        """The id of ``word``, adding it if new."""
        if not isinstance(word, str):
            raise ArgumentTypeError(f"word={word!r} is not accepted: a Vocabulary maps str words to ids")
        i = self._ids.get(word)
        if i is None:
            i = self._ids[word] = len(self._words)
            self._words.append(word)
        return i

    def encode(self, text: Union[str, Sequence[str]]) -> list[int]:
        """Token ids of a text (split on whitespace) or of a sequence of words."""
        words = text.split() if isinstance(text, str) else text
        return [self.id(w) for w in words]

    def decode(self, ids: Iterable[int]) -> list[str]:
        """Words of token ids (ids the vocabulary has never given appear as ``<id>``)."""
        return [self._words[i] if 0 <= i < len(self._words) else f"<{i}>" for i in (int(x) for x in ids)]

    def __len__(self) -> int:
        return len(self._words)

    def __contains__(self, word: object) -> bool:
        return word in self._ids


def _pack(seqs: Sequence[Any]) -> tuple[np.ndarray, np.ndarray]:
    """Concatenate integer sequences into (tokens, offsets)."""
    arrays = []
    for s in seqs:
        a = np.asarray(s)
        if a.size == 0:
            a = np.zeros(0, dtype=np.int64)
        elif a.ndim != 1 or a.dtype.kind not in "iu":
            raise ArgumentTypeError(
                f"requests is not accepted: each request must be a 1-D sequence of integer tokens, got {s!r:.60}"
                " (map words to ids with osbench.radix.Vocabulary)"
            )
        elif a.dtype == np.uint64 and a.max() > np.iinfo(np.int64).max:
            raise ArgumentError("requests is not accepted: tokens must fit in int64")
        arrays.append(a.astype(np.int64, copy=False))
    offsets = np.zeros(len(arrays) + 1, dtype=np.int64)
    np.cumsum([len(a) for a in arrays], out=offsets[1:])
    # Joined a step of sequences at a time (one concatenate of 57M tokens holds Ctrl-C for a second).
    tokens = np.empty(int(offsets[-1]), dtype=np.int64)
    for first, end in _steps.groups(offsets):
        np.concatenate(arrays[first:end], out=tokens[offsets[first] : offsets[end]])
    return tokens, offsets


@dataclass(frozen=True, eq=False)
class Requests:
    """A stream of requests in compressed form: prompt ``i`` is
    ``tokens[offsets[i]:offsets[i+1]]`` (int64). ``outputs`` (same layout, optional) is what
    each request generates; ``conversation``/``turn``/``app`` (optional) say where it came from."""

    tokens: np.ndarray
    offsets: np.ndarray
    output_tokens: Optional[np.ndarray] = None
    output_offsets: Optional[np.ndarray] = None
    conversation: Optional[np.ndarray] = None
    turn: Optional[np.ndarray] = None
    app: Optional[np.ndarray] = None
    name: str = ""

    @classmethod
    def from_sequences(
        cls, prompts: Sequence[Sequence[int]], outputs: Optional[Sequence[Sequence[int]]] = None, name: str = ""
    ) -> Requests:
        """From lists of integer tokens (and optionally one output list per prompt)."""
        tokens, offsets = _pack(prompts)
        if outputs is None:
            return cls(tokens, offsets, name=name)
        if len(outputs) != len(prompts):
            raise ArgumentError(f"outputs is not accepted: {len(outputs)} outputs for {len(prompts)} prompts")
        out_tokens, out_offsets = _pack(outputs)
        return cls(tokens, offsets, out_tokens, out_offsets, name=name)

    @classmethod
    def from_texts(cls, texts: Sequence[str], vocab: Optional[Vocabulary] = None) -> Requests:
        """From texts whose words are tokens (``vocab`` grows as needed)."""
        vocab = Vocabulary() if vocab is None else vocab
        return cls.from_sequences([vocab.encode(t) for t in texts])

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def prompt(self, i: int) -> np.ndarray:
        return self.tokens[self.offsets[i] : self.offsets[i + 1]]

    def output(self, i: int) -> np.ndarray:
        if self.output_tokens is None or self.output_offsets is None:
            return self.tokens[:0]
        return self.output_tokens[self.output_offsets[i] : self.output_offsets[i + 1]]

    def prompts(self) -> list[list[int]]:
        return [self.prompt(i).tolist() for i in range(len(self))]

    def outputs(self) -> Optional[list[list[int]]]:
        if self.output_tokens is None:
            return None
        return [self.output(i).tolist() for i in range(len(self))]

    @property
    def total_tokens(self) -> int:
        """Prompt tokens summed over requests: what storing every request separately costs."""
        return int(self.offsets[-1])

    @property
    def mean_length(self) -> float:
        return self.total_tokens / len(self) if len(self) else 0.0

    def head(self, n: int) -> Requests:
        """The first ``n`` requests."""
        n = min(n, len(self))
        cut = lambda a: None if a is None else a[:n]  # noqa: E731
        out_t = out_o = None
        if self.output_tokens is not None and self.output_offsets is not None:
            out_o = self.output_offsets[: n + 1]
            out_t = self.output_tokens[: int(out_o[-1])]
        return Requests(
            self.tokens[: int(self.offsets[n])],
            self.offsets[: n + 1],
            out_t,
            out_o,
            cut(self.conversation),
            cut(self.turn),
            cut(self.app),
            self.name,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "requests": len(self),
            "total_tokens": self.total_tokens,
            "mean_length": self.mean_length,
            "has_outputs": self.output_tokens is not None,
        }


MAX_GENERATED_TOKENS = 1 << 28
"""The most prompt tokens :func:`conversations` may generate (2 GiB of int64)."""


def _length(name: str, value: Any) -> tuple[int, int]:
    """An int n (exactly n) or a (lo, hi) pair (uniform in [lo, hi])."""
    if isinstance(value, tuple) and len(value) == 2:
        lo = _checks.non_negative_int(name, value[0])
        hi = _checks.non_negative_int(name, value[1])
        if lo > hi:
            raise ArgumentError(f"{name}={value!r} is not accepted: it must be (lo, hi) with lo <= hi")
        return lo, hi
    n = _checks.non_negative_int(name, value)
    return n, n


def conversations(
    n_conversations: int = 200,
    *,
    n_apps: int = 4,
    system_len: int = 48,
    fewshot_len: Any = 48,
    question_len: Any = (8, 24),
    answer_len: Any = (16, 48),
    max_turns: int = 3,
    think_time: float = 4.0,
    vocab_size: int = 32_000,
    seed: int = 0,
) -> Requests:
    """The multi-turn workload of lecture demo 05 (section 5.2).

    One system prompt shared by every request; ``n_apps`` applications, each with its own
    few-shot block; ``n_conversations`` conversations, each in one app chosen uniformly, with
    1 to ``max_turns`` turns (uniform). Turn k's prompt is the whole history: system prompt,
    few-shot block, then question 1, answer 1, ..., question k; its output is answer k. Tokens
    are ints drawn uniformly from ``[0, vocab_size)``. Lengths are an int or a (lo, hi) range.

    Conversation c starts at time c; the gap before each next turn is exponential with mean
    ``think_time`` (in conversation arrivals), so conversations interleave. Requests come in
    time order (ties by conversation, then turn).
    """
    n_conversations = _checks.positive_int("n_conversations", n_conversations)
    n_apps = _checks.positive_int("n_apps", n_apps)
    max_turns = _checks.positive_int("max_turns", max_turns)
    vocab_size = _checks.positive_int("vocab_size", vocab_size, maximum=2**63 - 1)
    system_len = _checks.non_negative_int("system_len", system_len)
    few = _length("fewshot_len", fewshot_len)
    q_len = _length("question_len", question_len)
    a_len = _length("answer_len", answer_len)
    if not (isinstance(think_time, (int, float)) and think_time >= 0):
        raise ArgumentError(f"think_time={think_time!r} is not accepted: it must be a non-negative number")
    # Every prompt is held in memory (8 bytes a token): refuse up front the lengths whose largest
    # workload could pass MAX_GENERATED_TOKENS, rather than run out of memory drawing it.
    longest = system_len + few[1] + max_turns * (q_len[1] + a_len[1])
    if n_conversations * max_turns * longest > MAX_GENERATED_TOKENS:
        raise ArgumentError(
            f"system_len={system_len}, fewshot_len={fewshot_len!r}, question_len={question_len!r}, "
            f"answer_len={answer_len!r} with n_conversations={n_conversations} and max_turns={max_turns} are not "
            f"accepted: their largest workload has {n_conversations * max_turns * longest:,} prompt tokens, "
            f"at most {MAX_GENERATED_TOKENS:,} are"
        )
    rng = np.random.default_rng(seed)

    def draw(lo_hi: tuple[int, int]) -> np.ndarray:
        n = int(rng.integers(lo_hi[0], lo_hi[1] + 1))
        return rng.integers(0, vocab_size, size=n, dtype=np.int64)

    system = rng.integers(0, vocab_size, size=system_len, dtype=np.int64)
    fewshots = [draw(few) for _ in range(n_apps)]
    events = []  # (time, conversation, turn, app, prompt, answer)
    for c in range(n_conversations):
        app = int(rng.integers(0, n_apps))
        turns = int(rng.integers(1, max_turns + 1))
        history = [system, fewshots[app]]
        t = float(c)
        for k in range(turns):
            question, answer = draw(q_len), draw(a_len)
            history.append(question)
            # The prompt as its segments (the history so far), joined once when packed: a copy
            # of the history per turn would hold every earlier turn again.
            events.append((t, c, k, app, tuple(history), answer))
            history.append(answer)
            t += float(rng.exponential(think_time)) if think_time > 0 else 0.0
    events.sort(key=lambda e: (e[0], e[1], e[2]))
    tokens, segment_offsets = _pack([segment for e in events for segment in e[4]])
    offsets = segment_offsets[np.concatenate([[0], np.cumsum([len(e[4]) for e in events], dtype=np.int64)])]
    out_tokens, out_offsets = _pack([e[5] for e in events])
    return Requests(
        tokens,
        offsets,
        out_tokens,
        out_offsets,
        conversation=np.array([e[1] for e in events], dtype=np.int64),
        turn=np.array([e[2] for e in events], dtype=np.int64),
        app=np.array([e[3] for e in events], dtype=np.int64),
        name=f"conversations(n={n_conversations}, seed={seed})",
    )


def mooncake(path: Union[str, os.PathLike], limit: Optional[int] = None) -> Requests:
    """Read a Mooncake trace (JSON lines with ``hash_ids``), from a path or a dataset name
    (``"mooncake-conversation"``, ``"mooncake-synthetic"``: see :mod:`osbench.datasets`): each
    request becomes the sequence of its block hashes, one token per 512-token block
    (``MOONCAKE_BLOCK_TOKENS``), so a block-level prefix cache is a radix cache of page size 1
    over these ids. ``limit`` keeps the first requests only."""
    resolved = datasets.resolve(path)
    log = read_mooncake_log(resolved, limit=limit, require=("hash_ids",))
    return Requests.from_sequences(log.hash_ids, name=Path(resolved).stem)


__all__ = ["MOONCAKE_BLOCK_TOKENS", "Requests", "Vocabulary", "conversations", "mooncake"]
