"""Size admission: the reference engine's filter (the readable definition the native engine follows)."""

from __future__ import annotations

from collections.abc import Hashable


class Size:
    """Admit an object only if its size is strictly below ``size`` (libCacheSim
    ``cache/admission/size.c``, ``size_admit``: ``obj_size < size_threshold``; its default
    threshold, INT64_MAX, admits everything). In unit mode every size is 1."""

    def __init__(self, capacity: int, size: int) -> None:
        self.threshold = size

    def seen(self, key: Hashable, size: int) -> None:
        """Every access: nothing to note."""

    def admit(self, key: Hashable, size: int) -> bool:
        return size < self.threshold
