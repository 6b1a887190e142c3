"""How long one engine step takes.

A step's work is summarised by :class:`Batch` (integers only, so both engines compute the
same floating-point time from the same inputs in the same order). A step-time model is any
callable ``model(batch) -> seconds``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Batch:
    """What one engine step computes.

    A scheduled request is a *prefill* when more than its one next token was outstanding
    before the step (a prompt, a chunk of one, or a recomputation after preemption), else a
    *decode* (its one next token)."""

    num_seqs: int
    """Requests scheduled in the step."""
    prefill_seqs: int
    prefill_tokens: int
    """New tokens of the prefill requests."""
    decode_seqs: int
    """Requests scheduled for their one next token (one new token each)."""
    context_tokens: int
    """Tokens already in the KV cache of the scheduled requests before the step (summed)."""
    attention_pairs: int
    """Causal query-key pairs of the step's attention: for a request with ``c`` tokens in
    the cache and ``n`` new ones, ``n * c + n * (n + 1) // 2``, summed over requests."""

    @property
    def new_tokens(self) -> int:
        return self.prefill_tokens + self.decode_seqs


class StepTime:
    """Step-time models: ``StepTime.linear(...)``; the model presets' roofline follows."""

    def __init__(self, a: float, b_prefill_token: float, c_decode_seq: float, d_context_token: float) -> None:
        self.coefficients = (float(a), float(b_prefill_token), float(c_decode_seq), float(d_context_token))

    @classmethod
    def linear(cls, a: float, b_prefill_token: float, c_decode_seq: float, d_context_token: float) -> StepTime:
        """``a + b * prefill_tokens + c * decode_seqs + d * context_tokens`` seconds, for
        coefficients measured on a real engine."""
        return cls(a, b_prefill_token, c_decode_seq, d_context_token)

    def __call__(self, batch: Batch) -> float:
        a, b, c, d = self.coefficients
        return a + b * batch.prefill_tokens + c * batch.decode_seqs + d * batch.context_tokens
