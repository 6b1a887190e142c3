"""Type stubs of the native extension (Rust, PyO3). Checked by ``mypy.stubtest osbench._native``."""

from typing import Optional

import numpy as np
import numpy.typing as npt

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

class OnlineCache:
    @property
    def capacity(self) -> int: ...
    @property
    def name(self) -> str: ...
    def __new__(cls, policy: str, capacity: int, bit_on_insert: bool = False) -> OnlineCache: ...
    def access(self, key: int) -> bool: ...
    def __contains__(self, key: int) -> bool: ...
    def __len__(self) -> int: ...

MEM_STRATEGIES: list[str]

def mem_translate(
    vaddrs: npt.NDArray[np.int64], page_table: npt.NDArray[np.int64], page_size: int
) -> tuple[npt.NDArray[np.int64], int]: ...
def mem_slot_mapping(
    block_table: npt.NDArray[np.int64],
    row_len: int,
    positions: npt.NDArray[np.int64],
    block_size: int,
    seq_ids: Optional[npt.NDArray[np.int64]] = None,
    tokens_per_row: int = 0,
) -> tuple[npt.NDArray[np.int64], int]: ...
def mem_simulate(
    strategy: str,
    arrival: npt.NDArray[np.float64],
    duration: npt.NDArray[np.float64],
    initial: npt.NDArray[np.uint64],
    final_size: npt.NDArray[np.uint64],
    capacity: int,
    page_size: int = 1,
    bound: int = 1,
    check: bool = False,
) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.uint64], npt.NDArray[np.uint64], npt.NDArray[np.uint64]]: ...
