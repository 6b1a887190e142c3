"""The radix tree in plain Python: the teaching engine (lecture section 5).

This is SGLang's RadixCache (RadixAttention) reduced to its tokens: no KV indices, just the
token runs, reference counts and last-access times.

- A node holds a run of tokens (a whole number of pages). Its children are keyed by their
  first page (the first token when ``page_size == 1``), so no two children share a first page.
- ``insert`` walks from the root, splits a node where the new sequence diverges inside it, and
  adds one leaf for the new suffix. It returns the length that was already cached.
- ``match_prefix`` walks the same way; if the match ends inside a node, it splits the node
  there and returns the upper part.
- ``lock``/``unlock`` add/remove one reference on every node from the given one up to the
  root (the root holds none). A node going 0 -> 1 moves its tokens from evictable to
  protected; 1 -> 0 moves them back.
- ``evict(n)`` removes unlocked leaves, least recently used first, whole nodes, until at
  least ``n`` tokens are freed; a parent whose last child went becomes a candidate.

Tie-breaks (the native engine follows the same rules, so the two agree exactly):
time is a logical clock and every stamp takes the next tick, so no two nodes share a
last-access time. ``insert`` stamps the root and then every node on the path, top down;
``match_prefix`` does the same, except that an empty (or shorter than one page) query stamps
nothing. A node created by a split (the upper part) or by an insert (the new leaf) takes the
next tick when it is created, which is after the node it was split from was stamped.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Hashable, Iterator, Sequence
from typing import Any, Optional, Union

from osbench.errors import ArgumentError, ArgumentTypeError


class Node:
    """One node. Handles given to users are these objects; each knows its tree."""

    __slots__ = ("alive", "children", "last_access", "lock_ref", "parent", "tokens", "tree")

    def __init__(self, tree: RadixTree, parent: Optional[Node], tokens: list, last_access: int):
        self.tree = tree
        self.parent = parent
        self.children: dict[Any, Node] = {}  # first page -> child
        self.tokens = tokens
        self.lock_ref = 0
        self.last_access = last_access
        self.alive = True

    def __repr__(self) -> str:
        return f"<radix node {self.tokens[:8]!r}{'...' if len(self.tokens) > 8 else ''}>"


class RadixTree:
    """SGLang's radix tree over tokens (any hashable values here; the native engine takes
    64-bit integers). See the module documentation for the rules."""

    def __init__(self, page_size: int = 1):
        if page_size < 1:
            raise ArgumentError(f"page_size={page_size!r} is not accepted: it must be a positive integer")
        self.page_size = page_size
        self.clock = 0
        self.root = Node(self, None, [], 0)
        self.evictable_size = 0
        self.protected_size = 0
        self.num_nodes = 0
        self.evicted_nodes = 0
        self.evicted_tokens = 0
        # Unlocked leaves other than the root: the eviction candidates, kept up to date.
        self.evictable_leaves: set[Node] = set()

    # --- small helpers -------------------------------------------------------------------

    def _tick(self) -> int:
        self.clock += 1
        return self.clock

    def _stamp(self, node: Node) -> None:
        node.last_access = self._tick()

    def _child_key(self, tokens: Sequence) -> Any:
        """The key of the child that ``tokens`` would follow: its first page."""
        return tokens[0] if self.page_size == 1 else tuple(tokens[: self.page_size])

    def _aligned(self, tokens: Sequence) -> list:
        """``tokens`` cut down to whole pages."""
        tokens = list(tokens)
        return tokens[: len(tokens) - len(tokens) % self.page_size]

    def _common(self, a: list, b: list) -> int:
        """Length of the common prefix of ``a`` and ``b``, in whole pages."""
        n = 0
        for x, y in zip(a, b):
            if x != y:
                break
            n += 1
        return n - n % self.page_size

    def _update_leaf_status(self, node: Node) -> None:
        if node is not self.root and node.alive and node.lock_ref == 0 and not node.children:
            self.evictable_leaves.add(node)
        else:
            self.evictable_leaves.discard(node)

    def _split(self, child: Node, at: int) -> Node:
        """Split ``child`` after ``at`` tokens. The new upper node takes the child's place
        under its parent; the child keeps the rest (and its identity: handles stay valid)."""
        parent = child.parent
        assert parent is not None
        upper = Node(self, parent, child.tokens[:at], self._tick())
        upper.lock_ref = child.lock_ref
        parent.children[self._child_key(upper.tokens)] = upper
        child.tokens = child.tokens[at:]
        child.parent = upper
        upper.children[self._child_key(child.tokens)] = child
        self.num_nodes += 1
        return upper

    def check(self, node: Any) -> Node:
        """``node`` if it is a live node of this tree, else ValueError."""
        if not isinstance(node, Node):
            raise ArgumentTypeError(
                f"node={node!r} is not accepted: it must be a node handle of a reference RadixCache"
            )
        if node.tree is not self:
            raise ArgumentError(f"node={node!r} is not accepted: it belongs to another tree")
        if not node.alive:
            raise ArgumentError(f"node={node!r} is not accepted: it has been evicted")
        return node

    # --- the operations --------------------------------------------------------------------

    def insert(self, tokens: Sequence[Hashable]) -> int:
        """Insert ``tokens`` (cut to whole pages); return the length already cached."""
        key = self._aligned(tokens)
        pos, node = self._descend(key)
        if pos < len(key):
            leaf = Node(self, node, key[pos:], self._tick())
            node.children[self._child_key(leaf.tokens)] = leaf
            self.num_nodes += 1
            self.evictable_size += len(leaf.tokens)
            self._update_leaf_status(node)
            self._update_leaf_status(leaf)
        return pos

    def match_prefix(self, tokens: Sequence[Hashable]) -> tuple[int, Node]:
        """The longest cached prefix of ``tokens`` (cut to whole pages) and its last node."""
        key = self._aligned(tokens)
        if not key:
            return 0, self.root
        return self._descend(key)

    def _descend(self, key: list[Hashable]) -> tuple[int, Node]:
        """Walk down along ``key``, stamping every node passed: the length matched and the
        node where it ends, split there if the match ends inside a node's tokens."""
        self._stamp(self.root)
        node, pos = self.root, 0
        while pos < len(key):
            child = node.children.get(self._child_key(key[pos:]))
            if child is None:
                break
            self._stamp(child)
            m = self._common(child.tokens, key[pos:])
            pos += m
            if m < len(child.tokens):
                return pos, self._split(child, m)
            node = child
        return pos, node

    def lock(self, node: Any) -> None:
        """One more reference on every node from ``node`` up to the root."""
        n: Optional[Node] = self.check(node)
        while n is not None and n is not self.root:
            if n.lock_ref == 0:
                self.evictable_size -= len(n.tokens)
                self.protected_size += len(n.tokens)
            n.lock_ref += 1
            self._update_leaf_status(n)
            n = n.parent

    def unlock(self, node: Any) -> None:
        """One reference fewer on every node from ``node`` up to the root. A node whose count
        is already 0 is refused (ValueError) and nothing changes."""
        n: Optional[Node] = self.check(node)
        if n is not self.root and n is not None and n.lock_ref == 0:
            raise ArgumentError(f"node={node!r} is not accepted: it is not locked (its lock count is 0)")
        while n is not None and n is not self.root:
            n.lock_ref -= 1
            if n.lock_ref == 0:
                self.evictable_size += len(n.tokens)
                self.protected_size -= len(n.tokens)
            self._update_leaf_status(n)
            n = n.parent

    def evict(self, num_tokens: int) -> int:
        """Remove unlocked leaves, least recently used first, until at least ``num_tokens``
        tokens are freed or none is left. Returns the tokens freed.

        A heap of the unlocked leaves by last access; when a leaf goes and its parent is left
        an unlocked leaf, the parent joins the heap. (Last-access times are unique, so the heap
        never has to compare two nodes.)"""
        heap = [(n.last_access, n) for n in self.evictable_leaves]
        heapq.heapify(heap)
        freed = 0
        while freed < num_tokens and heap:
            _, x = heapq.heappop(heap)
            parent = x.parent
            assert parent is not None
            del parent.children[self._child_key(x.tokens)]
            x.alive = False
            self.evictable_leaves.discard(x)
            freed += len(x.tokens)
            self.evictable_size -= len(x.tokens)
            self.num_nodes -= 1
            self.evicted_nodes += 1
            self.evicted_tokens += len(x.tokens)
            self._update_leaf_status(parent)
            if parent in self.evictable_leaves:
                heapq.heappush(heap, (parent.last_access, parent))
        return freed

    # --- looking at the tree -----------------------------------------------------------------

    @property
    def total_size(self) -> int:
        return self.evictable_size + self.protected_size

    def iter_nodes(self) -> Iterator[Node]:
        """Every node but the root, in preorder, children sorted by their tokens."""
        stack = sorted(self.root.children.values(), key=lambda n: n.tokens, reverse=True)
        while stack:
            n = stack.pop()
            yield n
            stack.extend(sorted(n.children.values(), key=lambda c: c.tokens, reverse=True))


# --- replay -------------------------------------------------------------------------------


class PrefixCache:
    """The radix tree as a serving engine uses it (RadixAttention), capacity in tokens."""

    def __init__(self, capacity: Optional[int], page_size: int):
        self.capacity = capacity
        self.tree = RadixTree(page_size)

    def serve(self, prompt: list, stored: list) -> int:
        """Serve one request. Match the prompt and lock the matched node (the request runs);
        make room for the tokens it adds (its stored length, in whole pages, minus the match)
        by evicting unlocked leaves; insert what it stores (prompt, maybe followed by output);
        unlock; and if the request alone overflowed the capacity, evict back down to it.
        Returns the prompt tokens that hit."""
        tree, capacity = self.tree, self.capacity
        hit, node = tree.match_prefix(prompt)
        tree.lock(node)
        if capacity is not None:
            aligned = len(stored) - len(stored) % tree.page_size
            need = max(0, aligned - hit)
            if tree.total_size + need > capacity:
                tree.evict(tree.total_size + need - capacity)
        tree.insert(stored)
        tree.unlock(node)
        if capacity is not None and tree.total_size > capacity:
            tree.evict(tree.total_size - capacity)
        return hit

    def counters(self) -> dict[str, int]:
        tree = self.tree
        return {
            "stored_tokens": tree.total_size,
            "nodes": tree.num_nodes,
            "evicted_nodes": tree.evicted_nodes,
            "evicted_tokens": tree.evicted_tokens,
        }


class WholeCache:
    """An exact-match cache of whole prompts, LRU, capacity in tokens (what the lecture
    compares the prefix cache against). A prompt hits, all its tokens, only if the very same
    prompt is cached; on a miss it is stored if it fits at all, after evicting least recently
    used prompts until it fits. Outputs are not part of the key and are not stored."""

    def __init__(self, capacity: Optional[int]):
        self.capacity = capacity
        self.entries: dict[tuple, None] = {}  # insertion order = LRU order (oldest first)
        self.used = 0
        self.evicted_entries = 0
        self.evicted_tokens = 0

    def serve(self, prompt: list, stored: list) -> int:
        key = tuple(prompt)
        if key in self.entries:
            del self.entries[key]
            self.entries[key] = None  # now the most recently used
            return len(key)
        cap = float("inf") if self.capacity is None else self.capacity
        if len(key) > cap:
            return 0
        while self.used + len(key) > cap and self.entries:
            oldest = next(iter(self.entries))
            del self.entries[oldest]
            self.used -= len(oldest)
            self.evicted_entries += 1
            self.evicted_tokens += len(oldest)
        self.entries[key] = None
        self.used += len(key)
        return 0

    def counters(self) -> dict[str, int]:
        return {
            "stored_tokens": self.used,
            "nodes": len(self.entries),
            "evicted_nodes": self.evicted_entries,
            "evicted_tokens": self.evicted_tokens,
        }


#: Every replay mode by name: a fresh cache of that kind from (capacity, page size).
MODES: dict[str, Callable[[Optional[int], int], Union[PrefixCache, WholeCache]]] = {
    "prefix": PrefixCache,
    "whole": lambda capacity, page_size: WholeCache(capacity),
}


def replay(
    prompts: Sequence[Sequence[Hashable]],
    capacity: Optional[int],
    mode: str = "prefix",
    page_size: int = 1,
    outputs: Optional[Sequence[Sequence[Hashable]]] = None,
) -> tuple[list[int], dict[str, int]]:
    """Serve ``prompts`` in order through a fresh cache of ``mode``; each request leaves its
    prompt (followed by its output, if ``outputs``) in the cache. Returns (hit tokens per
    request, counters)."""
    if mode not in MODES:
        raise ArgumentError(f"mode={mode!r} is not accepted: use one of {', '.join(MODES)}")
    cache = MODES[mode](capacity, page_size)
    hits = []
    for i, p in enumerate(prompts):
        prompt = list(p)
        stored = prompt + list(outputs[i]) if outputs is not None else prompt
        hits.append(cache.serve(prompt, stored))
    return hits, cache.counters()
