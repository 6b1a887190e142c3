"""Size: the reference engine's class (the readable definition the native engine follows)."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Optional


class Size:
    """Size (the classic web-cache baseline, Williams et al. 1996): evict the largest cached
    object, so that one eviction frees the most room and many small objects stay.

    As libCacheSim's ``Size`` (``libCacheSim/cache/eviction/Size.c``), the objects sit in a
    binary max-heap by size, the one libCacheSim takes from libpqueue (``pqueue.c``): entries
    ``1..n`` of an array, a parent above both its children, an entry moved up past a parent
    strictly smaller and down past its larger child while strictly smaller, the right child
    taken only when strictly larger than the left. Equal sizes are therefore ordered by where
    the heap happens to hold them (with unit sizes every object ties), and this class keeps
    that heap step for step so that it evicts what libCacheSim evicts, ties included.

    A hit sets the object's priority to the size the access gives (libCacheSim's
    ``pqueue_change_priority`` with ``req->obj_size``) and settles it: up if it grew, else
    down. The bytes an object takes stay those it entered with. A miss of an object larger
    than the cache changes nothing; otherwise the largest objects leave (the heap's top,
    libpqueue's ``pqueue_pop``) until the newcomer fits, and it joins at the heap's end and
    moves up."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.heap: list[Hashable] = [None]  # libpqueue's array; slot 0 unused
        self.position: dict[Hashable, int] = {}  # key -> its index in heap
        self.priority: dict[Hashable, int] = {}  # key -> its size in the heap's order
        self.size: dict[Hashable, int] = {}  # key -> the bytes it entered with
        self.used = 0

    def access(self, key: Hashable, next_use: Optional[int] = None, size: int = 1) -> bool:
        if key in self.size:
            old, self.priority[key] = self.priority[key], size
            if old < size:
                self._bubble_up(self.position[key])
            else:
                self._percolate_down(self.position[key])
            return True
        if size > self.capacity:
            return False  # never admitted
        while self.used + size > self.capacity:
            self._evict()
        self.size[key] = self.priority[key] = size
        self.used += size
        self.heap.append(key)
        self._bubble_up(len(self.heap) - 1)
        return False

    def _evict(self) -> None:
        """libpqueue's ``pqueue_pop``: the top leaves, the last entry takes its place and moves down."""
        victim = self.heap[1]
        last = self.heap.pop()
        if len(self.heap) > 1:
            self.heap[1] = last
            self.position[last] = 1
            self._percolate_down(1)
        del self.position[victim], self.priority[victim]
        self.used -= self.size.pop(victim)

    def _place(self, i: int, key: Hashable) -> None:
        self.heap[i] = key
        self.position[key] = i

    def _bubble_up(self, i: int) -> None:
        moving = self.heap[i]
        while i > 1 and self.priority[self.heap[i // 2]] < self.priority[moving]:
            self._place(i, self.heap[i // 2])
            i //= 2
        self._place(i, moving)

    def _percolate_down(self, i: int) -> None:
        moving = self.heap[i]
        n = len(self.heap)
        while True:
            child = 2 * i
            if child >= n:
                break
            if child + 1 < n and self.priority[self.heap[child]] < self.priority[self.heap[child + 1]]:
                child += 1  # the right child, only when strictly larger
            if not self.priority[moving] < self.priority[self.heap[child]]:
                break
            self._place(i, self.heap[child])
            i = child
        self._place(i, moving)

    def __len__(self) -> int:
        return len(self.size)

    def __contains__(self, key: Hashable) -> bool:
        return key in self.size
