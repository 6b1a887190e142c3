"""The one-hit-wonder filter: the reference engine's filter (the readable definition the native engine follows)."""

from __future__ import annotations

from collections.abc import Hashable


class Bloom:
    """Admit an object on its second miss, never on its first (libCacheSim
    ``cache/admission/bloomfilter.c``, ``bloomfilter_admit``: despite the name, an exact table
    of the objects seen at an admission check, that is at a miss). Exact: no false positives."""

    def __init__(self, capacity: int) -> None:
        self.missed: set[Hashable] = set()

    def seen(self, key: Hashable, size: int) -> None:
        """Every access: nothing to note (only misses count)."""

    def admit(self, key: Hashable, size: int) -> bool:
        if key in self.missed:
            return True
        self.missed.add(key)
        return False
