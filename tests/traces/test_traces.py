"""Trace files: every format round-trips; bad files fail clearly, naming file and place."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable, Optional

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import osbench as ob
from osbench.traces import TraceFileError, formats

BINARY = {"struct": "<IQIq", "key_field": 1, "size_field": 2, "time_field": 0}


@st.composite
def traces_with_sizes(draw: st.DrawFn) -> ob.traces.Trace:
    signed = draw(st.booleans())
    lo, hi = (-(2**63), 2**63 - 1) if signed else (0, 2**64 - 1)
    keys = draw(st.lists(st.integers(lo, hi), min_size=1, max_size=60))
    sizes = draw(st.lists(st.integers(1, 2**32 - 1), min_size=len(keys), max_size=len(keys)))
    times = draw(st.lists(st.integers(0, 2**32 - 1), min_size=len(keys), max_size=len(keys)))
    return ob.traces.Trace(
        np.array(keys, dtype=np.int64 if signed else np.uint64),
        sizes=np.array(sizes, dtype=np.int64),
        times=np.array(times, dtype=np.int64),
    )


def same_keys(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal as 64-bit patterns (oracleGeneral stores ids as uint64)."""
    return np.array_equal(np.asarray(a).view(np.uint64), np.asarray(b).view(np.uint64))


@settings(max_examples=40, deadline=None)
@given(trace=traces_with_sizes(), compress=st.booleans())
def test_every_writable_format_round_trips(
    trace: ob.traces.Trace, compress: bool, tmp_path_factory: pytest.TempPathFactory
) -> None:
    d = tmp_path_factory.mktemp("rt")
    z = ".zst" if compress else ""
    cases = {
        f"t.npy{z}": ({}, {}),
        f"t.csv{z}": ({}, {"size_column": "size", "time_column": "time"}),
        f"t.txt{z}": ({}, {"size_column": 1, "time_column": 2}),
        f"t.oracleGeneral.bin{z}": ({}, {}),
        f"t.rec{z}": (BINARY, dict(format="binary", **BINARY)),
    }
    for name, (write_kw, read_kw) in cases.items():
        path = d / name
        ob.traces.write(trace, path, **write_kw)  # type: ignore[arg-type]
        back = ob.traces.read(path, **read_kw)  # type: ignore[arg-type]
        assert same_keys(back.keys, trace.keys), name
        assert back.sizes is not None and back.sizes.tolist() == trace.sizes.tolist(), name  # type: ignore[union-attr]
        assert back.times is not None and back.times.tolist() == trace.times.tolist(), name  # type: ignore[union-attr]
        assert back.name == "t" + name[1:].removesuffix(".zst")


def test_plain_keys_and_header_choices(tmp_path: Path) -> None:
    keys = np.array([5, 3, 5, 2**63 + 1], dtype=np.uint64)
    ob.traces.write(keys, tmp_path / "k.npy")
    back = ob.traces.read(tmp_path / "k.npy")
    assert back.keys.dtype == np.uint64 and back.keys.tolist() == keys.tolist() and back.sizes is None
    ob.traces.write(keys, tmp_path / "k.csv", header=False)
    assert (tmp_path / "k.csv").read_text().splitlines()[0] == "5"
    assert ob.traces.read(tmp_path / "k.csv").keys.tolist() == keys.tolist()
    # a header is detected, columns chosen by name or index, blank lines skipped
    (tmp_path / "c.csv").write_text("time, obj ,bytes\n1, 10, 100\n\n2, 11, 200\n3, 10, 100\n")
    t = ob.traces.read(tmp_path / "c.csv", key_column="obj", size_column="bytes", time_column=0)
    assert (t.keys.tolist(), t.sizes.tolist(), t.times.tolist()) == ([10, 11, 10], [100, 200, 100], [1, 2, 3])  # type: ignore[union-attr]
    (tmp_path / "w.txt").write_text("1 7\n2   8\n-3\t9\n")
    assert ob.traces.read(tmp_path / "w.txt", key_column=1).keys.tolist() == [7, 8, 9]
    assert ob.traces.read(tmp_path / "w.txt").keys.tolist() == [1, 2, -3]
    (tmp_path / "semi.data").write_text("1;2\n3;4\n")
    assert ob.traces.read(tmp_path / "semi.data", format="txt", delimiter=";", key_column=1).keys.tolist() == [2, 4]
    # The header is told by the key column alone: words in another column are data.
    (tmp_path / "ops.csv").write_text("GET,42\nPUT,43\n")
    assert ob.traces.read(tmp_path / "ops.csv", key_column=1).keys.tolist() == [42, 43]
    (tmp_path / "named.csv").write_text("7,key\n8,42\n")
    assert ob.traces.read(tmp_path / "named.csv", key_column=1).keys.tolist() == [42]


def test_oracle_general_matches_the_existing_reader_and_carries_next_access(tmp_path: Path) -> None:
    t = ob.traces.Trace(np.array([1, 2, 1, 3, 2], dtype=np.int64))
    ob.traces.write_oracle_general(t, tmp_path / "a.oracleGeneral.bin")
    a = ob.traces.read(tmp_path / "a.oracleGeneral.bin")
    b = ob.traces.read_oracle_general(tmp_path / "a.oracleGeneral.bin")
    assert a.keys.tolist() == b.keys.tolist() and a.sizes.tolist() == b.sizes.tolist()  # type: ignore[union-attr]
    assert a.fields["next_access"].tolist() == [2, 4, -1, -1, -1]


def test_struct_dtype_follows_struct_sizes() -> None:
    import struct

    for fmt in ["<IQIq", ">hxxQ", "!3I", "=bBq", "<Q4xI"]:
        assert formats.struct_dtype(fmt).itemsize == struct.calcsize(fmt), fmt
    for bad in ["IQ", "<", "<Z", "@I", 5, "<xx"]:
        with pytest.raises(ValueError, match="struct"):
            formats.struct_dtype(bad)  # type: ignore[arg-type]


def test_big_endian_binary(tmp_path: Path) -> None:
    path = tmp_path / "be.bin"
    path.write_bytes(np.array([(7, 1), (9, 2)], dtype=[("k", ">u8"), ("s", ">u4")]).tobytes())
    t = ob.traces.read(path, "binary", struct=">QI", size_field=1)
    assert t.keys.tolist() == [7, 9] and t.sizes.tolist() == [1, 2]  # type: ignore[union-attr]


# ------------------------------------------------------------------ request logs


def test_mooncake_blocks(tmp_path: Path) -> None:
    lines = [
        {"timestamp": 0, "input_length": 1100, "output_length": 5, "hash_ids": [0, 1, 2]},
        {"timestamp": 7, "input_length": 512, "output_length": 5, "hash_ids": [0]},
        {"timestamp": 9, "input_length": 3, "output_length": 1, "hash_ids": []},
    ]
    path = tmp_path / "m.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    t = ob.traces.read(path)
    assert t.keys.tolist() == [0, 1, 2, 0]
    assert t.sizes.tolist() == [512, 512, 76, 512]  # type: ignore[union-attr]
    assert t.times.tolist() == [0, 0, 0, 7] and t.fields["request"].tolist() == [0, 0, 0, 1]  # type: ignore[union-attr]


def test_real_request_logs(dataset: Callable[[str], Path]) -> None:
    from osbench.radix import workloads

    m = ob.traces.read(dataset("mooncake-conversation"))
    reqs = workloads.mooncake("mooncake-conversation")
    assert m.keys.tolist() == reqs.tokens.tolist()  # the same block ids as the radix reader
    assert formats.MOONCAKE_BLOCK_TOKENS == workloads.MOONCAKE_BLOCK_TOKENS
    a = ob.traces.read(dataset("azure-code-2023"))
    assert len(a) == 8819 and a.sizes[:2].tolist() == [4808, 3180]  # type: ignore[index]
    assert a.fields["output_length"][:2].tolist() == [10, 8]
    assert np.all(np.diff(a.times) >= 0)  # type: ignore[arg-type]
    cp = ob.traces.read(dataset("cloudphysics"))
    assert (len(cp), cp.n_distinct) == (113_872, 48_974)


# ------------------------------------------------------------------ bad files


def test_truncated_binary_records_name_the_offset(tmp_path: Path) -> None:
    ob.traces.write(np.arange(10), tmp_path / "t.oracleGeneral.bin")
    data = (tmp_path / "t.oracleGeneral.bin").read_bytes()
    (tmp_path / "t.oracleGeneral.bin").write_bytes(data[:-5])
    with pytest.raises(TraceFileError, match=r"t\.oracleGeneral\.bin: byte offset 216: truncated record"):
        ob.traces.read(tmp_path / "t.oracleGeneral.bin")
    (tmp_path / "r.bin").write_bytes(b"\0" * 13)
    with pytest.raises(TraceFileError, match="byte offset 12"):
        ob.traces.read(tmp_path / "r.bin", "binary", struct="<Q4x")


def test_truncated_and_corrupt_zstd(tmp_path: Path) -> None:
    ob.traces.write(np.arange(1000), tmp_path / "t.csv.zst")
    data = (tmp_path / "t.csv.zst").read_bytes()
    (tmp_path / "cut.csv.zst").write_bytes(data[: len(data) // 2])
    with pytest.raises(TraceFileError, match=f"cut.csv.zst: byte offset {len(data) // 2}: truncated zstd"):
        ob.traces.read(tmp_path / "cut.csv.zst")
    (tmp_path / "bad.csv.zst").write_bytes(data[:4] + b"\xff" * 40)
    with pytest.raises(TraceFileError, match=r"bad.csv.zst: zstd frame at byte offset 0"):
        ob.traces.read(tmp_path / "bad.csv.zst")
    (tmp_path / "plain.csv.zst").write_text("1\n2\n")
    with pytest.raises(TraceFileError, match=r"plain.csv.zst: byte offset 0: named .zst but not zstd"):
        ob.traces.read(tmp_path / "plain.csv.zst")


def test_npy_wrong_layout_and_truncation(tmp_path: Path) -> None:
    np.save(tmp_path / "f.npy", np.array([1.5, 2.0]))
    with pytest.raises(TraceFileError, match=r"f.npy: byte offset 128: wrong layout: keys must be integers"):
        ob.traces.read(tmp_path / "f.npy")
    np.save(tmp_path / "m.npy", np.zeros((2, 2), dtype=np.int64))
    with pytest.raises(TraceFileError, match="shape"):
        ob.traces.read(tmp_path / "m.npy")
    np.save(tmp_path / "s.npy", np.zeros(3, dtype=[("x", "i8")]))
    with pytest.raises(TraceFileError, match="'key' or 'id' field"):
        ob.traces.read(tmp_path / "s.npy")
    np.save(tmp_path / "o.npy", np.array([1, "a"], dtype=object), allow_pickle=True)
    with pytest.raises(TraceFileError, match="objects"):
        ob.traces.read(tmp_path / "o.npy")
    np.save(tmp_path / "t.npy", np.arange(10, dtype=np.int64))
    data = (tmp_path / "t.npy").read_bytes()
    (tmp_path / "t.npy").write_bytes(data[:-3])
    with pytest.raises(TraceFileError, match=r"t.npy: byte offset 200: truncated"):
        ob.traces.read(tmp_path / "t.npy")
    (tmp_path / "x.npy").write_bytes(b"PK\x03\x04 not numpy")
    with pytest.raises(TraceFileError, match=r"x.npy: byte offset 0: not a .npy"):
        ob.traces.read(tmp_path / "x.npy")
    (tmp_path / "h.npy").write_bytes(b"\x93NUMPY\x01\x00\x10\x00{'descr': 'zz'}")
    with pytest.raises(TraceFileError, match=r"h.npy: byte offset 8: bad .npy header"):
        ob.traces.read(tmp_path / "h.npy")


def test_text_errors_name_the_line(tmp_path: Path) -> None:
    (tmp_path / "n.csv").write_text("key,size\n1,10\n2,ten\n")
    with pytest.raises(TraceFileError, match=r"n.csv: line 3, column 2: 'ten' is not an integer"):
        ob.traces.read(tmp_path / "n.csv", size_column=1)
    (tmp_path / "short.csv").write_text("1,10\n2\n")
    with pytest.raises(TraceFileError, match=r"short.csv: line 2: 1 fields"):
        ob.traces.read(tmp_path / "short.csv", size_column=1)
    (tmp_path / "k.txt").write_text("1\n2\n0x3\n")
    with pytest.raises(TraceFileError, match=r"k.txt: line 3, column 1"):
        ob.traces.read(tmp_path / "k.txt")
    (tmp_path / "u.txt").write_bytes(b"1\n\xff\xfe\n")
    with pytest.raises(TraceFileError, match=r"u.txt: byte offset 2: not UTF-8"):
        ob.traces.read(tmp_path / "u.txt")
    (tmp_path / "big.txt").write_text(f"{2**64}\n")
    with pytest.raises(TraceFileError, match="64-bit"):
        ob.traces.read(tmp_path / "big.txt")
    (tmp_path / "h.csv").write_text("a,b\n1,2\n")
    with pytest.raises(ValueError, match="key_column='c' is not accepted: the header has columns a, b"):
        ob.traces.read(tmp_path / "h.csv", key_column="c")
    with pytest.raises(ValueError, match="needs a header"):
        ob.traces.read(tmp_path / "h.csv", key_column="a", header=False)


@pytest.mark.parametrize(
    "name, text, fmt, error",
    [
        ("m.jsonl", '{"hash_ids": [1]}\n{"hash_ids": [1, \n', None, "m.jsonl: line 2: not a Mooncake request"),
        ("k.jsonl", '{"hash_ids": [1]}\n{"ids": [2]}\n', None, "k.jsonl: line 2"),
        ("s.jsonl", '{"hash_ids": ["a"]}\n', None, "s.jsonl: line 1"),
        (
            "a.csv",
            "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:03.97,5,1\nyesterday,4,1\n",
            None,
            "a.csv: line 3, column 1: 'yesterday' is not a timestamp",
        ),
        (
            "b.csv",
            "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:03.97,many,1\n",
            None,
            "b.csv: line 2, column 2",
        ),
        ("m.jsonl", '{"hash_ids": [1]}\n', "azure", "not an Azure LLM log"),
    ],
)
def test_request_log_errors(tmp_path: Path, name: str, text: str, fmt: Optional[str], error: str) -> None:
    (tmp_path / name).write_text(text)
    with pytest.raises(TraceFileError, match=error):
        ob.traces.read(tmp_path / name, fmt)


@pytest.mark.parametrize(
    "name, fmt",
    [("e.npy", None), ("e.csv", None), ("e.oracleGeneral.bin", None), ("e.jsonl", None), ("e.bin", "binary")],
)
def test_empty_files_are_refused(tmp_path: Path, name: str, fmt: str) -> None:
    (tmp_path / name).write_bytes(b"")
    with pytest.raises(TraceFileError, match=f"{name}: byte offset 0: the file is empty"):
        ob.traces.read(tmp_path / name, fmt, struct="<Q")
    (tmp_path / "blank.csv").write_text("\n \n")
    with pytest.raises(TraceFileError, match="no records"):
        ob.traces.read(tmp_path / "blank.csv")
    (tmp_path / "hdr.csv").write_text("TIMESTAMP,ContextTokens,GeneratedTokens\n")
    with pytest.raises(TraceFileError, match="no records"):
        ob.traces.read(tmp_path / "hdr.csv")


def test_bad_arguments(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no such trace file"):
        ob.traces.read(tmp_path / "missing.npy")
    (tmp_path / "x.weird").write_text("1\n")
    with pytest.raises(ValueError, match="cannot tell the trace format"):
        ob.traces.read(tmp_path / "x.weird")
    with pytest.raises(ValueError, match="format='parquet' is not accepted"):
        ob.traces.read(tmp_path / "x.weird", "parquet")
    with pytest.raises(ValueError, match="struct is required"):
        ob.traces.read(tmp_path / "x.weird", "binary")
    with pytest.raises(ValueError, match="key_field=3 is not accepted"):
        ob.traces.read(tmp_path / "x.weird", "binary", struct="<B", key_field=3)
    with pytest.raises(ValueError, match="not an integer"):
        ob.traces.read(tmp_path / "x.weird", "binary", struct="<d")
    with pytest.raises(ValueError, match="not accepted for writing"):
        ob.traces.write([1, 2], tmp_path / "m.jsonl")
    with pytest.raises(ValueError, match="sizes is not accepted"):
        ob.traces.write([1, 2], tmp_path / "m.npy", sizes=[1])
    with pytest.raises(TypeError, match="trace"):
        ob.traces.write([1.5], tmp_path / "m.npy")


# ------------------------------------------------------------------ streaming replay


@pytest.fixture(scope="module")
def trace_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[ob.traces.Trace, dict[str, Path]]:
    d = tmp_path_factory.mktemp("stream")
    t = ob.traces.zipf(3000, 0.9, 60_000, seed=21)
    files = {}
    for name in ["t.oracleGeneral.bin", "t.oracleGeneral.bin.zst", "t.npy", "t.npy.zst", "t.rec.zst", "t.csv"]:
        files[name] = d / name
        ob.traces.write(t, d / name, **(BINARY if name.startswith("t.rec") else {}))  # type: ignore[arg-type]
    return t, files


@pytest.mark.parametrize("chunk_size", [3_001, 1 << 20])
def test_streamed_replay_equals_one_piece(
    chunk_size: int, trace_files: tuple[ob.traces.Trace, dict[str, Path]]
) -> None:
    t, files = trace_files
    for policy in ob.cache.POLICIES:
        capacity = 300
        want = ob.cache.replay(t, policy, capacity).hits
        for name, path in files.items():
            if policy in ob.cache.OFFLINE and "oracleGeneral" not in name:
                continue
            opts = dict(format="binary", **BINARY) if name.startswith("t.rec") else {}
            got = ob.cache.replay(path, policy, capacity, chunk_size=chunk_size, **opts)  # type: ignore[arg-type]
            assert (got.hits, got.accesses) == (want, len(t)), (policy, name)


def test_chunks_are_bounded_and_complete(trace_files: tuple[ob.traces.Trace, dict[str, Path]]) -> None:
    t, files = trace_files
    for name, path in files.items():
        opts = dict(format="binary", **BINARY) if name.startswith("t.rec") else {}
        pieces = list(formats.iter_chunks(path, chunk_size=25_000, **opts))  # type: ignore[arg-type]
        assert [len(p) for p in pieces] == [25_000, 25_000, 10_000], name
        assert same_keys(np.concatenate([p.keys for p in pieces]), t.keys), name


def test_stream_object_by_hand() -> None:
    t = ob.traces.zipf(500, 1.0, 20_000, seed=2)
    s = ob.cache.stream("arc", 50)
    hits = sum(s.feed(piece) for piece in np.array_split(t.keys, 13))
    assert (
        hits == s.hits == ob.cache.replay(t, "arc", 50).hits and s.accesses == len(t) and s.n_distinct == t.n_distinct
    )
    opt = ob.cache.stream("opt", 50)
    with pytest.raises(ValueError, match="next_access"):
        opt.feed(t.keys[:10])
    with pytest.raises(ValueError, match="start a new one"):
        opt.feed(t.keys[:10], np.full(10, -1, dtype=np.int64))
    with pytest.raises(TypeError, match="int64 or uint64"):
        ob.cache.stream("lru", 5).feed(np.zeros(3))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="at least 10"):
        ob.cache.stream("s3fifo", 5)


def test_streaming_bad_files_fail_without_a_partial_result(
    tmp_path: Path, trace_files: tuple[ob.traces.Trace, dict[str, Path]]
) -> None:
    _, files = trace_files
    cut = tmp_path / "cut.oracleGeneral.bin"
    cut.write_bytes(files["t.oracleGeneral.bin"].read_bytes()[:-7])
    with pytest.raises(
        TraceFileError, match=f"cut.oracleGeneral.bin: byte offset {60_000 * 24 - 24}: truncated record"
    ):
        ob.cache.replay(cut, "lru", 100, chunk_size=1000)
    data = files["t.npy.zst"].read_bytes()
    (tmp_path / "cut.npy.zst").write_bytes(data[: len(data) - 20])
    with pytest.raises(TraceFileError, match=r"cut.npy.zst: byte offset .*truncated zstd"):
        ob.cache.replay(tmp_path / "cut.npy.zst", "lru", 100, chunk_size=1000)
    npy = files["t.npy"].read_bytes()
    (tmp_path / "cut.npy").write_bytes(npy[:-8])
    with pytest.raises(
        TraceFileError, match=r"cut.npy: byte offset .*the header promises 60000 items, the data holds 59999"
    ):
        ob.cache.replay(tmp_path / "cut.npy", "lru", 100)
    (tmp_path / "long.npy").write_bytes(npy + b"\0")
    with pytest.raises(TraceFileError, match="trailing bytes"):
        ob.cache.replay(tmp_path / "long.npy", "lru", 100)
    (tmp_path / "e.oracleGeneral.bin").write_bytes(b"")
    with pytest.raises(TraceFileError, match="the file is empty"):
        ob.cache.replay(tmp_path / "e.oracleGeneral.bin", "lru", 100)
    with pytest.raises(ValueError, match="mask=True is not accepted"):
        ob.cache.replay(files["t.npy"], "lru", 100, mask=True)
    with pytest.raises(ValueError, match="needs each access's next use"):
        ob.cache.replay(files["t.npy"], "opt", 100)
    with pytest.raises(
        TypeError, match=r"struct='<Q' is not accepted: it is not a parameter of lru \(its parameters: none\)"
    ):
        ob.cache.replay([1, 2], "lru", 100, struct="<Q")
    with pytest.raises(ValueError, match="chunk_size"):
        ob.cache.replay(files["t.npy"], "lru", 100, chunk_size=0)


def test_reference_engine_reads_files(trace_files: tuple[ob.traces.Trace, dict[str, Path]]) -> None:
    t, files = trace_files
    short = ob.traces.Trace(t.keys[:3000])
    path = files["t.csv"].with_name("short.csv")
    ob.traces.write(short, path)
    assert ob.cache.replay(path, "sieve", 40, engine="reference").hits == ob.cache.replay(short, "sieve", 40).hits


def test_opt_streams_the_real_trace_with_its_next_access(dataset: Callable[[str], Path]) -> None:
    path = dataset("cloudphysics")
    t = ob.traces.read(path)
    streamed = ob.cache.replay(path, "opt", 2000, chunk_size=10_000)
    assert streamed.hits == ob.cache.replay(ob.traces.Trace(t.keys), "opt", 2000).hits
