"""Type stubs of the native extension (Rust, PyO3). Checked by ``mypy.stubtest osbench._native``."""

from typing import Any, Optional

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

# host (Linux)
HOST_MECHANISMS: list[str]

def host_current_cpu() -> int: ...
def host_pingpong(
    mechanism: str,
    mode: str,
    rounds: int,
    warmup: int = 1000,
    batch: int = 1,
    cpu_a: Optional[int] = None,
    cpu_b: Optional[int] = None,
) -> dict[str, Any]: ...
def host_page_touch(nbytes: int, prefault: str = "none") -> dict[str, Any]: ...
def host_cow(buffer_bytes: int, pages_written: int) -> tuple[int, int, int]: ...
def host_chase_cycle(lines: int, seed: int) -> npt.NDArray[np.uint32]: ...
def host_chase(nbytes: int, loads: int, repeats: int = 3, seed: int = 0, huge_pages: bool = False) -> npt.NDArray[np.float64]: ...
