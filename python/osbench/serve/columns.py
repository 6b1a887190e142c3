"""The columns of a set of requests before they become :class:`~osbench.serve.Requests`: what
the readers and generators produce, so that they need not import the class that calls them."""

from __future__ import annotations

from typing import NamedTuple, Optional

import numpy as np

MAX_TOKENS = 2**31 - 1
"""The longest prompt or output accepted, in tokens (every count fits an int32, and block
positions stay below 2**32, which keeps the keys of content-less prompts unique)."""


class Columns(NamedTuple):
    """Requests as arrays: ``arrival`` (seconds, or the log's own time unit before
    :meth:`Requests.read` orders and converts them), ``prompt_len``, ``output_len``, and the
    prompt content as packed ids (``block_ids[block_offsets[i]:block_offsets[i + 1]]`` for
    request ``i``) or None. Read from a file: its ``path`` and each request's ``line``, so that
    a request the checks refuse is named where the file has it."""

    arrival: np.ndarray
    prompt_len: np.ndarray
    output_len: np.ndarray
    block_ids: Optional[np.ndarray]
    block_offsets: Optional[np.ndarray]
    source_block: int
    name: str
    path: Optional[str] = None
    line: Optional[np.ndarray] = None


__all__ = ["MAX_TOKENS", "Columns"]
