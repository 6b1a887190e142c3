"""The command line: lecture tables, the report folder, one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest


def osbench(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "osbench", *args], capture_output=True, text=True, cwd=cwd, timeout=600
    )


def test_lecture_04_prints_the_tables() -> None:
    out = osbench("lecture", "04")
    assert out.returncode == 0, out.stderr
    assert "Belady's anomaly" in out.stdout and "Zipf(0.8)" in out.stdout
    belady = out.stdout.split("Belady's anomaly")[1]
    assert "fifo           9        10" in belady


def test_lecture_json() -> None:
    out = osbench("lecture", "04", "--json")
    data = json.loads(out.stdout)
    rows = {r[0]: r[1:] for r in data["04"][2]["rows"]}
    assert rows == {"fifo": [9, 10], "lru": [10, 8], "opt": [7, 6]}


def test_cache_commands(tmp_path: Path) -> None:
    out = osbench("cache", "replay", "--policy", "arc", "--capacity", "100", "--json")
    assert json.loads(out.stdout)["hit_ratio"] == pytest.approx(0.458, abs=0.01)
    out = osbench("cache", "curve", "--policy", "lru", "--capacities", "10,100", "--json")
    assert len(json.loads(out.stdout)["hit_ratio"]) == 2
    np.save(tmp_path / "t.npy", np.array([1, 2, 1, 2], dtype=np.int64))
    out = osbench("cache", "replay", "--trace", str(tmp_path / "t.npy"), "--capacity", "2", "--json")
    assert json.loads(out.stdout)["hits"] == 2
    # --sample: capacities under 100 / rate are counted exactly, so these equal the exact curve.
    exact = json.loads(osbench("cache", "curve", "--zipf", "500,1.0,20000", "--capacities", "5,50", "--json").stdout)
    sampled = json.loads(
        osbench("cache", "curve", "--zipf", "500,1.0,20000", "--capacities", "5,50", "--sample", "0.5", "--json").stdout
    )
    assert sampled["hit_ratio"] == exact["hit_ratio"]


def test_cache_commands_with_sizes(tmp_path: Path) -> None:
    import osbench as ob

    t = ob.traces.Trace(
        np.array([1, 2, 1, 3, 1, 2], dtype=np.int64), sizes=np.array([4, 4, 4, 9, 4, 4], dtype=np.uint64)
    )
    ob.traces.write_oracle_general(t, tmp_path / "t.oracleGeneral.bin")
    out = osbench(
        "cache", "replay", "--trace", str(tmp_path / "t.oracleGeneral.bin"), "--capacity", "8", "--sizes", "--json"
    )
    assert json.loads(out.stdout)["hits"] == ob.cache.replay(t, "lru", 8, sizes=True).hits == 3


@pytest.mark.parametrize(
    "args, message",
    [
        (["cache", "replay", "--policy", "nope"], "fifo, lru, lfu, clock, arc, opt"),
        (["cache", "replay", "--trace", "/no/such/file.bin"], "not found"),
        (["cache", "replay", "--capacity", "0"], "capacity"),
    ],
)
def test_errors_are_one_line(args: list[str], message: str, tmp_path: Path) -> None:
    out = osbench(*args)
    assert out.returncode == 2
    assert message in out.stderr and out.stderr.count("\n") == 1 and "Traceback" not in out.stderr


def test_bad_trace_file_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.oracleGeneral.bin"
    bad.write_bytes(b"\x00" * 30)
    out = osbench("cache", "replay", "--trace", str(bad))
    assert out.returncode == 2 and "byte offset 24" in out.stderr and "Traceback" not in out.stderr
    plain = tmp_path / "bad.bin"  # a name that does not tell the format: --format does
    plain.write_bytes(b"\x00" * 30)
    out = osbench("cache", "replay", "--trace", str(plain), "--format", "oracleGeneral")
    assert out.returncode == 2 and "byte offset 24" in out.stderr and "Traceback" not in out.stderr


def test_report_quick_writes_the_folder(tmp_path: Path) -> None:
    out_dir = tmp_path / "rep"
    out = osbench("report", "--quick", "--out", str(out_dir))
    assert out.returncode == 0, out.stderr
    for name in ("index.html", "report.md", "results.json"):
        assert (out_dir / name).stat().st_size > 0
    results = json.loads((out_dir / "results.json").read_text())
    assert list(results["sections"]) == [
        "01-host",
        "02-sched",
        "03-mem",
        "04-cache",
        "05-radix",
        "06-serve",
        "07-steptime",
        "engines",
    ]
    manifest = results["manifest"]
    assert manifest["run"]["quick"] is True and manifest["osbench"]["version"] and manifest["machine"]["python"]
    assert results["findings"] and list(manifest["sections"]) == list(results["sections"])
    figures = [f for s in results["sections"].values() for f in s["figures"]]
    assert len(figures) >= 9
    shards = results["sections"]["04-cache"]["shards"]
    exact, sampled = shards["hit_ratio"]["exact"], shards["hit_ratio"]["SHARDS rate 0.01"]
    small = [i for i, c in enumerate(shards["capacities"]) if c * 0.01 < 100]
    assert small and [sampled[i] for i in small] == [exact[i] for i in small]  # counted exactly there
    for fig in figures:
        assert (out_dir / "figures" / f"{fig}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    from html.parser import HTMLParser

    class Collect(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.images: list[str] = []
            self.tables = 0

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            if tag == "img":
                self.images.append(dict(attrs)["src"] or "")
            self.tables += tag == "table"

    page = Collect()
    page.feed((out_dir / "index.html").read_text())
    assert len(page.images) == len(figures) and all(src.startswith("data:image/png;base64,") for src in page.images)
    assert page.tables > 20
    assert "](figures/" in (out_dir / "report.md").read_text()
    assert not [p for p in out_dir.rglob("*") if p.name.startswith(".") or p.suffix == ".tmp"]


def test_interrupted_report_leaves_no_files(tmp_path: Path) -> None:
    import signal

    out_dir = tmp_path / "rep"
    proc = subprocess.Popen(
        [sys.executable, "-m", "osbench", "report", "--quick", "--out", str(out_dir)],
        stderr=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    for line in proc.stderr:  # progress lines: interrupt once the second section starts
        if "[2/" in line:
            break
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err
    leftovers = list(out_dir.rglob("*")) if out_dir.exists() else []
    assert leftovers == []


@pytest.mark.parametrize(
    "command",
    [
        ["lecture"],
        ["report"],
        ["host"],
        ["sched", "simulate"],
        ["mem", "alloc"],
        ["sweep"],
        ["radix", "replay"],
        ["cache", "replay"],
        ["cache", "curve"],
    ],
)
def test_every_command_has_help_with_an_example(command: list[str]) -> None:
    out = osbench(*command, "--help")
    assert out.returncode == 0 and "example: osbench" in out.stdout
    if command != ["lecture"]:
        assert "--seed" in out.stdout and "--engine" in out.stdout and "--json" in out.stdout


def test_sched_and_radix_commands_json() -> None:
    out = osbench("sched", "simulate", "--policy", "fcfs", "--jobs", "2000", "--json")
    assert json.loads(out.stdout)["summary"]["jobs"] == 2000
    ref = osbench("sched", "simulate", "--policy", "fcfs", "--jobs", "2000", "--json", "--engine", "reference")
    assert json.loads(ref.stdout)["summary"] == json.loads(out.stdout)["summary"]
    out = osbench("radix", "replay", "--capacity", "500", "--conversations", "50", "--json")
    assert 0 < json.loads(out.stdout)["hit_ratio"] < 1
    out = osbench("mem", "alloc", "--strategy", "paged", "--requests", "500", "--json")
    assert json.loads(out.stdout)["requests"] == 500
    out = osbench("mem", "alloc", "--strategy", "buddy")
    assert out.returncode == 2 and "first" in out.stderr
    out = osbench("radix", "replay", "--mooncake", "/no/such.jsonl")
    assert out.returncode == 2 and "not found" in out.stderr


def test_sweep_runs_and_resumes(tmp_path: Path) -> None:
    spec = tmp_path / "spec.json"
    trace = tmp_path / "t.npy"
    import numpy as np

    np.save(trace, np.arange(2000, dtype=np.int64) % 300)
    spec.write_text(json.dumps({"traces": [str(trace)], "policies": ["lru", "fifo"], "capacities": [100, 400]}))
    out = tmp_path / "results.jsonl"
    first = osbench("sweep", str(spec), "--out", str(out), "--workers", "1", "--json")
    assert first.returncode == 0, first.stderr
    results = json.loads(first.stdout)
    assert len(results) == 4 and {r["policy"] for r in results} == {"lru", "fifo"}
    again = osbench("sweep", str(spec), "--out", str(out), "--json")
    assert json.loads(again.stdout) == results and len(out.read_text().splitlines()) == 4
    assert out.with_suffix(".png").exists()
    missing = osbench("sweep", str(tmp_path / "nope.toml"))
    assert missing.returncode == 2 and "not found" in missing.stderr


@pytest.mark.parametrize(
    "command, registry",
    [
        (["sched", "simulate"], "sched.POLICIES"),
        (["mem", "alloc"], "mem.STRATEGIES"),
        (["radix", "replay"], "radix.MODES"),
        (["cache", "replay"], "cache.POLICIES"),
        (["cache", "curve"], "traces.FORMATS"),
    ],
)
def test_help_lists_every_name_of_the_registry(command: list[str], registry: str) -> None:
    import osbench as ob

    package, table = registry.split(".")
    names = getattr(getattr(ob, package), table)
    text = " ".join(osbench(*command, "--help").stdout.split())
    missing = [n for n in names if n not in text]
    assert not missing, f"{' '.join(command)} --help leaves out {missing}"


def test_refused_input_is_one_line_and_a_bug_keeps_its_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from osbench import cli
    from osbench.cli import datasets as datasets_command
    from osbench.errors import ArgumentError

    def refuse(args: object) -> int:
        raise ArgumentError("policy='x' is not accepted: use one of a, b")

    def bug(args: object) -> int:
        raise TypeError("unsupported operand")

    monkeypatch.setattr(datasets_command, "cmd_datasets", refuse)
    assert cli.main(["datasets"]) == 2
    assert capsys.readouterr().err == "osbench: error: policy='x' is not accepted: use one of a, b\n"
    monkeypatch.setattr(datasets_command, "cmd_datasets", bug)
    with pytest.raises(TypeError, match="unsupported operand"):
        cli.main(["datasets"])


def _never_run(*args: object, **kwargs: object) -> None:
    raise AssertionError("the work ran before its output was checked")


@pytest.mark.parametrize(
    "argv, message",
    [
        (["serve", "simulate", "--poisson", "100,10", "--out", ""], "--out '' is not accepted: give a file name"),
        (["serve", "simulate", "--poisson", "100,10", "--out", "{tmp}"], "is not accepted: it is a folder"),
        (["serve", "simulate", "--poisson", "100,10", "--out", "{tmp}/f/x.csv"], "/f is a file, not a folder"),
        (["serve", "sweep", "{spec}", "--out", "{tmp}/r.jsonl", "--figure", "{tmp}/f/x.png"], "--figure"),
        (["serve", "sweep", "{spec}", "--out", ""], "--out '' is not accepted"),
        (["sweep", "{spec}", "--out", "{tmp}"], "is not accepted: it is a folder"),
        (["report", "--out", ""], "--out '' is not accepted: give a folder"),
        (["host", "--out", ""], "--out '' is not accepted: give a folder"),
    ],
)
def test_outputs_are_checked_before_the_work(
    argv: list[str], message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """An output that cannot be written is refused in one line before anything runs, and the
    message names the option, never a temporary file."""
    import osbench as ob
    from osbench import cli, report
    from osbench.cache import sweep as cache_sweep
    from osbench.serve import sweep as serve_sweep

    (tmp_path / "f").write_text("a file where a folder would be")
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"requests": {"poisson": [20, 5]}, "rates": [4]}))
    for target, name in ((ob.serve, "simulate"), (serve_sweep, "run"), (cache_sweep, "run"), (ob.host, "measure")):
        monkeypatch.setattr(target, name, _never_run)
    monkeypatch.setattr(report, "run", _never_run)
    assert cli.main([a.format(tmp=tmp_path, spec=spec) for a in argv]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and ".tmp" not in err


@pytest.mark.parametrize(
    "args, message",
    [
        (["--poisson", "1e20,10"], "n=100000000000000000000 is not accepted: the requests would need about"),
        (["--poisson", "100,10", "--seed", "-1"], "seed=-1 is not accepted"),
        (["--conversations", "1e18,1"], "n_conversations=1000000000000000000 is not accepted"),
    ],
)
def test_serve_generator_errors_are_one_line(args: list[str], message: str) -> None:
    out = osbench("serve", "simulate", *args)
    assert out.returncode == 2 and message in out.stderr and out.stderr.count("\n") == 1, out.stderr


def ctrl_c_after(delay: float, ignored: bool) -> tuple[int, str, str]:
    """``osbench sched simulate`` of 10M jobs started as the console script starts (it imports
    osbench, then osbench.cli, then calls main; ``ignored``: with SIGINT ignored), sent SIGINT
    ``delay`` seconds after osbench's package is imported: its (status, stdout, stderr)."""
    import signal
    import time

    script = (
        "import signal, sys\n"
        + ("signal.signal(signal.SIGINT, signal.SIG_IGN)\n" if ignored else "")
        + "sys.argv = ['osbench', 'sched', 'simulate', '--jobs', '10000000', '--policy', 'ps']\n"
        "import osbench\n"
        "print('ready', flush=True)\n"
        "from osbench.cli import main\n"
        "sys.exit(main())\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "ready"
    time.sleep(delay)
    assert proc.poll() is None  # still starting up or working (the run takes seconds)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)  # generous: a busy machine; the run alone takes longer
    return proc.returncode, out, err


@pytest.mark.parametrize("delay", [0.0, 0.02, 0.05, 0.1, 0.2, 0.4, 0.8])
def test_ctrl_c_at_any_moment_of_start_up_exits_130(delay: float) -> None:
    """SIGINT from the moment osbench's package is imported, through the command's own
    imports, its parser and into the work: exit status 130 and one line, never a traceback."""
    assert ctrl_c_after(delay, ignored=False)[::2] == (130, "osbench: interrupted\n")


@pytest.mark.parametrize("delay", [0.0, 0.5])
def test_a_command_started_with_ctrl_c_ignored_ignores_it_throughout(delay: float) -> None:
    """Started with SIGINT ignored (``nohup``, a background job of a shell without job
    control), the command ignores Ctrl-C during start-up and after it alike, as Python leaves
    it: it finishes its work and exits 0."""
    status, out, err = ctrl_c_after(delay, ignored=True)
    assert (status, err) == (0, "") and "ps" in out, err


def test_papercuts() -> None:
    """A warning is one line; registry names are taken in any case; group pages have an example."""
    out = osbench("sched", "simulate", "--load", "1.2", "--jobs", "2000")
    assert out.returncode == 0 and out.stderr.startswith("osbench: warning: load=1.2") and out.stderr.count("\n") == 1
    upper = osbench("cache", "replay", "--policy", "LRU", "--json")
    assert json.loads(upper.stdout)["policy"] == "lru"
    for group in ("sched", "mem", "radix", "serve", "cache"):
        assert "example: osbench" in osbench(group, "--help").stdout, group


def test_a_ctrl_c_that_an_import_turned_into_its_error_still_exits_130(monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    """Ctrl-C inside the C code of an import (numpy importing datetime) surfaces as an
    ImportError: the command still answers it as a Ctrl-C, one line and status 130."""
    import signal

    from osbench import cli

    def interrupted_import(argv: list[str]) -> None:
        try:
            cli._CtrlC.handler(signal.SIGINT, None)
        except KeyboardInterrupt:
            raise ImportError('PyCapsule_Import could not import module "datetime"') from None

    monkeypatch.setattr(cli, "parser", interrupted_import)
    monkeypatch.setattr(cli._CtrlC, "seen", False)
    assert cli.main(["sched"]) == 130
    assert capsys.readouterr().err == "osbench: interrupted\n"

    # Without a Ctrl-C the same error is a bug, and keeps its traceback.
    def broken_import(argv: list[str]) -> None:
        raise ImportError("broken")

    monkeypatch.setattr(cli, "parser", broken_import)
    monkeypatch.setattr(cli._CtrlC, "seen", False)
    with pytest.raises(ImportError, match="broken"):
        cli.main(["sched"])


def test_a_policy_takes_its_parameters_on_the_command_line(capsys) -> None:  # type: ignore[no-untyped-def]
    import osbench as ob
    from osbench.cli import main

    t = ob.traces.zipf(300, 0.9, 5000, seed=1)  # the command line's default --seed
    for spec, policy, params in [("lruk:k=3", "lruk", {"k": 3}), ("SLRU:Segments=2", "slru", {"segments": 2})]:
        assert main(["cache", "replay", "--policy", spec, "--capacity", "30", "--json", "--zipf", "300,0.9,5000"]) == 0
        got = json.loads(capsys.readouterr().out)
        assert (got["policy"], got["hits"]) == (policy, ob.cache.replay(t, policy, 30, **params).hits)
    # k=3 is not LRU-K's default: the parameter reached the policy.
    assert ob.cache.replay(t, "lruk", 30, k=3).hits != ob.cache.replay(t, "lruk", 30).hits
    for spec, message in [("lru:k=1", "'k=1' is not KEY=VALUE of lru (none)"), ("lruk:k=x", "k='x': an integer")]:
        with pytest.raises(SystemExit) as stop:
            main(["cache", "replay", "--policy", spec])
        assert stop.value.code == 2 and message in capsys.readouterr().err
