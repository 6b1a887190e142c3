"""SGLang's KV memory: the token pool (``mem_cache/allocator/``) and the radix tree over it
(``mem_cache/radix_cache.py: RadixCache``), which is :class:`osbench.radix.reference.RadixTree`
itself: the same tree, operation for operation, not a copy.

The pool counts pages of ``page_size`` tokens. Every page is free, or the tree's (a node's
tokens), or a running request's own (the part of its row the tree does not own: what it
computed since its last checkpoint, and the partial last page). A request's tree prefix is held
by a lock on its last node; unlocked tree pages are *evictable*, freed least recently used leaf
first when an allocation is short (``mem_cache/common.py: evict_from_tree_cache``).
"""

from __future__ import annotations

from typing import Optional

from osbench.radix.reference import Node, RadixTree
from osbench.serve.sglang.config import ceil_pages
from osbench.serve.sglang.request import Req


class KVCache:
    """The token pool and its radix tree."""

    def __init__(self, num_pages: int, page_size: int) -> None:
        self.page_size = page_size
        self.num_pages = num_pages
        self.free_pages = num_pages
        self.tree = RadixTree(page_size)

    # --- the allocator ------------------------------------------------------------------

    def available_size(self) -> int:
        """Free tokens (``allocator/base.py: available_size``)."""
        return self.free_pages * self.page_size

    def evictable_size(self) -> int:
        return self.tree.evictable_size

    def evict_to_free_tokens(self, num_tokens: int) -> None:
        """``allocator/base.py: evict_to_free_tokens``: evict the shortfall from the tree."""
        shortfall = num_tokens - self.available_size()
        if shortfall > 0:
            self.free_pages += self.tree.evict(shortfall) // self.page_size

    def own_pages(self, req: Req) -> int:
        """Pages of the request's row that are its own (not the tree's)."""
        return ceil_pages(req.alloc_len, self.page_size) - req.protected // self.page_size

    def allocate(self, req: Req, end: int) -> None:
        """Slots for the request's tokens up to ``end``; a new page only when its last page is full."""
        new = ceil_pages(end, self.page_size) - ceil_pages(req.alloc_len, self.page_size)
        if new > self.free_pages:
            raise RuntimeError(f"the KV pool ran out of pages for request {req.index}: this is a bug")
        self.free_pages -= new
        req.alloc_len = end

    # --- the tree -----------------------------------------------------------------------

    def match(self, req: Req, limit: Optional[int] = None) -> None:
        """``mem_cache/common.py: match_kv_cache``: the longest cached prefix of the fill (up to
        ``limit`` tokens) becomes the request's prefix."""
        tokens = req.fill if limit is None else req.fill[:limit]
        req.prefix_len, req.last_node = self.tree.match_prefix(tokens)
        req.num_matched = min(req.prefix_len, req.max_prefix_len(len(req.fill)))

    def checkpoint(self, req: Req, up_to: int) -> None:
        """``radix_cache.py: RadixCache.checkpoint``: insert the request's first ``up_to``
        tokens (whole pages) and free the pages it computed that the tree already had
        (``_insert_cache``); the prompt is split apart from the output (``split_prompt``); the
        request's lock moves to the new last node."""
        tree, page = self.tree, self.page_size
        key = req.fill[: up_to - up_to % page]
        already = tree.insert(key)
        prompt_key = len(req.fill[: req.prompt_len]) // page * page
        if 0 < prompt_key < len(key):
            tree.insert(key[:prompt_key])
        if already > req.protected:
            self.free_pages += (already - req.protected) // page
        length, node = tree.match_prefix(key)
        assert length == len(key)
        req.protected = len(key)
        self.unlock(req)
        self.lock(req, node)
        req.last_node = node

    def lock(self, req: Req, node: Node) -> None:
        self.tree.lock(node)
        req.lock = node

    def unlock(self, req: Req) -> None:
        if req.lock is not None:
            self.tree.unlock(req.lock)
            req.lock = None

    def release(self, req: Req, checkpoint: bool) -> None:
        """``mem_cache/common.py: release_kv_cache``: with ``checkpoint`` the tree first keeps
        the computed tokens; the request's own pages are freed and its lock dropped."""
        if checkpoint:
            self.checkpoint(req, req.committed)
        self.free_pages += self.own_pages(req)
        self.unlock(req)
        req.alloc_len = req.protected = req.committed = 0

    @property
    def reusable_pages(self) -> int:
        """Pages an allocation may take: the free ones and the tree's evictable ones."""
        return self.free_pages + self.tree.evictable_size // self.page_size

    @property
    def cached_pages(self) -> int:
        """Pages the tree holds."""
        return self.tree.total_size // self.page_size
