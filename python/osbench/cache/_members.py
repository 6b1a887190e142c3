"""The cached keys of the reference policies that draw their victims at random (random,
hyperbolic, lhd), kept so that one seed draws the same objects in both engines."""

from __future__ import annotations

from collections.abc import Hashable

from osbench.splitmix import SplitMix64


class Members:
    """The cached keys in a list: a draw is position ``rng.below(len)``; a newcomer joins at
    the end, and a leaving key's place is taken by the last key (swap-remove), as the native
    engine keeps them."""

    def __init__(self) -> None:
        self.keys: list[Hashable] = []
        self.position: dict[Hashable, int] = {}  # key -> its index in keys

    def draw(self, rng: SplitMix64) -> int:
        """A position drawn uniformly from ``rng``."""
        return rng.below(len(self.keys))

    def append(self, key: Hashable) -> None:
        self.position[key] = len(self.keys)
        self.keys.append(key)

    def swap_remove(self, at: int) -> Hashable:
        """Take out the key at position ``at`` (the last key moves into its place); return it."""
        key = self.keys[at]
        last = self.keys.pop()
        if at < len(self.keys):
            self.keys[at] = last
            self.position[last] = at
        del self.position[key]
        return key

    def __getitem__(self, at: int) -> Hashable:
        return self.keys[at]

    def __len__(self) -> int:
        return len(self.keys)

    def __contains__(self, key: Hashable) -> bool:
        return key in self.position
