"""FlashProb: the reference engine's class (the readable definition the native engine follows)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable
from typing import Optional

from osbench.cache.reference.lruprob import threshold
from osbench.errors import ArgumentError
from osbench.splitmix import SplitMix64


class FlashProb:
    """FlashProb (libCacheSim's ``FlashProb``, ``cache/eviction/other/flashProb.c``): an LRU in
    RAM in front of a FIFO on flash, and an object leaving RAM written to flash only with
    probability ``1 / threshold(disk_admit_prob)`` (``1 / disk_admit_prob`` truncated, as
    libCacheSim's ``inv_prob``: 0.2 admits one in 5, 0.3 one in 3, above 0.5 every object). A
    model of a flash cache that spares its writes: the objects refused are the flash writes saved.

    The flash FIFO holds ``capacity - int(capacity * ram_size_ratio)``; RAM's own share
    (``int(capacity * ram_size_ratio)``) bounds nothing, since libCacheSim never asks RAM's LRU
    for room: the whole cache does the accounting, as ``cache_get_base``. libCacheSim refuses a
    cache whose RAM share is 0, so does this class (capacity 20 at least, at the default 0.05). A miss of an object
    larger than the cache changes nothing; otherwise, while RAM and flash together hold too much
    for the newcomer, one eviction runs: with RAM empty, flash's oldest leaves; else RAM's least
    recent leaves RAM, a draw (``below(threshold) == 0``) decides whether it goes to flash, and
    there it enters at the new end (if it fits flash at all), flash's oldest leaving until it
    fits. An object moved to flash frees nothing, so the loop goes on to RAM's next. The
    newcomer then enters RAM at its recent end, however much RAM holds: RAM takes what flash
    leaves, the whole cache while flash is empty. A hit in RAM moves the object to its recent
    end; a hit on flash changes nothing (a FIFO).

    With ``size=`` the capacity and flash's share count bytes. The draws are splitmix64 seeded
    with ``seed``, one per object leaving RAM; libCacheSim draws ``next_rand() % inv_prob == 0``
    in the same place from its own generator, so the two agree in distribution, and exactly
    (miss for miss) at ``disk_admit_prob`` above 0.5, where every object goes to flash."""

    def __init__(
        self, capacity: int, seed: int = 0, ram_size_ratio: float = 0.05, disk_admit_prob: float = 0.2
    ) -> None:
        ram_size = int(capacity * ram_size_ratio)
        if ram_size < 1:
            raise ArgumentError(
                f"capacity={capacity} is not accepted: its RAM share ({ram_size_ratio} of it) holds no object "
                "(libCacheSim refuses it)"
            )
        self.capacity = capacity
        self.disk_size = capacity - ram_size
        self.threshold = threshold(disk_admit_prob)
        self.rng = SplitMix64(seed)
        # key -> size, the next to leave first: RAM least recent first, flash oldest first
        self.ram: OrderedDict[Hashable, int] = OrderedDict()
        self.disk: OrderedDict[Hashable, int] = OrderedDict()
        self.ram_used = self.disk_used = 0

    def access(self, key: Hashable, next_use: Optional[int] = None, size: int = 1) -> bool:
        if key in self.ram:
            self.ram.move_to_end(key)
            return True
        if key in self.disk:
            return True
        if size > self.capacity:
            return False  # never admitted
        while self.ram_used + self.disk_used + size > self.capacity:
            self._evict()
        self.ram[key] = size
        self.ram_used += size
        return False

    def _evict(self) -> None:
        """libCacheSim's ``flashProb_evict``: one object leaves RAM (perhaps for flash), or,
        with RAM empty, flash's oldest leaves the cache."""
        if not self.ram:
            self.disk_used -= self.disk.popitem(last=False)[1]
            return
        key, size = self.ram.popitem(last=False)
        self.ram_used -= size
        # The draw first, then flash's own get: an object larger than flash is not admitted.
        if self.rng.below(self.threshold) == 0 and size <= self.disk_size:
            while self.disk_used + size > self.disk_size:
                self.disk_used -= self.disk.popitem(last=False)[1]
            self.disk[key] = size
            self.disk_used += size

    @property
    def used(self) -> int:
        """Bytes cached (RAM and flash), with ``size=``."""
        return self.ram_used + self.disk_used

    def __len__(self) -> int:
        return len(self.ram) + len(self.disk)

    def __contains__(self, key: Hashable) -> bool:
        return key in self.ram or key in self.disk
