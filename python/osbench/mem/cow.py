"""Copy-on-write page accounting for fork-style sharing (lecture section 3.5, demo 4).

A :class:`BlockManager` holds sequences of tokens in blocks of ``block_size`` tokens, with a
reference count per physical block. ``fork`` shares every block of the parent (copy-on-write)
or copies them all (naive). Appending a token to a sequence whose last block is shared (its
reference count is above one) first copies that block: the only copy copy-on-write ever
makes. This is how PagedAttention runs parallel sampling and beam search.
"""

from __future__ import annotations

from dataclasses import dataclass

from osbench import _checks
from osbench._record import Record
from osbench.errors import ArgumentError


class BlockManager:
    """Blocks, block tables and reference counts.

    Blocks are numbered from 0; a freed block is reused (lowest number first).
    Counters: ``copied`` (blocks copied, by forks or by copy-on-write), ``allocated`` (blocks
    ever taken from the pool, copies included), ``in_use`` (blocks with a reference now)."""

    def __init__(self, block_size: int = 16, *, copy_on_write: bool = True):
        self.block_size = _checks.positive_int("block_size", block_size)
        self.copy_on_write = bool(copy_on_write)
        self.refcounts: dict[int, int] = {}
        self._tables: dict[int, list[int]] = {}
        self._lengths: dict[int, int] = {}
        self._free: list[int] = []
        self._next_block = 0
        self._next_seq = 0
        self.copied = 0
        self.allocated = 0

    # blocks
    def _new_block(self) -> int:
        if self._free:
            self._free.sort()
            block = self._free.pop(0)
        else:
            block = self._next_block
            self._next_block += 1
        self.refcounts[block] = 1
        self.allocated += 1
        return block

    def _drop(self, block: int) -> None:
        self.refcounts[block] -= 1
        if self.refcounts[block] == 0:
            del self.refcounts[block]
            self._free.append(block)

    def refcount(self, block: int) -> int:
        """References to physical ``block`` (0 when it is free)."""
        return self.refcounts.get(block, 0)

    @property
    def in_use(self) -> int:
        return len(self.refcounts)

    # sequences
    def _seq(self, seq: int) -> list[int]:
        if seq not in self._tables:
            raise ArgumentError(f"seq={seq!r} is not accepted: no such live sequence (have {sorted(self._tables)})")
        return self._tables[seq]

    def block_table(self, seq: int) -> list[int]:
        """The physical blocks of ``seq``, in logical order (a copy)."""
        return list(self._seq(seq))

    def length(self, seq: int) -> int:
        self._seq(seq)
        return self._lengths[seq]

    @property
    def sequences(self) -> list[int]:
        return sorted(self._tables)

    def new_sequence(self, tokens: int = 0) -> int:
        """A new sequence holding ``tokens`` tokens (e.g. a prompt); returns its id."""
        tokens = _checks.non_negative_int("tokens", tokens)
        seq = self._next_seq
        self._next_seq += 1
        self._tables[seq] = []
        self._lengths[seq] = 0
        self.append(seq, tokens)
        return seq

    def fork(self, parent: int) -> int:
        """A child with the parent's tokens: shared blocks (copy-on-write) or copies (naive)."""
        blocks = self._seq(parent)
        child = self._next_seq
        self._next_seq += 1
        if self.copy_on_write:
            for b in blocks:
                self.refcounts[b] += 1
            self._tables[child] = list(blocks)
        else:
            self._tables[child] = [self._new_block() for _ in blocks]
            self.copied += len(blocks)
        self._lengths[child] = self._lengths[parent]
        return child

    def append(self, seq: int, tokens: int = 1) -> int:
        """Write ``tokens`` new tokens at the end of ``seq``; returns the blocks copied."""
        tokens = _checks.non_negative_int("tokens", tokens)
        table = self._seq(seq)
        copied = 0
        for _ in range(tokens):
            n = self._lengths[seq]
            if n % self.block_size == 0:
                table.append(self._new_block())  # the last block is full (or there is none)
            elif self.refcounts[table[-1]] > 1:
                # Writing into a shared block: copy it first, then drop our reference.
                old = table[-1]
                table[-1] = self._new_block()
                self._drop(old)
                copied += 1
            self._lengths[seq] = n + 1
        self.copied += copied
        return copied

    def free(self, seq: int) -> None:
        """Drop ``seq``: every block loses one reference; a block at zero returns to the pool."""
        for b in self._seq(seq):
            self._drop(b)
        del self._tables[seq]
        del self._lengths[seq]


@dataclass(frozen=True)
class Sharing(Record):
    """Naive copying against copy-on-write: blocks in use at the end and blocks copied."""

    scenario: str
    naive_blocks: int
    cow_blocks: int
    naive_copied: int
    cow_copied: int


def parallel_sampling(samples: int = 8, prompt: int = 1024, generated: int = 200, block_size: int = 16) -> Sharing:
    """``samples`` answers forked from one prompt (the prompt's sequence stays, as a cached
    prefix), each generating ``generated`` tokens. Lecture demo 4: 8 x 200 on a 1,024-token
    prompt, 16 tokens a block."""
    samples = _checks.positive_int("samples", samples)
    prompt = _checks.positive_int("prompt", prompt)
    generated = _checks.non_negative_int("generated", generated)
    # Without copy-on-write every answer holds its own copy of the prompt's blocks: refuse at
    # once what the machine cannot hold (about 64 bytes a block and 400 a sequence in Python).
    block_size = _checks.positive_int("block_size", block_size)
    blocks = -(-(prompt + generated) // block_size)
    _checks.affordable("samples", samples, samples * (400 + 64 * blocks) + 64 * prompt, "the answers' block tables")
    out = {}
    for cow in (False, True):
        m = BlockManager(block_size, copy_on_write=cow)
        parent = m.new_sequence(prompt)
        children = [m.fork(parent) for _ in range(samples)]
        for _ in range(generated):  # decode steps: every answer gets one token
            for c in children:
                m.append(c)
        out[cow] = (m.in_use, m.copied)
    return Sharing("parallel sampling", out[False][0], out[True][0], out[False][1], out[True][1])


def beam_search(beam: int = 4, prompt: int = 1000, steps: int = 1, block_size: int = 16) -> list[Sharing]:
    """Exercise 4: beam search where, at every step, the best beam spawns all ``beam`` new
    candidates (the worst case for copying): it is forked ``beam - 1`` times, the other beams
    are dropped, and every candidate writes one token. One :class:`Sharing` per step (blocks
    copied in that step; blocks in use after it)."""
    beam = _checks.positive_int("beam", beam)
    prompt = _checks.positive_int("prompt", prompt)
    steps = _checks.positive_int("steps", steps)
    per_step: dict[bool, list[tuple[int, int]]] = {}
    for cow in (False, True):
        m = BlockManager(block_size, copy_on_write=cow)
        beams = [m.new_sequence(prompt)]
        rows = []
        for _ in range(steps):
            before = m.copied
            best = beams[0]
            new = [best] + [m.fork(best) for _ in range(beam - 1)]
            for b in beams[1:]:
                m.free(b)
            for b in new:
                m.append(b)
            beams = new
            rows.append((m.in_use, m.copied - before))
        per_step[cow] = rows
    return [
        Sharing(f"beam search step {i + 1}", n[0], c[0], n[1], c[1])
        for i, (n, c) in enumerate(zip(per_step[False], per_step[True]))
    ]
