"""The reproducers of the reliability issue, one or more per class: hangs, runaway memory,
silently wrong results, false rejections, errors that do not say what was wrong, interrupts
and streaming memory. (Bad arguments are in test_bad_inputs.py, damaged files in
test_corruption.py.)"""

from __future__ import annotations

import io
import json
import os
import struct
import threading
from pathlib import Path

import numpy as np
import pytest
import zstandard
from interrupts import assert_stops

import osbench as ob
from osbench.errors import ArgumentError, ArgumentTypeError, TraceFileError

MOONCAKE_LINE = {"timestamp": 1, "input_length": 3, "output_length": 2, "hash_ids": [1, 2]}


# ------------------------------------------------------------------ hangs
@pytest.mark.parametrize("policy, quantum", [("rr", 1e-17), ("mlfq", 1e-300)])
@pytest.mark.parametrize("engine", ["native", "reference"])
def test_a_quantum_that_cannot_progress_is_refused(policy: str, quantum: float, engine: str) -> None:
    with pytest.raises(ArgumentError, match=r"quantum=1e-\d+ is not accepted: at least"):
        ob.sched.simulate(ob.sched.Workload.batch([1.0]), policy, quantum=quantum, engine=engine)


def test_a_fifo_is_not_read(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for call in (ob.radix.mooncake, ob.traces.read, lambda p: ob.cache.replay(p, "lru", 2)):
        with pytest.raises(TraceFileError, match="named pipe"):
            call(fifo)


# ------------------------------------------------------------------ runaway memory
def test_a_device_is_not_read() -> None:
    with pytest.raises(TraceFileError, match="/dev/zero: a device"):
        ob.radix.mooncake("/dev/zero")


def test_a_struct_larger_than_the_file_is_refused(tmp_path: Path) -> None:
    p = tmp_path / "t.bin"
    p.write_bytes(bytes(64))
    with pytest.raises(TraceFileError, match=str(p)):
        ob.traces.read(p, format="binary", struct="<1000Q")
    with pytest.raises(ArgumentError, match="struct="):
        ob.traces.read(p, format="binary", struct="<999999999999Q")


def test_sizes_beyond_the_memory_free_are_refused_at_once() -> None:
    with pytest.raises(ArgumentError, match="samples=1099511627776 is not accepted"):
        ob.mem.parallel_sampling(2**40)
    with pytest.raises(ArgumentError, match="n_keys=1099511627776 is not accepted"):
        ob.traces.zipf(2**40, 0.8, 10)


# ------------------------------------------------------------------ silently wrong
def test_oracle_general_sizes_that_do_not_fit_are_refused(tmp_path: Path) -> None:
    for sizes in ([2**33, 2, 3], [-1, 2, 3]):
        with pytest.raises(ArgumentError, match="sizes"):
            ob.traces.write_oracle_general([1, 2, 3], tmp_path / "o.bin", sizes=sizes)
    assert not (tmp_path / "o.bin").exists()


def test_streaming_opt_refuses_a_file_whose_next_access_lies(tmp_path: Path) -> None:
    t = ob.traces.zipf(200, 0.8, 3000, seed=1)
    p = tmp_path / "o.bin"
    ob.traces.write_oracle_general(t, p)
    assert ob.cache.replay(p, "opt", 20, format="oracleGeneral").hits == ob.cache.replay(t, "opt", 20).hits
    data = bytearray(p.read_bytes())
    struct.pack_into("<q", data, 7 * 24 + 16, 8)  # access 7 now says its key comes back at 8
    p.write_bytes(bytes(data))
    with pytest.raises(TraceFileError, match=rf"{p}: byte offset \d+: next_access"):
        ob.cache.replay(p, "opt", 20, format="oracleGeneral", chunk_size=100)


def _npy(keys: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, keys)
    return buf.getvalue()


@pytest.mark.parametrize(
    "edit", [(b"(2000,)", b"(1999,)"), (b"(2000,)", b"(-1,)  "), (b"'<i8'", b"'<i4'"), (b"(2000,)", b"(2001,)")]
)
def test_an_npy_header_that_disagrees_with_its_data_is_refused_read_or_streamed(tmp_path: Path, edit: tuple) -> None:
    p = tmp_path / "h.npy"
    p.write_bytes(_npy(np.arange(2000, dtype=np.int64)).replace(*edit))
    with pytest.raises(TraceFileError, match=str(p)):
        ob.traces.read(p)
    with pytest.raises(TraceFileError, match=str(p)):
        ob.cache.replay(p, "lru", 10)


def test_written_zstd_carries_a_checksum(tmp_path: Path) -> None:
    p = tmp_path / "t.npy.zst"
    ob.traces.write(np.arange(1000), p)
    data = bytearray(p.read_bytes())
    data[len(data) // 2] ^= 1
    p.write_bytes(bytes(data))
    with pytest.raises(TraceFileError, match=str(p)):
        ob.traces.read(p)


@pytest.mark.parametrize(
    "row, what",
    [
        ("12,3,4", "not a timestamp"),
        ("NaT,3,4", "not a timestamp"),
        ("2023-11-16 18:15:46.68,-3,4", "not a token count"),
        ("2023-11-16 18:15:46.68,3,-4", "not a token count"),
    ],
)
def test_the_azure_reader_refuses_what_is_no_request(tmp_path: Path, row: str, what: str) -> None:
    p = tmp_path / "az.csv"
    p.write_text(f"TIMESTAMP,ContextTokens,GeneratedTokens\n{row}\n")
    with pytest.raises(TraceFileError, match=f"{p}: line 2, column \\d: .*{what}"):
        ob.traces.read(p)


@pytest.mark.parametrize("text", ["\u0661\u0662\u0663", "1_000", "0x10", "\uff11"])
def test_csv_integers_are_ascii_decimal(tmp_path: Path, text: str) -> None:
    p = tmp_path / "a.csv"
    p.write_text(f"1\n{text}\n")
    with pytest.raises(TraceFileError, match=f"{p}: line 2"):
        ob.traces.read(p)


def test_what_is_no_trace_is_refused() -> None:
    for value in ({1, 2, 3}, b"abc", frozenset([1])):
        with pytest.raises(ArgumentTypeError, match="trace="):
            ob.cache.replay(value, "lru", 2)
    with pytest.raises(ArgumentError, match="masked array"):
        ob.cache.replay(np.ma.masked_array([1, 2, 3], [0, 1, 0]), "lru", 2)
    unmasked = np.ma.masked_array([1, 2, 1], [0, 0, 0])
    assert ob.cache.replay(unmasked, "lru", 2).hits == 1


def test_parameters_a_policy_does_not_read_are_refused() -> None:
    with pytest.raises(ArgumentError, match="bit_on_insert=True is not accepted for policy='lru'"):
        ob.cache.replay([1, 2, 1], "lru", 2, bit_on_insert=True)
    with pytest.raises(ArgumentError, match=r"fault_rate=1\.5"):
        ob.mem.mean_access_ns(1.5)


def test_mooncake_limit_must_be_positive(tmp_path: Path) -> None:
    p = tmp_path / "m.jsonl"
    p.write_text(json.dumps(MOONCAKE_LINE) + "\n")
    with pytest.raises(ArgumentError, match="limit=-1"):
        ob.radix.mooncake(p, limit=-1)


# ------------------------------------------------------------------ false rejections
def test_an_azure_log_streams_as_it_reads(tmp_path: Path) -> None:
    p = tmp_path / "az.csv"
    rows = [f"2023-11-16 18:{i:02d}:46.6805900,{3 + i % 4},4" for i in range(30)]
    p.write_text("TIMESTAMP,ContextTokens,GeneratedTokens\n" + "\n".join(rows) + "\n")
    assert ob.cache.replay(p, "lru", 3).hits == ob.cache.replay(ob.traces.read(p), "lru", 3).hits


def test_a_mooncake_line_with_a_line_separator_inside_a_string(tmp_path: Path) -> None:
    p = tmp_path / "m.jsonl"
    p.write_text(json.dumps({**MOONCAKE_LINE, "note": "a\u2028b"}, ensure_ascii=False) + "\n", encoding="utf-8")
    assert len(ob.radix.mooncake(p)) == 1


def test_zstd_that_starts_with_a_skippable_frame(tmp_path: Path) -> None:
    p = tmp_path / "s.npy.zst"
    skippable = b"\x50\x2a\x4d\x18" + (4).to_bytes(4, "little") + b"abcd"
    p.write_bytes(skippable + zstandard.ZstdCompressor().compress(_npy(np.arange(10))))
    np.testing.assert_array_equal(ob.traces.read(p).keys, np.arange(10))


# ------------------------------------------------------------------ errors that say what was wrong
@pytest.mark.parametrize(
    "line, what",
    [
        (b'{"timestamp":1,"input_length":3,"output_length":2,"hash_ids":[1]}\n\xff\xfe\n', "byte offset"),
        (b'{"timestamp":1,"input_length":3,"output_length":2,"hash_ids":["a"]}\n', "line 1"),
        (b'{"timestamp":NaN,"input_length":3,"output_length":2,"hash_ids":[1]}\n', "line 1"),
        (b'{"timestamp":Infinity,"input_length":3,"output_length":2,"hash_ids":[1]}\n', "line 1"),
        (b'{"x":' + b"[" * 100_000 + b"]" * 100_000 + b"}\n", "line 1"),
    ],
)
def test_mooncake_errors_name_the_file_and_the_place(tmp_path: Path, line: bytes, what: str) -> None:
    p = tmp_path / "m.jsonl"
    p.write_bytes(line)
    with pytest.raises(TraceFileError, match=f"{p}: {what}"):
        ob.radix.mooncake(p)


def test_mooncake_reads_zstd(tmp_path: Path) -> None:
    p = tmp_path / "m.jsonl.zst"
    p.write_bytes(zstandard.ZstdCompressor().compress((json.dumps(MOONCAKE_LINE) + "\n").encode()))
    assert len(ob.radix.mooncake(p)) == 1


def test_a_directory_is_named_as_one(tmp_path: Path) -> None:
    with pytest.raises(TraceFileError, match="a directory, not a file"):
        ob.traces.read(tmp_path)


# ------------------------------------------------------------------ interrupts, threads, memory
def test_ctrl_c_stops_a_stream_fed_one_huge_chunk() -> None:
    # One chunk is seconds of work: the stream must stop between its runs, not after the chunk.
    assert_stops(
        """
        import numpy as np, osbench as ob
        keys = np.arange(40_000_000, dtype=np.int64) % 5_000_011
        s = ob.cache.stream("arc", 1000)
        while True:
            s.feed(keys)
        """
    )


def test_a_stream_fed_from_two_threads_says_so() -> None:
    s = ob.cache.stream("lru", 100)
    keys = np.arange(2_000_000, dtype=np.int64) % 5000
    errors: list[BaseException] = []

    def feed() -> None:
        try:
            s.feed(keys)
        except RuntimeError as exc:
            errors.append(exc)

    threads = [threading.Thread(target=feed) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all("being fed by another thread" in str(e) for e in errors)
    assert s.accesses == len(keys) * (4 - len(errors))


def test_the_streaming_key_map_holds_at_most_24_bytes_a_distinct_key() -> None:
    s = ob.cache.stream("lru", 100)
    n = 1_000_000
    for start in range(0, n, 250_000):
        s.feed(np.arange(start, start + 250_000, dtype=np.int64) * 7919)
        assert s.key_map_bytes <= 24 * s.n_distinct + 4096
    assert s.n_distinct == n


def test_a_plain_file_that_starts_like_a_skippable_frame_is_plain(tmp_path: Path) -> None:
    # found by the suite: an oracleGeneral record whose timestamp is a skippable frame's magic
    p = tmp_path / "t.oracleGeneral.bin"
    p.write_bytes(struct.pack("<IQIq", 0x184D2A50, 7, 1, -1))
    t = ob.traces.read(p, format="oracleGeneral")
    assert t.keys.tolist() == [7] and t.times.tolist() == [0x184D2A50]
