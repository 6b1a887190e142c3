"""Type stubs of the native extension (Rust, PyO3). Checked by ``mypy.stubtest osbench._native``."""

from typing import Optional, final

import numpy as np
import numpy.typing as npt

__all__ = [
    "BUILD_PROFILE",
    "__version__",
    "CACHE_POLICIES",
    "dense_ids",
    "next_use",
    "cache_replay",
    "cache_curve",
    "OnlineCache",
]

BUILD_PROFILE: str
__version__: str
CACHE_POLICIES: list[str]

def dense_ids(keys: npt.NDArray[np.int64] | npt.NDArray[np.uint64]) -> tuple[npt.NDArray[np.uint32], int]: ...
def next_use(ids: npt.NDArray[np.uint32], n_ids: int) -> npt.NDArray[np.uint64]: ...
def cache_replay(
    policy: str,
    ids: npt.NDArray[np.uint32],
    n_ids: int,
    capacity: int,
    next_use: Optional[npt.NDArray[np.uint64]] = None,
    mask: bool = False,
    bit_on_insert: bool = False,
) -> tuple[int, Optional[npt.NDArray[np.bool_]]]: ...
def cache_curve(
    policy: str,
    ids: npt.NDArray[np.uint32],
    n_ids: int,
    capacities: npt.NDArray[np.uint64],
    next_use: Optional[npt.NDArray[np.uint64]] = None,
    bit_on_insert: bool = False,
    threads: Optional[int] = None,
) -> npt.NDArray[np.uint64]: ...

@final
class OnlineCache:
    @property
    def capacity(self) -> int: ...
    @property
    def name(self) -> str: ...
    def __new__(cls, policy: str, capacity: int, bit_on_insert: bool = False) -> OnlineCache: ...
    def access(self, key: int) -> bool: ...
    def __contains__(self, key: int, /) -> bool: ...
    def __len__(self) -> int: ...
