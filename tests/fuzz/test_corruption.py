"""Damaged trace files: every format, plain and zstd, truncated, bit-flipped, with bytes inserted
or duplicated, header fields changed, recompressed, or a decompression bomb. Every reader
(``traces.read``, streaming ``cache.replay``, ``radix.mooncake``, ``sched.Workload.from_requests``,
``serve.Requests.read``)
either refuses the file with a :class:`TraceFileError` naming the file and the byte offset or
line, or reads it; a file read in memory replays exactly as it streams; damage a zstd checksum
covers, and a recompression, never change what is read. ``make fuzz`` runs many more examples
(``OSBENCH_FUZZ_EXAMPLES``)."""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest
import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import osbench as ob
from osbench.errors import OsbenchError, TraceFileError
from osbench.serve.aiperf import read_aiperf
from osbench.traces import formats

EXAMPLES = int(os.environ.get("OSBENCH_FUZZ_EXAMPLES", "60"))
# OSBENCH_FUZZ_LOG=path: each damaged file's outcome is appended there as a JSON line (area,
# outcome), which ``make fuzz`` counts for the README's reliability table.
LOG = os.environ.get("OSBENCH_FUZZ_LOG")


def _record(area: str, outcome: str) -> None:
    if LOG:
        with open(LOG, "a") as f:
            f.write(json.dumps({"area": area, "outcome": outcome}) + "\n")


FUZZ = settings(
    max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture], derandomize=True
)
KEYS = np.array([5, 3, 5, 9, 1, 3, 5, 7, 9, 2, 5, 3] * 4, dtype=np.int64)
SIZES = np.array([1 + (i * 7) % 13 for i in range(len(KEYS))], dtype=np.int64)


def _trace_file(fmt: str, dir: Path) -> Path:
    name = {"oracleGeneral": "t.oracleGeneral.bin", "binary": "t.bin", "npy": "t.npy", "csv": "t.csv", "txt": "t.txt"}
    p = dir / name[fmt]
    if fmt == "oracleGeneral":
        ob.traces.write_oracle_general(ob.traces.Trace(KEYS), p)
    elif fmt == "binary":
        ob.traces.write(ob.traces.Trace(KEYS), p, struct="<Q")
    else:
        ob.traces.write(ob.traces.Trace(KEYS, sizes=SIZES) if fmt == "npy" else ob.traces.Trace(KEYS), p)
    return p


def _mooncake(dir: Path) -> Path:
    p = dir / "m.jsonl"
    lines = [
        # three 512-token blocks each, the last one partial
        {"timestamp": 1000 * i, "input_length": 1056 + i, "output_length": 4 + i % 3, "hash_ids": [1, 2, 3 + i % 4]}
        for i in range(12)
    ]
    p.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return p


def _azure(dir: Path) -> Path:
    p = dir / "a.csv"
    rows = [f"2023-11-16 18:{i:02d}:46.6805900,{100 + i},{10 + i}" for i in range(12)]
    p.write_text("TIMESTAMP,ContextTokens,GeneratedTokens\n" + "\n".join(rows) + "\n")
    return p


READ_OPTIONS = {"binary": {"format": "binary", "struct": "<Q"}, "oracleGeneral": {"format": "oracleGeneral"}}


def _damage(data: bytes, kind: str, at: float, byte: int, length: int) -> bytes:
    i = min(int(at * len(data)), len(data) - 1)
    if kind == "truncate":
        return data[:i]
    if kind == "flip":
        return data[:i] + bytes([data[i] ^ (1 << (byte % 8))]) + data[i + 1 :]
    if kind == "insert":
        return data[:i] + bytes([byte]) * length + data[i:]
    if kind == "duplicate":
        return data[:i] + data[i : i + length] + data[i:]
    if kind == "overwrite":  # a header field (or any field) changed
        return data[:i] + bytes([byte]) * length + data[i + length :]
    raise AssertionError(kind)


DAMAGE = st.tuples(
    st.sampled_from(["truncate", "flip", "insert", "duplicate", "overwrite"]),
    st.floats(0.0, 1.0),
    st.integers(0, 255),
    st.integers(1, 16),
)


def _clean(exc: BaseException, path: Path) -> None:
    """A refusal is a TraceFileError naming the file and where."""
    message = str(exc)
    assert isinstance(exc, TraceFileError), f"{type(exc).__name__}: {message}"
    assert str(path) in message and re.search(r"byte offset \d+|line \d+|the end of the data", message), message


def _outcome(call: Callable[[], Any], path: Path) -> Any:
    try:
        return call()
    except OsbenchError as exc:
        _clean(exc, path)
        return None


def _hits(keys: Any) -> int:
    return ob.cache.replay(keys, "lru", 3).hits


@pytest.mark.parametrize("fmt", formats.WRITABLE)
@pytest.mark.parametrize("compressed", [False, True])
@FUZZ
@given(damage=DAMAGE)
def test_a_damaged_trace_is_refused_or_read_consistently(
    fmt: str, compressed: bool, damage: tuple[str, float, int, int]
) -> None:
    with tempfile.TemporaryDirectory() as d:
        good = _trace_file(fmt, Path(d))
        options = READ_OPTIONS.get(fmt, {})
        original = ob.traces.read(good, **options)
        data = good.read_bytes()
        if compressed:
            data = formats.compress(data)
        bad = good.with_name(good.name + (".zst" if compressed else ""))
        bad.write_bytes(_damage(data, *damage))
        area = fmt + (" (zstd)" if compressed else "")
        t = _outcome(lambda: ob.traces.read(bad, **options), bad)
        if compressed and t is not None:  # the checksum covers every byte of the content
            np.testing.assert_array_equal(t.keys, original.keys)
        equal = t is not None and np.array_equal(t.keys, original.keys)
        _record(f"read {area}", "refused" if t is None else "equal" if equal else "read")
        if fmt in formats.STREAMED:
            r = _outcome(lambda: ob.cache.replay(bad, "lru", 3, chunk_size=7, **options), bad)
            if t is not None:  # what reads in memory streams alike, to the hit
                assert r is not None and r.hits == _hits(t) and r.accesses == len(t)
            _record(f"replay (streamed) {area}", "refused" if r is None else "equal" if equal else "read")


@pytest.mark.parametrize("fmt", formats.WRITABLE)
def test_a_recompressed_or_framed_trace_reads_the_same(fmt: str, tmp_path: Path) -> None:
    good = _trace_file(fmt, tmp_path)
    options = READ_OPTIONS.get(fmt, {})
    want = ob.traces.read(good, **options).keys
    data = good.read_bytes()
    half = len(data) // 2
    skippable = b"\x50\x2a\x4d\x18" + (3).to_bytes(4, "little") + b"abc"
    for i, packed in enumerate(
        (
            zstandard.ZstdCompressor(level=19).compress(data),  # no checksum, another level
            formats.compress(data[:half]) + formats.compress(data[half:]),  # two frames
            skippable + formats.compress(data),  # a skippable frame first
        )
    ):
        p = good.with_name(f"{i}{good.name}.zst")
        p.write_bytes(packed)
        np.testing.assert_array_equal(ob.traces.read(p, **options).keys, want)
        if fmt in formats.STREAMED:
            assert ob.cache.replay(p, "lru", 3, **options).hits == _hits(want)


@pytest.mark.parametrize("make", [_mooncake, _azure])
@pytest.mark.parametrize("compressed", [False, True])
@FUZZ
@given(damage=DAMAGE)
def test_a_damaged_request_log_is_refused_or_read(
    make: Callable[[Path], Path], compressed: bool, damage: tuple[str, float, int, int]
) -> None:
    with tempfile.TemporaryDirectory() as d:
        good = make(Path(d))
        want = ob.traces.read(good).keys
        assert len(ob.serve.Requests.read(good)) == 12  # the undamaged file is a valid log for every reader
        data = good.read_bytes()
        if compressed:
            data = formats.compress(data)
        bad = good.with_name(good.name + (".zst" if compressed else ""))
        bad.write_bytes(_damage(data, *damage))
        area = ("mooncake" if make is _mooncake else "azure") + (" (zstd)" if compressed else "")
        t = _outcome(lambda: ob.traces.read(bad), bad)
        if compressed and t is not None:
            np.testing.assert_array_equal(t.keys, want)
        equal = t is not None and len(t) == len(want) and np.array_equal(t.keys, want)
        _record(f"read {area}", "refused" if t is None else "equal" if equal else "read")
        w = _outcome(lambda: ob.sched.Workload.from_requests(bad, load=None, tokens_per_second=100.0), bad)
        _record(f"Workload.from_requests {area}", "refused" if w is None else "equal" if equal else "read")
        r = _outcome(lambda: ob.serve.Requests.read(bad), bad)
        _record(f"serve.Requests.read {area}", "refused" if r is None else "equal" if equal else "read")
        if make is _mooncake:
            m = _outcome(lambda: ob.radix.mooncake(bad), bad)
            _record(f"radix.mooncake {area}", "refused" if m is None else "equal" if equal else "read")


def _aiperf(dir: Path) -> Path:
    p = dir / "profile_export.jsonl"
    t0 = 1_759_813_207_532_900_363
    records = [
        {
            "metadata": {
                "request_start_ns": t0 + i * 10**7,
                "request_end_ns": t0 + i * 10**7 + 5 * 10**8,
                "benchmark_phase": "warmup" if i < 2 else "profiling",
                "was_cancelled": False,
            },
            "metrics": {
                "input_sequence_length": {"value": 100 + i, "unit": "tokens"},
                "output_sequence_length": {"value": 4 + i % 3, "unit": "tokens"},
                "time_to_first_token": {"value": 30.0 + i, "unit": "ms"},
                "inter_token_latency": {"value": 5.5, "unit": "ms"},
            },
            "error": None,
        }
        for i in range(14)
    ]
    p.write_text("".join(json.dumps(x) + "\n" for x in records))
    return p


@pytest.mark.parametrize("compressed", [False, True])
@FUZZ
@given(damage=DAMAGE)
def test_a_damaged_aiperf_export_is_refused_or_read(compressed: bool, damage: tuple[str, float, int, int]) -> None:
    with tempfile.TemporaryDirectory() as d:
        good = _aiperf(Path(d))
        want = read_aiperf(good)
        assert len(want.requests) == 12 and want.skipped == 2
        data = good.read_bytes()
        if compressed:
            data = formats.compress(data)
        bad = good.with_name(good.name + (".zst" if compressed else ""))
        bad.write_bytes(_damage(data, *damage))
        run = _outcome(lambda: read_aiperf(bad), bad)
        equal = (
            run is not None
            and np.array_equal(run.requests.arrival, want.requests.arrival)
            and np.array_equal(run.ttft, want.ttft)
        )
        if compressed and run is not None:
            assert equal
        area = "aiperf" + (" (zstd)" if compressed else "")
        r = _outcome(lambda: ob.serve.Requests.read(bad), bad)
        same = r is not None and np.array_equal(r.arrival, want.requests.arrival)
        same = same and np.array_equal(r.prompt_len, want.requests.prompt_len)
        _record(f"serve.Requests.read {area}", "refused" if r is None else "equal" if same else "read")
        w = _outcome(lambda: ob.sched.Workload.from_requests(bad, load=None, tokens_per_second=100.0), bad)
        _record(f"Workload.from_requests {area}", "refused" if w is None else "equal" if same else "read")
        _record(
            f"serve.aiperf.read_aiperf {area}",
            "refused" if run is None else "equal" if equal else "read",
        )


def test_a_decompression_bomb_is_refused_before_it_fills_memory(tmp_path: Path) -> None:
    # 320 MB of zeros behind a .npy header, compressed to about 30 KB, in a frame that does not
    # declare its size: refused once the data outgrows the ratio, while it is read or streamed.
    n = 40_000_000
    p = tmp_path / "bomb.npy.zst"
    head = bytearray()
    np.lib.format.write_array_header_1_0(_Sink(head), {"descr": "<i8", "fortran_order": False, "shape": (n,)})
    zeros = bytes(1 << 20)
    with open(p, "wb") as f, zstandard.ZstdCompressor(level=1).stream_writer(f) as w:
        w.write(bytes(head))
        for _ in range(n * 8 // len(zeros)):
            w.write(zeros)
    calls = (lambda: ob.traces.read(p), lambda: ob.cache.replay(p, "lru", 10))
    for call in calls:
        with pytest.raises(TraceFileError, match="decompression bomb") as info:
            call()
        _clean(info.value, p)
    declared = tmp_path / "declared.npy.zst"  # a frame that says it holds 1 TiB: refused before reading
    header = b"\x28\xb5\x2f\xfd" + bytes([0xE0]) + (1 << 40).to_bytes(8, "little")
    declared.write_bytes(header + bytes([1, 0, 0]))
    with pytest.raises(TraceFileError, match="decompression bomb"):
        ob.traces.read(declared)


class _Sink:
    """A file-like object that appends to a bytearray (for numpy's header writer)."""

    def __init__(self, out: bytearray) -> None:
        self.out = out

    def write(self, data: bytes) -> int:
        self.out += data
        return len(data)
