"""SGLang's radix cache over token ids, in two engines: :class:`RadixCache` (lecture section 5)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np

from osbench import _checks, _native
from osbench._record import Record
from osbench.errors import ArgumentError, ArgumentTypeError
from osbench.radix import reference
from osbench.radix.workloads import Vocabulary


@dataclass(frozen=True)
class Match:
    """What :meth:`RadixCache.match_prefix` returns: the cached prefix length and the node
    where it ends (lock it while the request runs)."""

    length: int
    node: Any = field(compare=False)

    def to_dict(self) -> dict[str, Any]:
        return {"length": self.length}


@dataclass(frozen=True)
class NodeInfo(Record):
    """One node (not the root) as listed by :meth:`RadixCache.nodes`: its position in preorder
    (children sorted by their tokens), its parent's position (-1 for a child of the root), its
    tokens, lock count and last-access tick. ``node`` is its handle."""

    index: int
    parent: int
    tokens: tuple
    lock_ref: int
    last_access: int
    node: Any = field(compare=False, repr=False, default=None)

    def to_dict(self) -> dict[str, Any]:
        d = super().to_dict()
        d.pop("node")
        d["tokens"] = list(self.tokens)
        return d


def check_page_size(value: Any) -> int:
    """A page size as both the tree and the replays take it."""
    return _checks.positive_int("page_size", value, maximum=2**31)


class RadixCache:
    """SGLang's radix cache over token ids (lecture section 5).

    ``insert(tokens) -> int`` (length already cached), ``match_prefix(tokens) -> Match``,
    ``lock(node)``/``unlock(node)``, ``evict(n) -> tokens freed``; ``total_size``,
    ``evictable_size``, ``protected_size``, ``num_nodes``, ``nodes()`` (and iteration),
    ``pretty()``. ``page_size > 1`` cuts keys to whole pages and keys children by first page.

    Tokens: ints (an int64 array or any sequence of int). With ``vocab`` (a
    :class:`Vocabulary`), a text (split on whitespace) or a sequence of words is encoded first,
    and ``pretty()`` shows words. The reference engine also takes any hashable tokens as they are.

    Node handles are opaque: pass them back to ``lock``/``unlock``/``node_info`` of the same
    tree. A handle from another tree, or to an evicted node, is refused with ValueError.
    """

    def __init__(self, page_size: int = 1, *, engine: str = "native", vocab: Optional[Vocabulary] = None):
        self.page_size = check_page_size(page_size)
        self.engine = _checks.engine(engine)
        if vocab is not None and not isinstance(vocab, Vocabulary):
            raise ArgumentTypeError(f"vocab={vocab!r} is not accepted: it must be an osbench.radix.Vocabulary or None")
        self.vocab = vocab
        self._tree: Any = (
            _native.RadixTree(self.page_size) if self.engine == "native" else reference.RadixTree(self.page_size)
        )

    # --- tokens in ---------------------------------------------------------------------------

    def _tokens(self, tokens: Any) -> Any:
        if self.vocab is not None and (
            isinstance(tokens, str) or (isinstance(tokens, (list, tuple)) and tokens and isinstance(tokens[0], str))
        ):
            return self.vocab.encode(tokens)
        if isinstance(tokens, np.ndarray):
            if tokens.ndim != 1:
                raise ArgumentError(f"tokens is not accepted: it must be 1-D, got an array of shape {tokens.shape}")
            if tokens.size and tokens.dtype.kind not in "iu":
                raise ArgumentTypeError(f"tokens is not accepted: integer tokens are needed, got dtype {tokens.dtype}")
            if self.engine == "native":
                if tokens.dtype == np.uint64 and tokens.size and tokens.max() > np.iinfo(np.int64).max:
                    raise ArgumentError("tokens is not accepted: the native engine takes tokens in [-2**63, 2**63)")
                return np.ascontiguousarray(tokens, dtype=np.int64)
            return tokens.tolist()
        if isinstance(tokens, str):
            raise ArgumentTypeError(
                f"tokens={tokens[:40]!r} is not accepted: pass a sequence of tokens "
                "(for text, give the cache a vocab=osbench.radix.Vocabulary())"
            )
        if self.engine == "reference":
            try:
                return list(tokens)
            except TypeError:
                raise ArgumentTypeError(f"tokens={tokens!r} is not accepted: it must be a sequence of tokens") from None
        return tokens  # the native engine checks each item is an int64

    # --- operations ---------------------------------------------------------------------------

    def insert(self, tokens: Any) -> int:
        """Insert a sequence (cut to whole pages): walks the tree, splits where it diverges inside
        a node, adds one leaf for the new suffix. Returns the length that was already cached."""
        return int(self._tree.insert(self._tokens(tokens)))

    def match_prefix(self, tokens: Any) -> Match:
        """The longest cached prefix (in whole pages) and the node where it ends. Stamps the
        last-access time of the path; a match ending inside a node splits it there and returns
        the upper part. An empty query returns the root and stamps nothing."""
        length, node = self._tree.match_prefix(self._tokens(tokens))
        return Match(int(length), node)

    def _node(self, node: Any) -> Any:
        if isinstance(node, Match):
            node = node.node
        expected = _native.RadixNode if self.engine == "native" else reference.Node
        if not isinstance(node, expected):
            raise ArgumentTypeError(
                f"node={node!r} is not accepted: it must be a node handle from this {self.engine} RadixCache"
                " (Match.node)"
            )
        return node

    def lock(self, node: Any) -> None:
        """Add one reference to every node from ``node`` (a handle or a Match) up to the root;
        a node going 0 -> 1 moves its tokens from evictable to protected."""
        self._tree.lock(self._node(node))

    def unlock(self, node: Any) -> None:
        """Remove one reference from every node from ``node`` up to the root (1 -> 0 moves the
        tokens back to evictable). Unlocking a node whose count is 0 is a ValueError."""
        self._tree.unlock(self._node(node))

    def evict(self, num_tokens: int) -> int:
        """Remove least recently used unlocked leaves, whole nodes, until at least ``num_tokens``
        tokens are freed or nothing unlocked is left; a parent whose last child went becomes a
        candidate. Returns the tokens freed (may exceed ``num_tokens``: nodes go whole)."""
        n = _checks.non_negative_int("num_tokens", num_tokens)
        return int(self._tree.evict(min(n, 2**64 - 1)))

    # --- sizes --------------------------------------------------------------------------------

    @property
    def total_size(self) -> int:
        """Tokens stored (evictable + protected)."""
        return int(self._tree.total_size)

    @property
    def evictable_size(self) -> int:
        """Tokens in nodes no request holds."""
        return int(self._tree.evictable_size)

    @property
    def protected_size(self) -> int:
        """Tokens in locked nodes."""
        return int(self._tree.protected_size)

    @property
    def num_nodes(self) -> int:
        """Nodes other than the root."""
        return int(self._tree.num_nodes)

    @property
    def clock(self) -> int:
        """The logical clock: the last tick given to a last-access stamp."""
        return int(self._tree.clock)

    @property
    def evicted_nodes(self) -> int:
        return int(self._tree.evicted_nodes)

    @property
    def evicted_tokens(self) -> int:
        return int(self._tree.evicted_tokens)

    def __len__(self) -> int:
        return self.num_nodes

    # --- looking at the tree ------------------------------------------------------------------

    def nodes(self) -> list[NodeInfo]:
        """Every node but the root, in preorder, children sorted by their tokens. Two engines
        holding the same tree give equal lists."""
        if self.engine == "native":
            raw = [(i, p, tuple(tok), lock, last, h) for i, p, tok, lock, last, h in self._tree.nodes()]
        else:
            raw = [
                (
                    id(n),
                    -1 if n.parent is self._tree.root else id(n.parent),
                    tuple(n.tokens),
                    n.lock_ref,
                    n.last_access,
                    n,
                )
                for n in self._tree.iter_nodes()
            ]
        position = {r[0]: k for k, r in enumerate(raw)}
        return [
            NodeInfo(k, position.get(p, -1), tok, lock, last, h) for k, (_, p, tok, lock, last, h) in enumerate(raw)
        ]

    def __iter__(self) -> Iterator[NodeInfo]:
        return iter(self.nodes())

    def node_info(self, node: Any) -> NodeInfo:
        """Tokens, lock count and last access of one node (index and parent are -1 here: they
        are positions in :meth:`nodes`)."""
        node = self._node(node)
        if self.engine == "native":
            _, _, tok, lock, last, h = self._tree.node(node)
            return NodeInfo(-1, -1, tuple(tok), lock, last, h)
        n = self._tree.check(node)
        return NodeInfo(-1, -1, tuple(n.tokens), n.lock_ref, n.last_access, n)

    def prefix_of(self, node: Any) -> tuple:
        """The whole token sequence from the root down to (and including) ``node``."""
        node = self._node(node)
        parts = []
        if self.engine == "native":
            cur = node
            while cur is not None:
                parts.append(tuple(self._tree.node(cur)[2]) if cur != self._tree.root() else ())
                cur = self._tree.parent(cur)
        else:
            n = self._tree.check(node)
            while n is not None:
                parts.append(tuple(n.tokens))
                n = n.parent
        return tuple(t for part in reversed(parts) for t in part)

    def pretty(self, max_tokens: int = 12) -> str:
        """The tree drawn as in the lecture: one line per node, indented by depth, showing its
        tokens (words if the cache has a vocab), its length, and its lock count if not 0."""
        nodes = self.nodes()
        depth: dict[int, int] = {}
        lines = []
        for n in nodes:
            d = 0 if n.parent < 0 else depth[n.parent] + 1
            depth[n.index] = d
            shown = list(n.tokens[:max_tokens])
            words = self.vocab.decode(shown) if self.vocab is not None else [str(t) for t in shown]
            more = " ..." if len(n.tokens) > max_tokens else ""
            lock = f"  lock_ref {n.lock_ref}" if n.lock_ref else ""
            lines.append(f"{'  ' * d}└ [{' '.join(words)}{more}]  length {len(n.tokens)}{lock}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (
            f"RadixCache(page_size={self.page_size}, engine={self.engine!r}, nodes={self.num_nodes}, "
            f"total_size={self.total_size}, protected_size={self.protected_size})"
        )


__all__ = ["Match", "NodeInfo", "RadixCache"]
