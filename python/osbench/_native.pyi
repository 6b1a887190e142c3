"""Type stubs of the native extension (Rust, PyO3). Checked by ``mypy.stubtest osbench._native``."""

from typing import Optional

import numpy as np
import numpy.typing as npt

BUILD_PROFILE: str
__version__: str
CACHE_POLICIES: list[str]
SCHED_POLICIES: list[str]

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

class OnlineCache:
    @property
    def capacity(self) -> int: ...
    @property
    def name(self) -> str: ...
    def __new__(cls, policy: str, capacity: int, bit_on_insert: bool = False) -> OnlineCache: ...
    def access(self, key: int) -> bool: ...
    def __contains__(self, key: int) -> bool: ...
    def __len__(self) -> int: ...

def sched_simulate(
    policy: str,
    arrival: npt.NDArray[np.float64],
    size: npt.NDArray[np.float64],
    predicted: Optional[npt.NDArray[np.float64]] = None,
    priority: Optional[npt.NDArray[np.int64]] = None,
    quantum: float = 0.1,
    switch_cost: float = 0.0,
    levels: Optional[int] = None,
    boost: Optional[float] = None,
    use_predictions: bool = False,
    aging: float = 0.0,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], int, float]: ...
