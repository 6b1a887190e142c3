"""The reference engine of :mod:`osbench.mem`: plain Python, written to be read.

Lecture section 3 (virtual memory and paging). Everything here agrees exactly with the
native engine (``rust/osbench-core/src/mem/``): same rules, same tie-breaks, same integers.

- :func:`translate`: one-level page table (3.2). :func:`slot_mapping`: PagedAttention's block
  table, the same translation with tokens for bytes (3.2).
- :func:`simulate`: the event-driven allocation simulator (3.3) with the strategies
  :class:`FirstFit`, :class:`BestFit`, :class:`WorstFit` (a free list with coalescing),
  :class:`Paged` and :class:`Reserve`.
"""

from __future__ import annotations

import bisect
import heapq
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Sequence
from typing import Optional, Union

from osbench.errors import ArgumentError

UNMAPPED = -1
SERVED, REJECTED, PREEMPTED = 0, 1, 2


# --- translation -------------------------------------------------------------------------


def _check_table(name: str, table: Sequence[int], unit: int) -> None:
    max_frame = (2**63 - 1) // unit - 1
    for i, frame in enumerate(table):
        if frame < UNMAPPED:
            raise ArgumentError(
                f"{name}={frame} at index {i} is not accepted: frame numbers >= 0, or -1 for an unmapped page"
            )
        if frame > max_frame:
            raise ArgumentError(
                f"{name}={frame} at index {i} is not accepted: frame numbers up to {max_frame}, so addresses fit in int64"
            )


def _look_up(name: str, lookups: Iterable[tuple[Sequence[int], int]], unit: int) -> tuple[list[int], int]:
    """Each (table, address) pair: the table's entry for page ``address // unit``, times ``unit``,
    plus the offset ``address % unit``; UNMAPPED where the page is past the end of the table or
    maps to UNMAPPED. Returns (results, number unmapped). A negative address is refused as one
    of ``name``."""
    out, unmapped = [], 0
    for i, (table, address) in enumerate(lookups):
        if address < 0:
            raise ArgumentError(f"{name}={address} at index {i} is not accepted: non-negative integers")
        page, offset = divmod(address, unit)
        frame = table[page] if page < len(table) else UNMAPPED
        if frame == UNMAPPED:
            unmapped += 1
            out.append(UNMAPPED)
        else:
            out.append(frame * unit + offset)
    return out, unmapped


def translate(vaddrs: Sequence[int], page_table: Sequence[int], page_size: int) -> tuple[list[int], int]:
    """Translate each virtual address: page number ``vaddr // page_size``, offset
    ``vaddr % page_size``, physical address ``frame * page_size + offset``. A page that is
    past the end of the table or maps to -1 is a page fault: the result is -1.
    Returns (physical addresses, number of faults)."""
    _check_table("page_table", page_table, page_size)
    return _look_up("vaddrs", ((page_table, vaddr) for vaddr in vaddrs), page_size)


def slot_mapping(
    block_table: Sequence[Sequence[int]], rows: Sequence[int], positions: Sequence[int], block_size: int
) -> tuple[list[int], int]:
    """Map token ``positions[i]`` of sequence ``rows[i]`` to its KV slot:
    ``block_table[row][pos // block_size] * block_size + pos % block_size``; -1 where the
    block is past the end of the row or unallocated (-1). Returns (slots, number unmapped)."""
    for table_row in block_table:
        _check_table("block_table", table_row, block_size)
    return _look_up("positions", ((block_table[row], pos) for row, pos in zip(rows, positions)), block_size)


# --- allocation strategies ---------------------------------------------------------------


class FreeList:
    """Free blocks of ``[0, capacity)`` as a sorted list of addresses and a size per address.
    A placement takes the low end of the chosen block; a release merges with free
    neighbours on both sides, so no two free blocks are ever adjacent."""

    def __init__(self, capacity: int):
        self.capacity = capacity
        self.addrs: list[int] = [0]
        self.size: dict[int, int] = {0: capacity}

    @property
    def free(self) -> int:
        return sum(self.size.values())

    def largest(self) -> int:
        return max(self.size.values(), default=0)

    def blocks(self) -> list[tuple[int, int]]:
        """Free blocks in address order, as (address, size)."""
        return [(a, self.size[a]) for a in self.addrs]

    def take(self, addr: int, size: int) -> None:
        """Allocate ``size`` units from the low end of the free block at ``addr``."""
        block = self.size.pop(addr)
        self.addrs.remove(addr)
        if block > size:
            self.size[addr + size] = block - size
            bisect.insort(self.addrs, addr + size)

    def release(self, addr: int, size: int) -> None:
        i = bisect.bisect_left(self.addrs, addr)
        if i > 0:  # merge with the free block just before
            before = self.addrs[i - 1]
            if before + self.size[before] == addr:
                addr, size = before, size + self.size.pop(before)
                self.addrs.pop(i - 1)
        after = addr + size
        if after in self.size:  # merge with the free block just after
            size += self.size.pop(after)
            self.addrs.remove(after)
        self.size[addr] = size
        bisect.insort(self.addrs, addr)


class Contiguous(ABC):
    """A contiguous allocator: one block per request. The fits are told each request's final
    size up front (the best case for contiguous allocation); ``pick`` chooses the block."""

    name = ""

    def __init__(self, capacity: int):
        self.list = FreeList(capacity)
        self.placed: dict[int, tuple[int, int]] = {}
        self.allocated = 0

    @abstractmethod
    def pick(self, size: int) -> Optional[int]:
        """The start of the free block to use for ``size`` units, or None."""

    def units_for(self, initial: int, final: int) -> Optional[int]:
        return final

    def admit(self, rid: int, initial: int, final: int) -> Optional[int]:
        size = self.units_for(initial, final)
        if size is None or size > self.list.largest():
            return None
        addr = self.pick(size)
        if addr is None:
            return None
        self.list.take(addr, size)
        self.placed[rid] = (addr, size)
        self.allocated += size
        return size

    def grow(self, rid: int, new_size: int) -> Optional[int]:
        return 0  # the block already covers the final size

    def release(self, rid: int) -> int:
        addr, size = self.placed.pop(rid)
        self.list.release(addr, size)
        self.allocated -= size
        return size

    def largest_free(self) -> int:
        return self.list.largest()


class FirstFit(Contiguous):
    """The lowest-addressed free block that is large enough."""

    name = "first"

    def pick(self, size: int) -> Optional[int]:
        for addr in self.list.addrs:
            if self.list.size[addr] >= size:
                return addr
        return None


class BestFit(Contiguous):
    """The smallest free block that is large enough; ties go to the lowest address."""

    name = "best"

    def pick(self, size: int) -> Optional[int]:
        fits = [(s, a) for a, s in self.list.size.items() if s >= size]
        return min(fits)[1] if fits else None


class WorstFit(Contiguous):
    """The largest free block; ties go to the lowest address."""

    name = "worst"

    def pick(self, size: int) -> Optional[int]:
        largest = self.list.largest()
        if largest < size:
            return None
        return min(a for a, s in self.list.size.items() if s == largest)


class Reserve(FirstFit):
    """Reserve ``bound`` units per request (placed first fit), because the final size is not
    known; a request whose final size exceeds the bound is refused."""

    name = "reserve"

    def __init__(self, capacity: int, bound: int):
        super().__init__(capacity)
        self.bound = bound

    def units_for(self, initial: int, final: int) -> Optional[int]:
        return None if final > self.bound else self.bound


class Paged:
    """``capacity // page_size`` pages; a request holds ``ceil(size / page_size)`` pages and
    takes one more whenever it grows past a page boundary (allocation on demand). A request
    that cannot get a page while growing is preempted."""

    name = "paged"

    def __init__(self, capacity: int, page_size: int):
        self.page_size = page_size
        self.total_pages = capacity // page_size
        self.free_pages = self.total_pages
        self.pages: dict[int, int] = {}

    @property
    def allocated(self) -> int:
        return (self.total_pages - self.free_pages) * self.page_size

    def admit(self, rid: int, initial: int, final: int) -> Optional[int]:
        need = -(-initial // self.page_size)
        if need > self.free_pages:
            return None
        self.pages[rid] = need
        self.free_pages -= need
        return need * self.page_size

    def grow(self, rid: int, new_size: int) -> Optional[int]:
        if new_size <= self.pages[rid] * self.page_size:
            return 0
        if self.free_pages == 0:
            return None
        self.pages[rid] += 1
        self.free_pages -= 1
        return self.page_size

    def release(self, rid: int) -> int:
        n = self.pages.pop(rid)
        self.free_pages += n
        return n * self.page_size

    def largest_free(self) -> int:
        return self.free_pages * self.page_size


Allocator = Union[Contiguous, Paged]
"""What the simulator drives: admit, grow, release, largest_free (see :class:`Contiguous`)."""

#: Every strategy by name: a fresh allocator from (capacity, page size, bound).
STRATEGIES: dict[str, Callable[[int, int, int], Allocator]] = {
    "first": lambda capacity, page_size, bound: FirstFit(capacity),
    "best": lambda capacity, page_size, bound: BestFit(capacity),
    "worst": lambda capacity, page_size, bound: WorstFit(capacity),
    "paged": lambda capacity, page_size, bound: Paged(capacity, page_size),
    "reserve": lambda capacity, page_size, bound: Reserve(capacity, bound),
}


def make(strategy: str, capacity: int, page_size: int = 1, bound: int = 1) -> Allocator:
    """A fresh allocator by name."""
    if strategy not in STRATEGIES:
        raise ArgumentError(f"strategy={strategy!r} is not accepted: use one of {', '.join(STRATEGIES)}")
    return STRATEGIES[strategy](capacity, page_size, bound)


# --- the simulator -----------------------------------------------------------------------

DEPART, GROW = 0, 1


def simulate(
    allocator: Allocator,
    arrival: Sequence[float],
    duration: Sequence[float],
    initial: Sequence[int],
    final_size: Sequence[int],
    capacity: int,
) -> tuple[list[int], list[int], list[int], list[int]]:
    """Run the requests through ``allocator``; event-driven.

    Request i arrives at ``arrival[i]`` holding ``initial[i]`` units, grows one unit at a time
    to ``final_size[i]`` (with ``g = final - initial``, unit k comes at
    ``arrival + duration * k / (g + 1)``) and leaves at ``arrival + duration``. Events at the
    same time: departures, then growth, then arrivals; lower request id first. A request
    larger than the capacity is refused. A request that cannot grow is preempted.

    Returns per request (status, data held, units allocated, largest free block), the last
    three as seen at its arrival, before it is placed."""
    n = len(arrival)
    status = [SERVED] * n
    data_seen, allocated_seen, largest_seen = [0] * n, [0] * n, [0] * n
    size, alive = [0] * n, [False] * n
    data = allocated = 0
    events: list[tuple[float, int, int]] = []  # (time, kind, request id): a min-heap

    def growth_time(i: int, k: int) -> float:
        g = final_size[i] - initial[i]
        return arrival[i] + duration[i] * k / (g + 1)

    def handle(kind: int, i: int) -> None:
        nonlocal data, allocated
        if not alive[i]:
            return  # preempted earlier: its remaining events are void
        if kind == DEPART:
            allocated -= allocator.release(i)
            data -= size[i]
            alive[i] = False
            return
        extra = allocator.grow(i, size[i] + 1)
        if extra is None:  # no room to grow: preempt
            allocated -= allocator.release(i)
            data -= size[i]
            alive[i] = False
            status[i] = PREEMPTED
            return
        allocated += extra
        data += 1
        size[i] += 1
        if size[i] < final_size[i]:  # schedule the next unit: number (units grown so far) + 1
            heapq.heappush(events, (growth_time(i, size[i] - initial[i] + 1), GROW, i))

    for i in range(n):
        t = arrival[i]
        while events and events[0][0] <= t:
            _, kind, j = heapq.heappop(events)
            handle(kind, j)
        data_seen[i], allocated_seen[i], largest_seen[i] = data, allocated, allocator.largest_free()
        u, f = initial[i], final_size[i]
        units = None if f > capacity else allocator.admit(i, u, f)
        if units is None:
            status[i] = REJECTED
            continue
        allocated += units
        data += u
        size[i] = u
        alive[i] = True
        heapq.heappush(events, (t + duration[i], DEPART, i))
        if f > u:
            heapq.heappush(events, (growth_time(i, 1), GROW, i))
    while events:
        _, kind, j = heapq.heappop(events)
        handle(kind, j)
    return status, data_seen, allocated_seen, largest_seen
