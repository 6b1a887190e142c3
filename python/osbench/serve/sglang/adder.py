"""SGLang's prefill admission: ``managers/schedule_policy.py: PrefillAdder`` over the memory
budget of ``mem_cache/prefill_budget.py: PrefillBudget`` (the plain token pool: no sliding
window, no Mamba state, no host cache, no sharding).

The budget is the pool's free tokens plus the tree's evictable ones, less a *reservation*:
for every running request, the output it may still produce (capped at
:data:`CLIP_MAX_NEW_TOKENS`) times the ``new_token_ratio``; for every request admitted in this
pass, its pages, one page more, and its expected output. A request is admitted while its whole
need fits strictly below what remains; the waiting queue is tried head first and the first
request that does not fit ends the pass.
"""

from __future__ import annotations

from enum import Enum, auto
from typing import Optional

from osbench.serve.sglang.kv import KVCache
from osbench.serve.sglang.request import Req

CLIP_MAX_NEW_TOKENS = 4096
"""``schedule_policy.py: CLIP_MAX_NEW_TOKENS`` (``SGLANG_CLIP_MAX_NEW_TOKENS_ESTIMATION``): the
most output tokens the admission reserves for one request."""


class AddReqResult(Enum):
    """``schedule_policy.py: AddReqResult``."""

    CONTINUE = auto()
    NO_TOKEN = auto()
    OTHER = auto()


class PrefillAdder:
    """``schedule_policy.py: PrefillAdder`` with its ``PrefillBudget``."""

    def __init__(
        self,
        kv: KVCache,
        running: list[Req],
        new_token_ratio: float,
        max_prefill_tokens: int,
        chunk_tokens: Optional[int],
        num_mixed_decode_tokens: int,
    ) -> None:
        self.kv = kv
        self.page_size = kv.page_size
        self.rem_input_tokens = max_prefill_tokens - num_mixed_decode_tokens
        self.rem_chunk_tokens = None if chunk_tokens is None else chunk_tokens - num_mixed_decode_tokens
        # PrefillBudget.__init__: both offsets start at the mixed decode tokens.
        self.total_offset: float = num_mixed_decode_tokens
        self.current_offset: float = num_mixed_decode_tokens
        # PrefillAdder.__init__: the running requests' expected outputs
        # (_get_running_request_total_token_offset).
        self.total_offset += sum(
            [min(r.max_new_tokens - r.num_outputs, CLIP_MAX_NEW_TOKENS) * new_token_ratio for r in running]
        )
        self.can_run_list: list[Req] = []
        self.new_chunked_req: Optional[Req] = None

    # --- PrefillBudget ------------------------------------------------------------------

    def _available_and_evictable(self) -> int:
        return self.kv.available_size() + self.kv.evictable_size()

    @property
    def rem_total_tokens(self) -> float:
        return self._available_and_evictable() - self.total_offset

    @property
    def cur_rem_tokens(self) -> float:
        return self._available_and_evictable() - self.current_offset

    def _reserve(self, extend_input_len: int, max_new_tokens: int) -> None:
        """``PrefillBudget.reserve``: the pages now, one page for alignment, the output later."""
        immediate = self.ceil_paged_tokens(extend_input_len) + self.page_size
        self.total_offset += immediate + max_new_tokens
        self.current_offset += immediate

    # --- PrefillAdder -------------------------------------------------------------------

    def ceil_paged_tokens(self, tokens: int) -> int:
        return -(-tokens // self.page_size) * self.page_size

    def budget_state(self) -> AddReqResult:
        """``budget_state``: out of memory, out of prefill tokens, or room for more."""
        if not (self.rem_total_tokens > 0 and self.cur_rem_tokens > 0):
            return AddReqResult.NO_TOKEN
        if self.rem_input_tokens <= 0:
            return AddReqResult.OTHER
        if self.rem_chunk_tokens is not None and self.rem_chunk_tokens <= 0:
            return AddReqResult.OTHER
        return AddReqResult.CONTINUE

    def _update_prefill_budget(self, extend_input_len: int, max_new_tokens: int) -> None:
        """``_update_prefill_budget``: the page-ceiled extend comes off every budget."""
        extend_input_len = self.ceil_paged_tokens(extend_input_len)
        self._reserve(extend_input_len, max_new_tokens)
        self.rem_input_tokens -= extend_input_len
        if self.rem_chunk_tokens is not None:
            self.rem_chunk_tokens -= extend_input_len

    def add_chunked_req(self, req: Req) -> Optional[Req]:
        """``add_chunked_req``: the next chunk of the request being chunked, as much as the chunk
        budget and the memory allow (``PrefillBudget.available_chunk_tokens``). Returns the
        request while it is still unfinished, else None."""
        assert self.rem_chunk_tokens is not None
        available = min(self.rem_chunk_tokens, int(self.rem_total_tokens))
        rem_tokens = available if available > 0 else self.rem_chunk_tokens
        extend = len(req.fill) - req.prefix_len
        truncated = extend > rem_tokens
        new_len = min(extend, rem_tokens)
        req.extend_end = req.prefix_len + new_len
        self.can_run_list.append(req)
        self._update_prefill_budget(new_len, 0 if truncated else min(req.max_new_tokens, CLIP_MAX_NEW_TOKENS))
        return req if truncated else None

    def add_one_req(self, req: Req) -> AddReqResult:
        """``add_one_req`` (``_select_prefill_admission``, ``_commit_prefill_admission``): admit
        ``req`` whole, or as the one chunked request when it is over the chunk budget (its chunk
        ending on a page boundary), if ``extend + min(remaining output, 4096) + page_size`` is
        below what the budget has left with the request's own prefix locked."""
        max_new = min(max(req.max_new_tokens - req.num_outputs, 0), CLIP_MAX_NEW_TOKENS)
        prefix_len = req.prefix_len
        extend_len = len(req.fill) - prefix_len
        total_tokens = extend_len + max_new + self.page_size
        input_tokens = self.ceil_paged_tokens(extend_len)
        tree, node = self.kv.tree, req.last_node
        assert node is not None
        tree.lock(node)  # _lock_node: its prefix is not evictable while it is weighed
        try:
            if not total_tokens < self.rem_total_tokens:  # PrefillBudget.check_prefill
                return AddReqResult.NO_TOKEN
            if self.rem_chunk_tokens is None and self.can_run_list and input_tokens >= self.rem_input_tokens:
                return AddReqResult.OTHER  # without chunking only the first may exceed the budget
            is_chunked = False
            max_new_tokens = min(req.max_new_tokens, CLIP_MAX_NEW_TOKENS)
            chunk = self.rem_chunk_tokens
            if chunk is not None and input_tokens > chunk:
                page = self.page_size
                extend_len = chunk // page * page
                end = (prefix_len + extend_len) // page * page
                extend_len = end - prefix_len
                if extend_len <= 0:
                    return AddReqResult.OTHER
                is_chunked = True
                max_new_tokens = 0
            # _commit_prefill_admission
            req.extend_end = prefix_len + extend_len
            self.kv.lock(req, node)
            self.can_run_list.append(req)
            if is_chunked:
                self.new_chunked_req = req
            self._update_prefill_budget(extend_len, max_new_tokens)
        finally:
            tree.unlock(node)
        return self.budget_state()
