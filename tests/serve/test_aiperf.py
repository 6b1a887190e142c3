"""AIPerf's per-request export (``profile_export.jsonl``): read as the sends to replay and the
points to fit on, and refused with the file and the line when it is not one."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any, Optional

import numpy as np
import pytest

import osbench as ob
from osbench.errors import ArgumentTypeError, TraceFileError
from osbench.serve import fit as fitting
from osbench.serve.aiperf import read_aiperf
from osbench.serve.fit import BenchmarkPoint, aiperf_points

T0 = 1_759_813_207_532_900_363
"""A send time in epoch nanoseconds (the one in AIPerf's documented record)."""


def record(
    start: int,
    end: int,
    isl: int = 550,
    osl: int = 9,
    ttft_ms: float = 40.0,
    itl_ms: Optional[float] = 5.0,
    phase: str = "profiling",
    error: Any = None,
) -> dict[str, Any]:
    """One record as AIPerf writes it (``MetricRecordInfo``)."""
    metrics: dict[str, Any] = {
        "input_sequence_length": {"value": isl, "unit": "tokens"},
        "time_to_first_token": {"value": ttft_ms, "unit": "ms"},
        "request_latency": {"value": (end - start) / 1e6, "unit": "ms"},
        "output_sequence_length": {"value": osl, "unit": "tokens"},
        "output_token_count": {"value": osl, "unit": "tokens"},
    }
    if itl_ms is not None:
        metrics["inter_token_latency"] = {"value": itl_ms, "unit": "ms"}
    metadata = {
        "session_num": 0,
        "x_request_id": "7609a2e7-aa53-4ab1-98f4-f35ecafefd25",
        "conversation_id": "77aa5b0e-b305-423f-88d5-c00da1892599",
        "turn_index": 0,
        "request_start_ns": start,
        "request_ack_ns": start + 1000,
        "request_end_ns": end,
        "worker_id": "worker_359d423a",
        "benchmark_phase": phase,
        "was_cancelled": False,
        "cancellation_time_ns": None,
    }
    return {"metadata": metadata, "metrics": None if error else metrics, "error": error}


def write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_the_documented_record_is_read(tmp_path: Path) -> None:
    # AIPerf's own example record (working-with-profile-exports.md), its duplicate
    # time_to_first_token key included: JSON keeps the last one, as AIPerf's pydantic model does.
    line = (
        '{"metadata": {"session_num": 45, "x_request_id": "7609a2e7", "x_correlation_id": "32ee4f33", '
        '"conversation_id": "77aa5b0e", "turn_index": 0, "request_start_ns": 1759813207532900363, '
        '"request_ack_ns": 1759813207650730976, "request_end_ns": 1759813207838764604, '
        '"worker_id": "worker_359d423a", "record_processor_id": "record_processor_1fa47cd7", '
        '"benchmark_phase": "profiling", "was_cancelled": false, "cancellation_time_ns": null}, '
        '"metrics": {"input_sequence_length": {"value": 550, "unit": "tokens"}, '
        '"time_to_first_token": {"value": 255.88656799999998, "unit": "ms"}, '
        '"request_latency": {"value": 297.52522799999997, "unit": "ms"}, '
        '"output_token_count": {"value": 9, "unit": "tokens"}, '
        '"time_to_first_token": {"value": 4.8984369999999995, "unit": "ms"}, '
        '"inter_chunk_latency": {"value": [4.898437, 5.316006, 4.801489], "unit": "ms"}, '
        '"output_sequence_length": {"value": 9, "unit": "tokens"}, '
        '"inter_token_latency": {"value": 5.2048325, "unit": "ms"}, '
        '"output_token_throughput_per_user": {"value": 192.1291415237666, "unit": "tokens/sec/user"}}, '
        '"error": null}'
    )
    p = tmp_path / "profile_export.jsonl"
    p.write_text(line + "\n")
    run = read_aiperf(p)
    assert (run.requests.prompt_len.tolist(), run.requests.output_len.tolist()) == ([550], [9])
    assert run.ttft.tolist() == [4.8984369999999995 / 1e3] and run.tpot.tolist() == [5.2048325 / 1e3]
    assert run.requests.arrival.tolist() == [0.0] and (run.concurrency, run.skipped) == (1, 0)


def test_the_sends_are_the_arrivals_in_send_order(tmp_path: Path) -> None:
    ms = 1_000_000
    records = [
        record(T0 - 50 * ms, T0 - 10 * ms, phase="warmup"),  # not measured
        record(T0 + 30 * ms, T0 + 90 * ms, isl=300, osl=1, ttft_ms=20.0, itl_ms=None),
        record(T0, T0 + 100 * ms, isl=100, osl=10, ttft_ms=10.0, itl_ms=4.0),
        record(T0 + 10 * ms, T0 + 40 * ms, isl=200, osl=20, ttft_ms=30.0, itl_ms=2.0),
        record(T0 + 20 * ms, T0 + 21 * ms, error={"code": 500, "type": "ServerError", "message": "boom"}),
        record(T0 + 95 * ms, T0 + 120 * ms, isl=400, osl=5, ttft_ms=50.0, itl_ms=6.0),
    ]
    cancelled = record(T0 + 5 * ms, T0 + 6 * ms)
    cancelled["metadata"]["was_cancelled"] = True
    run = read_aiperf(write(tmp_path / "profile_export.jsonl", [*records, cancelled]))
    assert run.requests.arrival.tolist() == [0.0, 0.01, 0.03, 0.095]
    assert run.requests.prompt_len.tolist() == [100, 200, 300, 400]
    assert run.requests.output_len.tolist() == [10, 20, 1, 5]
    assert run.ttft.tolist() == [0.01, 0.03, 0.02, 0.05]
    assert run.tpot[[0, 1, 3]].tolist() == [0.004, 0.002, 0.006] and math.isnan(run.tpot[2])
    # In flight: [0, 100), [10, 40), [30, 90), [95, 120) ms: three at once from 30 to 40 ms.
    assert (run.concurrency, run.skipped) == (3, 3)
    # Two groups of two: the one-token request has no inter-token latency to average.
    assert aiperf_points(run, groups=2) == [
        BenchmarkPoint(3, 150, 15, pytest.approx(0.02), pytest.approx(0.003)),
        BenchmarkPoint(3, 350, 3, pytest.approx(0.035), pytest.approx(0.006)),
    ]
    # The sends replay as any requests do.
    assert len(ob.serve.simulate(run.requests, model="llama-3-8b", gpu="h100").finish) == 4


def test_fit_takes_an_aiperf_export(tmp_path: Path) -> None:
    ms = 1_000_000
    records = [
        record(
            T0 + i * 40 * ms, T0 + i * 40 * ms + 900 * ms, isl=1000 + 200 * (i % 4), osl=100, ttft_ms=60.0 + 5 * (i % 4)
        )
        for i in range(16)
    ]
    f = fitting.fit("llama-3.1-8b", "h100", source="aiperf", path=write(tmp_path / "profile_export.jsonl", records))
    assert f.source == "points" and (f.fitted, f.held_out) == (6, 2)
    assert all(v >= 0 for v in f.corrections.values())
    with pytest.raises(
        ValueError, match="path=None is not accepted with source='aiperf': give AIPerf's profile_export"
    ):
        fitting.fit("llama-3.1-8b", "h100", source="aiperf")


@pytest.mark.parametrize(
    ("change", "what"),
    [
        (lambda r: r["metrics"].pop("time_to_first_token"), "KeyError: 'metrics.time_to_first_token'"),
        (lambda r: r["metrics"]["time_to_first_token"].update(unit="s"), "is in 's', not 'ms'"),
        (lambda r: r["metrics"]["output_sequence_length"].update(value=2.5), "a whole number of tokens"),
        (lambda r: r["metrics"]["input_sequence_length"].update(value=0), "a whole number of tokens"),
        (lambda r: r["metrics"]["inter_token_latency"].update(value=-1.0), "a finite number >= 0"),
        (lambda r: r["metrics"].pop("inter_token_latency"), "KeyError: 'metrics.inter_token_latency'"),
        (lambda r: r["metadata"].update(request_end_ns=T0 - 1), "is before request_start_ns"),
        (lambda r: r["metadata"].update(request_start_ns="soon"), "metadata.request_start_ns must be epoch"),
        (lambda r: r.update(metrics=[]), "an answered request has a metrics object"),
        (lambda r: r.pop("metadata"), "a record is a JSON object with a metadata object"),
    ],
)
def test_a_bad_record_is_refused_naming_the_line(tmp_path: Path, change: Any, what: str) -> None:
    bad = record(T0 + 5, T0 + 10)
    change(bad)
    p = write(tmp_path / "profile_export.jsonl", [record(T0, T0 + 10), bad])
    with pytest.raises(TraceFileError, match=rf"profile_export.jsonl: line 2: not an AIPerf request record .*{what}"):
        read_aiperf(p)


def test_a_length_the_engine_cannot_hold_is_refused_naming_the_line(tmp_path: Path) -> None:
    # The format reader takes any whole token count; the engine's bound is Requests' one check.
    p = write(tmp_path / "profile_export.jsonl", [record(T0, T0 + 10), record(T0 + 5, T0 + 20, isl=2**31)])
    for read in (read_aiperf, ob.serve.Requests.read):
        with pytest.raises(TraceFileError, match=r"profile_export\.jsonl: line 2: prompt_len\[1\]=2147483648"):
            read(p)


def test_files_without_a_measured_request_are_refused(tmp_path: Path) -> None:
    p = write(tmp_path / "warm.jsonl", [record(T0, T0 + 10, phase="warmup")])
    with pytest.raises(TraceFileError, match=r"warm\.jsonl: line 1: no answered request of the profiling phase"):
        read_aiperf(p)
    p.write_text("not json\n")
    with pytest.raises(TraceFileError, match="line 1: not an AIPerf request record"):
        read_aiperf(p)
    p.write_text('{"metadata": {"benchmark_phase": "profiling"}, "metrics": {"x": NaN}, "error": null}\n')
    with pytest.raises(TraceFileError, match="line 1: not an AIPerf request record"):
        read_aiperf(p)
    p.write_text("")
    with pytest.raises(TraceFileError, match="the file is empty"):
        read_aiperf(p)
    with pytest.raises(ArgumentTypeError, match="path=3 is not accepted"):
        read_aiperf(3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="groups=0 is not accepted"):
        aiperf_points(read_aiperf(write(p, [record(T0, T0 + 10)])), groups=0)


def test_a_zstd_export_reads_as_the_plain_one(tmp_path: Path) -> None:
    plain = write(tmp_path / "profile_export.jsonl", [record(T0 + i, T0 + 10 + i) for i in range(5)])
    packed = tmp_path / "profile_export.jsonl.zst"
    packed.write_bytes(ob.traces.formats.compress(plain.read_bytes()))
    a, b = read_aiperf(plain), read_aiperf(packed)
    np.testing.assert_array_equal(a.requests.arrival, b.requests.arrival)
    np.testing.assert_array_equal(a.ttft, b.ttft)


def test_every_request_reader_takes_the_export(tmp_path: Path) -> None:
    ms = 1_000_000
    records = [record(T0 + 5 * ms, T0 + 50 * ms, isl=120), record(T0, T0 + 90 * ms, isl=110, phase="warmup")]
    records += [record(T0 + i * ms, T0 + 70 * ms, isl=100 + i, osl=3 + i) for i in (2, 9)]
    p = write(tmp_path / "profile_export.jsonl", records)
    run = read_aiperf(p)
    requests = ob.serve.Requests.read(p)  # detected by its content
    np.testing.assert_array_equal(requests.arrival, run.requests.arrival)
    np.testing.assert_array_equal(requests.prompt_len, [102, 120, 109])
    np.testing.assert_array_equal(requests.output_len, run.requests.output_len)
    assert ob.serve.Requests.read(p, format="aiperf").name == "profile_export.jsonl"
    blank_first = tmp_path / "blank.jsonl"
    blank_first.write_text("\n\n" + p.read_text())  # told by its first record, not its first line
    np.testing.assert_array_equal(ob.serve.Requests.read(blank_first).arrival, requests.arrival)
    jobs = ob.sched.Workload.from_requests(p, load=None, tokens_per_second=100.0)
    np.testing.assert_allclose(np.sort(jobs.arrival), [0.0, 0.003, 0.007])
    with pytest.raises(TraceFileError, match="line 5: not an AIPerf request record"):
        p.write_text(p.read_text() + '{"metadata": {"request_start_ns": 1}, "metrics": 3, "error": null}\n')
        ob.serve.Requests.read(p)


def test_the_command_line_serves_an_export(tmp_path: Path) -> None:
    ms = 1_000_000
    records = [record(T0 + i * 30 * ms, T0 + i * 30 * ms + 400 * ms, isl=300 + i, osl=20) for i in range(12)]
    p = write(tmp_path / "profile_export.jsonl", records)
    out = subprocess.run(
        [sys.executable, "-m", "osbench", "serve", "simulate", "--trace", str(p), "--model", "llama-3-8b", "--json"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout)["summary"]
    result = ob.serve.simulate(read_aiperf(p).requests, model="llama-3-8b", gpu="h100")
    assert summary == json.loads(json.dumps(result.summary().to_dict()))
