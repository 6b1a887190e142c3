"""Address translation and PagedAttention slot mapping (lecture section 3.2)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from osbench import _checks, _native
from osbench._record import Record
from osbench.errors import ArgumentError, ArgumentTypeError
from osbench.mem import reference

INT64_MAX = 2**63 - 1


@dataclass(frozen=True)
class Translation(Record):
    """Physical addresses (int64, -1 where the page is unmapped) and the page-fault count.

    Unpacks as a pair: ``physical, faults = ob.mem.translate(...)``."""

    physical: np.ndarray
    faults: int
    accesses: int

    @property
    def fault_ratio(self) -> float:
        return self.faults / self.accesses if self.accesses else 0.0

    def __iter__(self) -> Iterator[Any]:
        return iter((self.physical, self.faults))

    def to_dict(self) -> dict[str, Any]:
        d = super().to_dict()
        d["physical"] = self.physical.tolist()
        d["fault_ratio"] = self.fault_ratio
        return d


@dataclass(frozen=True)
class SlotMapping:
    """KV slots (int64, shaped like the positions; -1 where the block is not allocated) and
    how many tokens were unmapped. Unpacks as ``slots, unmapped``."""

    slots: np.ndarray
    unmapped: int

    def __iter__(self) -> Iterator[Any]:
        return iter((self.slots, self.unmapped))

    def to_dict(self) -> dict[str, Any]:
        return {"slots": self.slots.tolist(), "unmapped": self.unmapped}


def _int_values(name: str, value: Any, ndim: tuple[int, ...] = (1,)) -> np.ndarray:
    """Integers as int64 (refusing floats, objects, values beyond int64)."""
    try:
        arr = np.asarray(value)
    except (ValueError, TypeError) as exc:
        raise ArgumentTypeError(f"{name} is not accepted: {exc}") from None
    if arr.ndim == 0 and 0 not in ndim:
        arr = arr.reshape(1)
    if arr.ndim not in ndim and not (arr.ndim == 0 and 0 in ndim):
        raise ArgumentError(
            f"{name} is not accepted: it must have {' or '.join(map(str, ndim))} dimensions, got shape {arr.shape}"
        )
    if arr.size == 0:
        return np.zeros(arr.shape, dtype=np.int64)
    if arr.dtype.kind not in "iu":
        raise ArgumentTypeError(f"{name} is not accepted: it must hold integers, got dtype {arr.dtype}")
    if arr.dtype == np.uint64 and int(arr.max()) > INT64_MAX:
        raise ArgumentError(f"{name}={int(arr.max())} is not accepted: values must fit in int64")
    return np.ascontiguousarray(arr, dtype=np.int64)


def _table(name: str, table: Any) -> np.ndarray:
    """A page or block table: a dict {page: frame} or a 1-D sequence of frames (-1 = unmapped)."""
    if isinstance(table, dict):
        keys = list(table)
        for k in keys:
            if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 0:
                raise ArgumentError(f"{name} key {k!r} is not accepted: page numbers are non-negative integers")
        size = max(keys) + 1 if keys else 0
        if size > 2**31:
            raise ArgumentError(f"{name} key {size - 1} is not accepted: a dict table holds pages below 2**31")
        arr = np.full(size, -1, dtype=np.int64)
        for k, v in table.items():
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise ArgumentTypeError(f"{name}[{k}]={v!r} is not accepted: frame numbers are integers")
            if not -1 <= v <= INT64_MAX:
                raise ArgumentError(f"{name}[{k}]={v!r} is not accepted: frame numbers >= 0, or -1 for unmapped")
            arr[k] = v
        return arr
    return _int_values(name, table)


def translate(vaddrs: Any, page_table: Any, page_size: int = 4096, *, engine: str = "native") -> Translation:
    """Translate virtual addresses through a one-level page table (lecture 3.2, demo 1).

    ``page_table[vpn]`` is the frame holding virtual page ``vpn``, or -1; a dict
    ``{vpn: frame}`` also works. ``page_size`` is a power of two. Returns the physical
    addresses (-1 where the page is unmapped: a page fault) and the fault count.

    >>> import osbench as ob
    >>> ob.mem.translate([5000, 20000], {0: 7, 1: 3, 2: 12, 3: 5}, 4096).physical.tolist()
    [13192, -1]
    """
    page_size = _checks.power_of_two("page_size", page_size, " (the offset is the low bits of the address)")
    engine = _checks.engine(engine)
    table = _table("page_table", page_table)
    v = _int_values("vaddrs", vaddrs, ndim=(0, 1))
    shape = v.shape
    v = v.reshape(-1)
    if engine == "reference":
        phys, faults = reference.translate(v.tolist(), table.tolist(), page_size)
        out = np.array(phys, dtype=np.int64)
    else:
        out, faults = _native.mem_translate(v, table, page_size)
    return Translation(out.reshape(shape), int(faults), int(v.size))


def _block_rows(block_table: Any) -> np.ndarray:
    """A block table as a 2-D int64 array: one row per sequence, -1 padded."""
    if isinstance(block_table, dict):
        return _table("block_table", block_table).reshape(1, -1)
    if (
        isinstance(block_table, (list, tuple))
        and block_table
        and all(isinstance(r, (list, tuple, np.ndarray, dict)) for r in block_table)
    ):
        rows = [_table("block_table", r) for r in block_table]
        width = max((len(r) for r in rows), default=0)
        out = np.full((len(rows), width), -1, dtype=np.int64)
        for i, r in enumerate(rows):
            out[i, : len(r)] = r
        return out
    arr = _int_values("block_table", block_table, ndim=(1, 2))
    return arr.reshape(1, -1) if arr.ndim == 1 else arr


def slot_mapping(
    block_table: Any,
    positions: Any,
    block_size: int = 16,
    *,
    seq_ids: Optional[Any] = None,
    engine: str = "native",
) -> SlotMapping:
    """Map token positions to physical KV slots through a block table (PagedAttention).

    Token ``p`` of a sequence lives in slot ``table[p // block_size] * block_size +
    p % block_size``. Shapes:

    - one sequence: ``block_table`` 1-D (or a dict ``{logical block: physical block}``),
      ``positions`` 1-D;
    - a batch: ``block_table`` 2-D (one row per sequence, -1 padded; a list of lists is
      padded for you) with ``positions`` 2-D (row i are positions of sequence i), or
      ``positions`` 1-D with ``seq_ids`` giving each token's row (the flattened form).

    Slots are -1 where the block is unallocated or past the end of the row.

    >>> import osbench as ob
    >>> ob.mem.slot_mapping({0: 9, 1: 2, 2: 31}, [37], 16).slots.tolist()
    [501]
    """
    block_size = _checks.positive_int("block_size", block_size, maximum=2**40)
    engine = _checks.engine(engine)
    table = _block_rows(block_table)
    pos = _int_values("positions", positions, ndim=(0, 1, 2))
    shape = pos.shape
    if table.shape[1] == 0:  # no blocks at all: one unmapped column keeps the shapes simple
        table = np.full((table.shape[0], 1), -1, dtype=np.int64)
    n_rows, row_len = table.shape
    if seq_ids is not None:
        ids = _int_values("seq_ids", seq_ids)
        if pos.ndim > 1 or ids.size != pos.size:
            raise ArgumentError(
                f"seq_ids is not accepted: it needs 1-D positions and one id per position, got {ids.size} ids for positions of shape {shape}"
            )
        if ids.size and (ids.min() < 0 or ids.max() >= n_rows):
            bad = int(ids.min()) if ids.min() < 0 else int(ids.max())
            raise ArgumentError(f"seq_ids={bad} is not accepted: row numbers in [0, {n_rows})")
        rows = ids
    elif pos.ndim == 2:
        if pos.shape[0] != n_rows:
            raise ArgumentError(
                f"positions is not accepted: {pos.shape[0]} rows of positions for a block table of {n_rows} rows"
            )
        rows = np.repeat(np.arange(n_rows, dtype=np.int64), pos.shape[1])
    else:
        if n_rows != 1:
            raise ArgumentError(
                f"positions is not accepted: 1-D positions with a block table of {n_rows} rows need seq_ids"
            )
        rows = np.zeros(pos.size, dtype=np.int64)
    flat = pos.reshape(-1)
    if engine == "reference":
        slots_list, unmapped = reference.slot_mapping(table.tolist(), rows.tolist(), flat.tolist(), block_size)
        slots = np.array(slots_list, dtype=np.int64)
    elif seq_ids is not None:
        slots, unmapped = _native.mem_slot_mapping(table.reshape(-1), row_len, flat, block_size, rows)
    else:
        per_row = pos.shape[1] if pos.ndim == 2 else max(flat.size, 1)
        slots, unmapped = _native.mem_slot_mapping(table.reshape(-1), row_len, flat, block_size, None, per_row)
    return SlotMapping(slots.reshape(shape), int(unmapped))


def block_table_size(tokens: int, block_size: int, *, entry_bytes: int = 4, batch: int = 1) -> dict[str, int]:
    """Exercise 3: entries and bytes of the block tables of ``batch`` sequences of ``tokens``
    tokens each (``ceil(tokens / block_size)`` entries per sequence)."""
    tokens = _checks.positive_int("tokens", tokens)
    block_size = _checks.positive_int("block_size", block_size)
    entry_bytes = _checks.positive_int("entry_bytes", entry_bytes)
    batch = _checks.positive_int("batch", batch)
    entries = -(-tokens // block_size)
    return {
        "entries": entries,
        "bytes": entries * entry_bytes,
        "batch_entries": entries * batch,
        "batch_bytes": entries * entry_bytes * batch,
    }
