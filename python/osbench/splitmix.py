"""splitmix64 (Steele, Lea and Flood, OOPSLA 2014; Vigna's reference code), the core's generator
(``rust/osbench-core/src/hash.rs``) written once in Python, bit for bit: the pointer-chase cycles
of the host probes and the draws of the randomised cache policies come from it, so that the
reference engine makes the native engine's choices."""

from __future__ import annotations

MASK64 = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15
"""2**64 divided by the golden ratio: the generator's increment."""


class SplitMix64:
    """splitmix64 (Vigna): state += golden ratio; output a mixed copy of the state."""

    def __init__(self, seed: int) -> None:
        self.state = seed & MASK64

    def next_u64(self) -> int:
        self.state = (self.state + GOLDEN) & MASK64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        return z ^ (z >> 31)

    def below(self, n: int) -> int:
        """A number in ``range(n)``: the high 64 bits of a 64x64-bit product (no modulo bias
        worth speaking of, and no division)."""
        return (self.next_u64() * n) >> 64
