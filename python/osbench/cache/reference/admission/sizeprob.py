"""Size-probabilistic admission: the reference engine's filter (the readable definition the native engine follows)."""

from __future__ import annotations

import math
from collections.abc import Hashable

from osbench.cache.reference.admission.prob import MAX_MODULE
from osbench.splitmix import SplitMix64


class SizeProb:
    """Admit a missed object of ``size`` with probability ``exp(-exponent * size)``: large
    objects rarely enter (libCacheSim ``cache/admission/sizeProbabilistic.c``,
    ``size_probabilistic_admit``: a draw modulo 10**7, over 10**7, below that probability; one
    draw per miss). Draws from splitmix64, as :class:`~.prob.Prob`."""

    def __init__(self, capacity: int, exponent: float, seed: int) -> None:
        self.exponent = exponent
        self.rng = SplitMix64(seed)

    def seen(self, key: Hashable, size: int) -> None:
        """Every access: nothing to note."""

    def admit(self, key: Hashable, size: int) -> bool:
        prob = math.exp(-self.exponent * float(size))
        return (self.rng.next_u64() % MAX_MODULE) / MAX_MODULE < prob
