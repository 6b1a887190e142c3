"""Benchmarks of osbench.mem: translation, slot mapping, allocation runs.

One group per workload, one row per engine or peer (a plain numpy expression). Full sizes
under ``--benchmark-only``; tiny sizes under ``--benchmark-disable`` (a correctness pass).

- translate: 10M addresses through a 2**16-entry page table (4 KB pages), about 5 % faults.
- slot mapping: a batch of 256 sequences of 4,096 tokens, block size 16.
- allocation: one run of 1M requests per strategy (the lecture's demo 2 workload, scaled).
"""

from __future__ import annotations

import numpy as np
import pytest

import osbench as ob

TRANSLATE_N = 10_000_000
SLOT_SEQS, SLOT_TOKENS = 256, 4096
ALLOC_N = 1_000_000
SMALL = 1 / 1000  # the correctness pass runs a thousandth of each workload


@pytest.fixture(scope="module")
def full(request: pytest.FixtureRequest) -> bool:
    return not request.config.getoption("benchmark_disable", default=False)


def _scale(n: int, full: bool) -> int:
    return n if full else max(int(n * SMALL), 10)


# --- translation ----------------------------------------------------------------------------

PAGE_SHIFT = 12


def numpy_translate(vaddrs: np.ndarray, table: np.ndarray) -> np.ndarray:
    """The plain numpy expression: gather, then mask faults (an extra -1 entry catches pages
    past the end of the table)."""
    padded = np.append(table, -1)
    vpn = np.minimum(vaddrs >> PAGE_SHIFT, table.size)
    frame = padded[vpn]
    return np.where(frame < 0, -1, (frame << PAGE_SHIFT) | (vaddrs & ((1 << PAGE_SHIFT) - 1)))


@pytest.fixture(scope="module")
def translation_input(full: bool) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(1)
    pages = 1 << 16 if full else 1 << 10  # 256 MB of virtual memory; the table (512 KB) stays in cache
    table = rng.permutation(pages).astype(np.int64)
    table[rng.random(pages) < 0.05] = -1
    vaddrs = rng.integers(0, pages << PAGE_SHIFT, _scale(TRANSLATE_N, full), dtype=np.int64)
    return vaddrs, table


@pytest.mark.parametrize("engine", ["native", "reference", "numpy"])
def test_translate(benchmark, translation_input, engine: str) -> None:  # type: ignore[no-untyped-def]
    benchmark.group = "mem: translate 10M addresses (2**16-entry table)"
    vaddrs, table = translation_input
    if engine == "numpy":
        out = benchmark.pedantic(numpy_translate, args=(vaddrs, table), rounds=5, iterations=1)
    else:
        run = lambda: ob.mem.translate(vaddrs, table, 4096, engine=engine)  # noqa: E731
        r = benchmark.pedantic(run, rounds=1 if engine == "reference" else 5, iterations=1)
        out = r.physical
    np.testing.assert_array_equal(out, numpy_translate(vaddrs, table))


# --- slot mapping ---------------------------------------------------------------------------

BLOCK = 16


def numpy_slots(block_table: np.ndarray, positions: np.ndarray) -> np.ndarray:
    rows = np.arange(block_table.shape[0])[:, None]
    return block_table[rows, positions // BLOCK] * BLOCK + positions % BLOCK


@pytest.fixture(scope="module")
def slot_input(full: bool) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(2)
    seqs = SLOT_SEQS if full else 4
    tokens = SLOT_TOKENS if full else 256
    blocks = tokens // BLOCK
    block_table = rng.permutation(seqs * blocks).astype(np.int64).reshape(seqs, blocks)
    positions = np.tile(np.arange(tokens, dtype=np.int64), (seqs, 1))
    return block_table, positions


@pytest.mark.parametrize("engine", ["native", "reference", "numpy"])
def test_slot_mapping(benchmark, slot_input, engine: str) -> None:  # type: ignore[no-untyped-def]
    benchmark.group = "mem: slot mapping 256 x 4K tokens"
    block_table, positions = slot_input
    if engine == "numpy":
        out = benchmark.pedantic(numpy_slots, args=(block_table, positions), rounds=5, iterations=1)
    else:
        run = lambda: ob.mem.slot_mapping(block_table, positions, BLOCK, engine=engine)  # noqa: E731
        out = benchmark.pedantic(run, rounds=1 if engine == "reference" else 5, iterations=1).slots
    np.testing.assert_array_equal(out, numpy_slots(block_table, positions))


# --- allocation -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def requests(full: bool) -> ob.mem.Workload:
    return ob.mem.workload(_scale(ALLOC_N, full), seed=1)


@pytest.fixture(scope="module")
def native_runs(requests: ob.mem.Workload) -> dict[str, ob.mem.Allocation]:
    return {s: ob.mem.simulate(requests, s) for s in ob.mem.STRATEGIES}


@pytest.mark.parametrize("engine", ["native", "reference"])
@pytest.mark.parametrize("strategy", ob.mem.STRATEGIES)
def test_allocation(benchmark, requests, native_runs, strategy: str, engine: str) -> None:  # type: ignore[no-untyped-def]
    benchmark.group = f"mem: allocation, 1M requests, {strategy}"
    run = lambda: ob.mem.simulate(requests, strategy, engine=engine)  # noqa: E731
    r = benchmark.pedantic(run, rounds=1 if engine == "reference" else 3, iterations=1)
    assert r.to_dict() == native_runs[strategy].to_dict()
