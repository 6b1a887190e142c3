"""One request as SGLang's scheduler holds it (``managers/schedule_batch.py: Req``): its tokens,
its outputs, its place in the radix tree and its row of KV."""

from __future__ import annotations

from typing import Optional

from osbench.radix.reference import Node


def private_token(index: int, position: int) -> int:
    """A token id no other request and position has: prompt tokens are below ``2**62``
    (:func:`osbench.serve.sglang.stepper.prompt_tokens`), these above, and all are valid
    (non-negative) token ids."""
    return (1 << 62) | (index << 31) | position


class Req:
    """``schedule_batch.py: Req``, reduced to what the scheduler decides on."""

    __slots__ = (
        "alloc_len",
        "arrival",
        "arrival_processed_tokens",
        "committed",
        "computed_high",
        "extend_end",
        "fill",
        "index",
        "last_node",
        "lock",
        "max_new_tokens",
        "num_matched",
        "num_outputs",
        "prefix_len",
        "prompt_len",
        "protected",
        "retractions",
    )

    def __init__(self, index: int, arrival: float, prompt: list[int], max_new_tokens: int) -> None:
        self.index = index
        self.arrival = arrival
        self.prompt_len = len(prompt)
        self.max_new_tokens = max_new_tokens
        self.fill = prompt
        """``origin_input_ids + output_ids``: the prompt, then each output token."""
        self.num_outputs = 0
        self.prefix_len = 0
        """Tokens whose KV this request has, from the tree or computed (``Req.prefix_len``)."""
        self.num_matched = 0
        """``Req.num_matched_prefix_tokens``: the last match, capped one short of the fill."""
        self.extend_end = 0
        """Where the tokens computed in the current prefill end (``Req.extend_end``)."""
        self.last_node: Optional[Node] = None
        """The tree node the last match ended at (``Req.last_node``)."""
        self.lock: Optional[Node] = None
        """The node this request holds a lock on (``Req.lock``)."""
        self.protected = 0
        """Leading tokens of its row that the tree owns (``kv.cache_protected_len``)."""
        self.alloc_len = 0
        """Tokens of its row with KV slots (``kv.kv_allocated_len``)."""
        self.committed = 0
        """Tokens whose KV is computed (``kv.kv_committed_len``)."""
        self.computed_high = 0
        """The most tokens its KV has held: below it, a token is computed again after a retraction."""
        self.retractions = 0
        self.arrival_processed_tokens = 0
        """The scheduler's prefill-token counter when the request last joined the queue (``hrrn``)."""

    def finished(self) -> bool:
        """``Req.update_finish_state``: the only stop modelled is ``max_new_tokens``."""
        return self.num_outputs >= self.max_new_tokens

    def append_output(self) -> None:
        self.fill.append(private_token(self.index, len(self.fill)))
        self.num_outputs += 1

    def max_prefix_len(self, input_len: int) -> int:
        """``Req._compute_max_prefix_len``: a match stops one token short, so that a prefill
        always computes at least the token that yields the next output."""
        return max(input_len - 1, 0)
