"""The registry of trace file formats: one entry a format, found by name or detected, and the
same reader whether a file is read whole or streamed."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import osbench as ob
from osbench.errors import ArgumentError
from osbench.traces import formats

AZURE = b"TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,374,44\n"

#: File names (and first bytes) -> the format detected.
DETECTED = [
    ("t.npy", b"", "npy"),
    ("t.data", b"\x93NUMPY\x01\x00", "npy"),
    ("t.csv", b"key,size\n1,2\n", "csv"),
    ("t.CSV.zst", b"", "csv"),
    ("a.csv", AZURE, "azure"),
    ("t.txt", b"", "txt"),
    ("t.tsv", b"", "txt"),
    ("t.trace", b"", "txt"),
    ("cp.oracleGeneral.bin", b"", "oracleGeneral"),
    ("cp.oracleGeneral.zst", b"", "oracleGeneral"),
    ("m.jsonl", b"", "mooncake"),
    ("m.json", b"", "mooncake"),
]


def test_the_registry_names_every_format_once() -> None:
    assert tuple(formats.REGISTRY) == formats.FORMATS == ob.traces.FORMATS
    assert all(f.name == name for name, f in formats.REGISTRY.items())
    assert formats.WRITABLE == ("npy", "csv", "txt", "oracleGeneral", "binary")
    assert formats.STREAMED == ("npy", "oracleGeneral", "binary")


@pytest.mark.parametrize("name, head, expected", DETECTED)
def test_detection(name: str, head: bytes, expected: str) -> None:
    assert formats.detect(name, head) == expected


def test_every_format_with_a_detector_is_detected_and_the_others_must_be_named() -> None:
    detectable = {f.name for f in formats.REGISTRY.values() if f.detect is not None}
    assert detectable == {expected for _, _, expected in DETECTED}
    assert set(formats.FORMATS) - detectable == {"binary"}
    with pytest.raises(ArgumentError, match="cannot tell the trace format"):
        formats.detect("t.bin")


@pytest.mark.parametrize("fmt", formats.STREAMED)
def test_streamed_pieces_are_the_whole_read(fmt: str, tmp_path: Path) -> None:
    t = ob.traces.Trace(np.arange(50, dtype=np.int64) % 7, sizes=np.arange(50) + 1, times=np.arange(50))
    opts = {"struct": "<QII", "key_field": 0, "size_field": 1, "time_field": 2} if fmt == "binary" else {}
    path = tmp_path / "t.trace.bin"
    ob.traces.write(t, path, fmt, **opts)  # type: ignore[arg-type]
    whole = ob.traces.read(path, fmt, **opts)  # type: ignore[arg-type]
    pieces = list(formats.iter_chunks(path, fmt, chunk_size=7, **opts))
    assert [len(p) for p in pieces] == [7] * 7 + [1]
    assert np.concatenate([p.keys for p in pieces]).tolist() == whole.keys.tolist() == t.keys.tolist()
    assert np.concatenate([p.sizes for p in pieces]).tolist() == whole.sizes.tolist()  # type: ignore[union-attr, misc]


def test_streaming_refuses_an_option_it_does_not_know(tmp_path: Path) -> None:
    ob.traces.write(np.arange(5), tmp_path / "t.npy")
    with pytest.raises(TypeError, match="colour='red' is not accepted: read options are"):
        list(formats.iter_chunks(tmp_path / "t.npy", colour="red"))


def test_one_mooncake_reader_serves_the_trace_the_requests_and_the_jobs(tmp_path: Path) -> None:
    path = tmp_path / "m.jsonl"
    path.write_text(
        '{"timestamp": 0, "input_length": 1100, "output_length": 5, "hash_ids": [0, 1, 2]}\n'
        '{"timestamp": 2000, "input_length": 512, "output_length": 7, "hash_ids": [0]}\n'
    )
    blocks = ob.traces.read(path)
    requests = ob.radix.mooncake(path)
    jobs = ob.sched.Workload.from_requests(path, size="output", tokens_per_second=1.0)
    assert blocks.keys.tolist() == requests.tokens.tolist() == [0, 1, 2, 0]
    assert requests.offsets.tolist() == [0, 3, 4] and blocks.fields["request"].tolist() == [0, 0, 0, 1]
    assert jobs.size.tolist() == [5.0, 7.0] and jobs.arrival.tolist() == [0.0, 2.0]
    path.write_text('{"timestamp": 0, "input_length": 5, "output_length": 1, "hash_ids": [0]}\n{"hash_ids": [1, \n')
    for read in (ob.traces.read, ob.radix.mooncake, ob.sched.Workload.from_requests):
        with pytest.raises(ob.traces.TraceFileError, match=r"m\.jsonl: line 2: not a Mooncake request"):
            read(path)
