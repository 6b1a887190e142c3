"""CLOCK-Pro as libCacheSim's ClockPro behaves: the reference engine's class (the readable
definition the native engine follows)."""

from __future__ import annotations

from collections.abc import Hashable

from osbench.cache._parts import DemandPaging
from osbench.errors import ArgumentError


def cold_max(capacity: int, ratio: float) -> int:
    """The cold pages' target, as ``ClockPro_parse_params`` computes it:
    ``(int64_t)((double)cache_size * ratio)``."""
    return int(float(capacity) * ratio)


class ClockPro(DemandPaging):
    """CLOCK-Pro (Jiang, Chen and Zhang, USENIX ATC 2005) as libCacheSim's ClockPro
    (``libCacheSim/cache/eviction/ClockPro.c``) behaves with the parameters its Python class
    takes: ``init_ratio_cold`` (``init-ratio-cold``, default 0.5 as ``libcachesim.ClockPro``
    passes it; the C default is 1) and ``bit_on_insert`` (``init-ref``, default off).

    The rules it ends up with:

    - A hit sets the object's reference bit (``ClockPro_find``).
    - A miss admits the newcomer when it fits the cache and the cold pages' bytes with it stay
      within their target, ``cold_max``: ``ClockPro_can_insert`` is
      ``cache_can_insert_default && mem_cold + size <= mem_cold_max``. The newcomer is cold
      (``ClockPro_insert``), its bit clear (set with ``bit_on_insert``).
    - Nothing is ever evicted. This looks like a bug in libCacheSim, reproduced here: an
      eviction runs (``cache_get_base`` calls ``ClockPro_evict``, that is ``ClockPro_run_cold``)
      only when ``occupied + size > cache_size``, after ``ClockPro_can_insert`` has passed; the
      only pages are cold ones (a page turns hot only in ``ClockPro_run_cold`` or on a test
      hit, which needs a page demoted by ``ClockPro_run_cold``), so ``occupied == mem_cold``
      and an admitted newcomer always fits (``mem_cold_max <= cache_size`` for a ratio up to
      1). The hands never move, the test pages never exist, and the reference bits are never
      read. The cache keeps the first objects that fit in the cold target, for good: at the
      default ratio it fills half of the capacity.

    Request by request this equals ``libcachesim.ClockPro``, unit sizes and sized (tested on
    random traces, synthetic shapes and the CloudPhysics trace). A ratio above 1 would let the
    hands run, into code paths where libCacheSim promotes a test page without entering it in
    its own hash table (the page then never hits, and evicting it dereferences a missing hash
    chain); the parameter stops at 1."""

    def __init__(self, capacity: int, bit_on_insert: bool = False, init_ratio_cold: float = 0.5) -> None:
        if not 0 < init_ratio_cold <= 1:
            raise ArgumentError(f"init_ratio_cold={init_ratio_cold!r} is not accepted: a number in (0, 1]")
        super().__init__(capacity)
        self.cold_max = cold_max(capacity, init_ratio_cold)
        if self.cold_max < 1:
            raise ArgumentError(
                f"capacity={capacity} is not accepted: its cold target ({init_ratio_cold} of it) holds no object"
            )
        self.bit_on_insert = bit_on_insert
        self.referenced: dict[Hashable, bool] = {}  # every page is cold: ``used`` is their bytes

    def _hit(self, key: Hashable) -> None:
        self.referenced[key] = True

    def _fits(self, size: int) -> bool:
        # ``ClockPro_can_insert``; then ``used + size <= cold_max <= capacity``: no eviction runs
        return size <= self.capacity and self.used + size <= self.cold_max

    def _insert(self, key: Hashable) -> None:
        self.referenced[key] = self.bit_on_insert

    def _evict(self) -> Hashable:
        """Never called: :meth:`_fits` admits only what fits under ``cold_max``, so no access
        has to make room."""
        raise AssertionError("ClockPro evicts nothing: _fits admits only what fits under cold_max")
