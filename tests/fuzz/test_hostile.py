"""The second hostile-input campaign's cases (#29) outside the serving engine: output targets
that are not regular files, results files that are devices, oversized lines, values that were
read or written as silent garbage, refusals that blamed the wrong thing, unclear errors. (Bad
arguments in general are in test_bad_inputs.py, damaged files in test_corruption.py.)"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import numpy as np
import pytest

import osbench as ob
from osbench import _files, _sweep
from osbench.errors import ArgumentError, ArgumentTypeError, TraceFileError
from osbench.traces.formats import _io

T = ob.traces.Trace(np.array([5, 1, 5, 2, 1, 5], dtype=np.int64))


def _kind(path: str) -> int:
    return stat.S_IFMT(os.lstat(path).st_mode)


# ------------------------------------------------------------------ output targets
def test_an_output_never_replaces_a_character_device() -> None:
    before = os.stat("/dev/null")
    ob.traces.write(T, "/dev/null", format="npy")
    _files.write_text("/dev/null", "text")
    after = os.stat("/dev/null")
    assert stat.S_ISCHR(after.st_mode) and (after.st_ino, after.st_rdev) == (before.st_ino, before.st_rdev)


def test_a_symbolic_link_is_written_through_and_stays_a_link(tmp_path: Path) -> None:
    target = tmp_path / "real.npy"
    target.write_bytes(b"old")
    target.chmod(0o640)
    link = tmp_path / "link.npy"
    link.symlink_to("real.npy")  # relative: followed from its own folder
    ob.traces.write(T, link)
    assert link.is_symlink() and np.array_equal(ob.traces.read(target).keys, T.keys)
    assert stat.S_IMODE(target.stat().st_mode) == 0o640, "a replaced file keeps its permissions"
    dangling = tmp_path / "dangling.csv"
    dangling.symlink_to(tmp_path / "made" / "new.csv")
    ob.traces.write(T, dangling)
    assert dangling.is_symlink() and np.array_equal(ob.traces.read(tmp_path / "made" / "new.csv").keys, T.keys)


def test_a_named_pipe_with_a_reader_gets_a_stream(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # a reader waiting before the write
    try:
        _files.write_bytes(fifo, b"streamed")
        assert os.read(reader, 100) == b"streamed"
    finally:
        os.close(reader)
    assert _kind(str(fifo)) == stat.S_IFIFO


@pytest.mark.parametrize("kind", ["directory", "pipe without a reader", "loop of links"])
def test_what_cannot_take_a_file_is_refused_before_anything_is_written(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "out"
    if kind == "directory":
        path.mkdir()
    elif kind == "pipe without a reader":
        os.mkfifo(path)
    else:
        path.symlink_to(tmp_path / "other")
        (tmp_path / "other").symlink_to(path)
    before = sorted(os.listdir(tmp_path))
    with pytest.raises(ArgumentError, match=rf"path='{path}' is not accepted: it is a"):
        ob.traces.write(T, path, format="npy")
    assert sorted(os.listdir(tmp_path)) == before, "no temporary file is left"


def test_a_sweep_refuses_a_device_as_its_results_file(tmp_path: Path) -> None:
    for out in ("/dev/full", "/dev/null", str(tmp_path)):
        with pytest.raises(ArgumentError, match=rf"out='{out}' is not accepted: it is a"):
            _sweep.finished(out)
        with pytest.raises(ArgumentError, match=rf"out='{out}' is not accepted"):
            _sweep.run([{"key": "a"}], dict, out, executor="threads", in_process=lambda cells, workers: iter(cells))


def test_a_results_line_too_long_is_named_and_a_cut_last_line_dropped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_sweep, "MAX_LINE", 100)
    out = tmp_path / "r.jsonl"
    out.write_text('{"key": "a"}\n' + "x" * 500 + "\n")
    with pytest.raises(ArgumentError, match="line 2: longer than"):
        _sweep.finished(out)
    out.write_text('{"key": "a"}\n{"key": "b"}\n{"key": "c", "cut sh')
    assert list(_sweep.finished(out)) == ["a", "b"]
    _sweep._drop_cut_line(out)
    assert out.read_text() == '{"key": "a"}\n{"key": "b"}\n'


# ------------------------------------------------------------------ lines that never end
def test_a_line_longer_than_the_limit_is_refused_before_it_is_parsed(tmp_path: Path) -> None:
    big = "9" * (_io.MAX_LINE + 10)
    azure = tmp_path / "log.csv"
    azure.write_text(f"TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.68,{big},5\n")
    text = tmp_path / "keys.txt"
    text.write_text(f"1\n{big}\n")
    for call in (lambda: ob.serve.Requests.read(azure), lambda: ob.traces.read(azure), lambda: ob.traces.read(text)):
        with pytest.raises(TraceFileError, match=r"line 2 \(byte offset \d+\): longer than 4 MiB") as info:
            call()
        assert len(str(info.value)) < 300


def test_an_error_quotes_a_long_field_cut_short(tmp_path: Path) -> None:
    p = tmp_path / "keys.csv"
    p.write_text("key\n1\n" + "x" * 100_000 + "\n")
    with pytest.raises(
        TraceFileError, match=r"line 3, column 1: 'x{40}'\.\.\. \(100,000 characters\) is not an integer"
    ):
        ob.traces.read(p)


# ------------------------------------------------------------------ false refusals
@pytest.mark.parametrize("n", [1, 3, 5])
def test_an_oracle_general_file_whose_last_chunk_holds_one_record_replays(tmp_path: Path, n: int) -> None:
    keys = np.arange(n, dtype=np.int64) % 2
    p = tmp_path / "t.oracleGeneral.bin"
    ob.traces.write_oracle_general(keys, p)
    want = ob.cache.replay(keys, "lru", 1).hits
    assert ob.cache.replay(p, "lru", 1, chunk_size=2).hits == want  # chunks of 2, then of 1
    assert ob.cache.replay(p, "opt", 1).hits == ob.cache.replay(keys, "opt", 1).hits


def test_a_list_of_keys_beyond_int64_is_not_made_floats() -> None:
    keys = [2**64 - 1, 2**64 - 1, 5]
    for engine in ("native", "reference"):
        assert ob.cache.replay(keys, "lru", 4, engine=engine).hits == 1
    assert ob.traces.Trace(keys).keys.dtype == np.uint64
    with pytest.raises(ArgumentError, match="trace is not accepted: 18446744073709551616 at index 1: it is outside"):
        ob.cache.replay([1, 2**64], "lru", 4)
    with pytest.raises(ArgumentError, match="trace is not accepted: -1 at index 0: a negative key beside"):
        ob.cache.replay([-1, 2**63], "lru", 4)


# ------------------------------------------------------------------ silent garbage
@pytest.mark.parametrize("times", [[0, 2**32, 5], [3, -1, 4], [0.5, 1.0, 2.0]])
def test_oracle_general_times_that_do_not_fit_are_refused_not_replaced(tmp_path: Path, times: list) -> None:
    p = tmp_path / "t.oracleGeneral.bin"
    with pytest.raises(ArgumentError, match=r"times is not accepted: .*oracleGeneral holds integer times"):
        ob.traces.write(ob.traces.Trace([1, 2, 3], times=times), p)
    assert not p.exists()
    ob.traces.write(ob.traces.Trace([1, 2, 3], times=[0, 2**32 - 1, 7]), p)  # the edges fit
    assert ob.traces.read(p).times.tolist() == [0, 2**32 - 1, 7]


@pytest.mark.parametrize(
    "text, where, what",
    [
        ("key,size\n1,-5\n2,3\n", "line 2, column 2", "-5 is not a size"),
        ("key,size\n1,3\n2,0\n", "line 3, column 2", "0 is not a size"),
        ("key,size\n", "line 2", "no records after the header"),
        ("key\n\n", "line 2", "no records after the header"),
    ],
)
def test_csv_sizes_below_one_and_a_header_alone_are_refused(tmp_path: Path, text: str, where: str, what: str) -> None:
    p = tmp_path / "t.csv"
    p.write_text(text)
    with pytest.raises(TraceFileError, match=f"{p}: {where}: {what}"):
        ob.traces.read(p, size_column=1 if "size" in text else None)


AZURE = "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.68,{},7\n2023-11-16 18:15:47.00,4,2\n"


def test_an_azure_log_read_as_a_trace_takes_no_key_column_and_no_empty_prompt(tmp_path: Path) -> None:
    p = tmp_path / "log.csv"
    p.write_text(AZURE.format(3))
    assert ob.traces.read(p).sizes.tolist() == [3, 4]
    with pytest.raises(ArgumentError, match="key_column=99 is not accepted for format='azure': it reads no key_column"):
        ob.traces.read(p, key_column=99)
    with pytest.raises(ArgumentError, match="struct='<Q' is not accepted for format='csv'"):
        ob.traces.read(p, format="csv", struct="<Q")
    with pytest.raises(ArgumentError, match="delimiter=';' is not accepted for format='npy': it writes no delimiter"):
        ob.traces.write(T, tmp_path / "t.npy", delimiter=";")
    p.write_text(AZURE.format(0))
    with pytest.raises(TraceFileError, match=f"{p}: line 2: ContextTokens 0 is no size"):
        ob.traces.read(p)


@pytest.mark.parametrize("engine", ["native", "reference"])
def test_a_bool_is_no_key_of_an_online_cache(engine: str) -> None:
    c = ob.cache.new("lru", 4, engine=engine)
    c.access(1)
    for key in (True, np.True_):
        with pytest.raises(ArgumentTypeError, match=rf"key={key!r} is not accepted: a bool is no key"):
            c.access(key)
        with pytest.raises(ArgumentTypeError, match="a bool is no key"):
            key in c  # noqa: B015
    sized = ob.cache.new("lru", 4, sizes=True, engine=engine)
    with pytest.raises(ArgumentTypeError, match="key=True is not accepted"):
        sized.access(True, 1)
    assert c.access(1) and len(c) == 1


def test_a_native_online_key_that_is_no_integer_says_so() -> None:
    c = ob.cache.new("lru", 4)
    with pytest.raises(ArgumentTypeError, match="key='a' is not accepted: the native engine takes integer keys"):
        c.access("a")
    with pytest.raises(ArgumentError, match=r"key=1361129467683753853853498429727072845824 is not accepted"):
        c.access(2**130)
    assert not c.access(np.int64(3)) and c.access(3)


def test_timing_samples_are_finite() -> None:
    for bad in ([float("nan"), 1.0], [1.0, float("inf")]):
        with pytest.raises(ArgumentError, match=r"samples is not accepted: .* at index"):
            ob.host.modes(bad)
        with pytest.raises(ArgumentError, match="samples is not accepted"):
            ob.host.Spread.of(bad)
    with pytest.raises(ArgumentTypeError, match=r"samples=.* is not accepted"):
        ob.host.modes(["a"])


# ------------------------------------------------------------------ unclear errors
def test_errors_that_were_unclear_name_the_argument(tmp_path: Path) -> None:
    with pytest.raises(ArgumentError, match="vpns is not accepted: 18446744073709551616 at index 0"):
        ob.mem.table_memory([2**64])
    with pytest.raises(ArgumentTypeError, match="vpns is not accepted: the native engine takes integer page numbers"):
        ob.mem.table_memory([1.5])
    assert ob.mem.table_memory([[1, 2], [3, 4]]).mapped_pages == 4
    with pytest.raises(ArgumentTypeError, match="report='notareport' is not accepted: a HostReport"):
        ob.host.write("notareport", tmp_path)  # type: ignore[arg-type]
