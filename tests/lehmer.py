"""libCacheSim's random generator in Python, for the tests that give it to a reference class in
place of its seeded splitmix64 and then hold the class to libCacheSim miss for miss (Cacheus,
FlashProb): libCacheSim's ``next_rand`` is thread-local and starts every new thread at the same
state, so a libCacheSim cache run in a fresh thread makes these draws."""

from __future__ import annotations

MASK128 = (1 << 128) - 1


class Lehmer64:
    """libCacheSim's ``next_rand`` (``libCacheSim/utils/include/mymath.h``: a 128-bit lehmer
    generator, state 0xdeadbeef at a thread's start), with its ``next_rand() % n`` as ``below``."""

    def __init__(self) -> None:
        self.state = 0xDEADBEEF

    def below(self, n: int) -> int:
        self.state = (self.state * 0xDA942042E4DD58B5) & MASK128
        return (self.state >> 64) % n
