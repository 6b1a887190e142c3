"""osbench.host: quick-mode probes give sane, positive, ordered figures; no timing thresholds."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import osbench as ob
from osbench import _native
from osbench.host import reference, roundtrip
from osbench.host.stats import Spread, modes, split_by_placement

CPUS = sorted(os.sched_getaffinity(0))


@pytest.fixture(scope="module")
def report() -> ob.host.HostReport:
    lines: list[str] = []
    r = ob.host.measure(quick=True, progress=lines.append)
    assert lines, "progress was never reported"
    return r


# --- host facts ------------------------------------------------------------------------------


def test_info_describes_this_host() -> None:
    i = ob.host.info()
    assert i.logical_cpus and i.logical_cpus >= 1
    assert list(i.usable_cpus) == CPUS
    assert i.page_size > 0
    assert i.python_build in ("with GIL", "free-threaded")
    assert all(c.size_bytes > 0 and c.level >= 1 for c in i.caches)
    assert i.memory_total is None or i.memory_total > 0
    json.dumps(i.to_dict())


def test_sysfs_setting_parser() -> None:
    from osbench.host.info import _size, selected

    assert selected("always [madvise] never") == "madvise"
    assert selected(None) is None
    assert _size("32K") == 32 << 10 and _size("32768K") == 32 << 20 and _size("1M") == 1 << 20
    assert _size("") is None


# --- demo 1 and 2 ----------------------------------------------------------------------------


def test_thread_write_seen_child_write_not(report: ob.host.HostReport) -> None:
    iso = report.isolation
    assert iso.thread_write_seen
    assert not iso.child_write_seen
    assert iso.child_saw == 2 and iso.seen_after_child == 1


def test_gil_rows_are_positive(report: ob.host.HostReport) -> None:
    g = report.gil
    assert [(r.workload, r.way) for r in g.rows] == [
        (w, m) for w in ("python", "numpy") for m in ("sequential", "threads", "processes")
    ]
    assert all(r.seconds.median > 0 and r.speedup > 0 and r.units == 4 for r in g.rows)
    assert g.usable_cpus == len(CPUS)
    seq = [r for r in g.rows if r.way == "sequential"]
    assert all(r.speedup == pytest.approx(1.0) for r in seq)


def test_gil_scaling_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="units"):
        ob.host.gil_scaling(units=0)
    with pytest.raises(TypeError, match="python_n"):
        ob.host.gil_scaling(python_n=1.5)  # type: ignore[arg-type]


# --- round trips -----------------------------------------------------------------------------


def why_not_here(r: ob.host.RoundTrip) -> str | None:
    """The reason a probe cannot run on this host, or None when it must run."""
    if r.mechanism == "call" and r.placement == "different CPUs":
        return "a function call has one end"
    if r.engine == "perf":
        if ob.host.perf_available() is None:
            return "perf is not installed"
        if r.placement == "different CPUs":
            return "perf bench pins both ends together"
    if r.placement == "different CPUs" and len(CPUS) < 2:
        return "one usable CPU"
    return None


def test_every_mechanism_and_placement_is_measured_unless_it_cannot_be_here(report: ob.host.HostReport) -> None:
    """A probe reported unavailable must be one that this host cannot run, for that reason;
    every other one measured something, and a native one counted every message both ways."""
    seen = {(r.mechanism, r.placement) for r in report.round_trips}
    for name in ob.host.MECHANISMS.keys():
        assert (name, "same CPU") in seen
    for r in report.round_trips:
        why = why_not_here(r)
        if why is not None:
            assert r.spread is None and why in r.reason, r
            continue
        assert r.spread is not None, r
        assert r.spread.min > 0 and r.spread.p25 <= r.spread.median <= r.spread.p75 <= r.spread.max
        if r.engine == "native":
            rounds = r.checks["round_trips"]
            assert rounds > 0 and r.checks["received_a"] == r.checks["received_b"] == rounds, r
            assert r.checks["mismatched"] == 0, r


def test_hops_cost_more_than_a_function_call(report: ob.host.HostReport) -> None:
    call = report.call_ns
    assert call is not None and call > 0
    hops = [r for r in report.round_trips if r.between in ("threads", "processes") and r.spread is not None]
    assert any(r.between == "processes" for r in hops)
    for r in hops:
        assert r.spread is not None and r.spread.median > call, r
        ratio = report.ratio_to_call(r)
        assert ratio is not None and ratio > 1


def test_same_cpu_placement_names_its_cpus(report: ob.host.HostReport) -> None:
    r = report.find("native-thread-pipe", "same CPU")
    assert r is not None and r.cpus == f"{CPUS[0]} & {CPUS[0]}"
    cross = report.find("native-thread-pipe", "different CPUs")
    assert cross is not None
    if len(CPUS) < 2:
        assert cross.spread is None and "one usable CPU" in cross.reason
    else:
        assert cross.cpus == f"{CPUS[0]} & {CPUS[1]}"


def test_unpinned_runs_keep_their_modes(report: ob.host.HostReport) -> None:
    for r in report.round_trips:
        if r.placement == "as scheduled" and r.spread is not None and r.modes:
            assert sum(m.fraction for m in r.modes) == pytest.approx(1.0)
            assert sum(m.spread.n for m in r.modes) == r.spread.n
            if r.engine == "native":
                assert {m.label for m in r.modes} <= {"same CPU", "different CPUs"}


def test_native_pingpong_alternated_both_sides_counted(report: ob.host.HostReport) -> None:
    natives = [r for r in report.round_trips if r.engine == "native" and r.spread is not None]
    assert len(natives) >= 6
    for r in natives:
        c = r.checks
        assert c["received_a"] == c["received_b"] == c["round_trips"] > 0
        assert c["mismatched"] == 0


@pytest.mark.parametrize("mechanism", _native.HOST_MECHANISMS)
@pytest.mark.parametrize("mode", ["threads", "processes"])
def test_native_pingpong_pinned(mechanism: str, mode: str) -> None:
    a, b = CPUS[0], CPUS[-1]
    r = _native.host_pingpong(mechanism, mode, 30, 10, 3, a, b)
    assert r["round_trips"] == r["received_a"] == r["received_b"] == 100
    assert r["mismatched"] == 0
    assert len(r["samples_ns"]) == 30 and (r["samples_ns"] > 0).all()
    assert (r["cpu_a"] == a).all() and (r["cpu_b"] == b).all()


def test_native_pingpong_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="mechanism"):
        _native.host_pingpong("smoke-signal", "threads", 10)
    with pytest.raises(ValueError, match="mode"):
        _native.host_pingpong("pipe", "fibers", 10)
    with pytest.raises(ValueError, match="rounds"):
        _native.host_pingpong("pipe", "threads", 0)
    with pytest.raises(ValueError, match="batch"):
        _native.host_pingpong("pipe", "threads", 10, 0, 0)
    with pytest.raises(ValueError, match="cpu_b"):
        _native.host_pingpong("pipe", "threads", 10, 0, 1, None, 4096)


def test_round_trip_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="mechanism='carrier-pigeon'"):
        ob.host.round_trip("carrier-pigeon")
    with pytest.raises(ValueError, match="placement"):
        ob.host.round_trip("call", "far")
    with pytest.raises(ValueError, match="rounds"):
        ob.host.round_trip("call", rounds=0)
    with pytest.raises(TypeError, match="warmup"):
        ob.host.round_trip("call", warmup=None)  # type: ignore[arg-type]


def test_probes_degrade_to_not_available(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(roundtrip, "perf_available", lambda: None)
    r = ob.host.round_trip("perf-sched-pipe", "same", rounds=10)
    assert r.spread is None and "perf" in r.reason
    monkeypatch.setattr(roundtrip, "usable_cpus", lambda: (CPUS[0],))
    r = ob.host.round_trip("native-thread-pipe", "cross", rounds=10)
    assert r.spread is None and "one usable CPU" in r.reason

    def refuse(pid: int, cpus: object) -> None:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "sched_setaffinity", refuse)
    r = ob.host.round_trip("thread-pipe", "same", rounds=10)
    assert r.spread is None and "affinity" in r.reason
    r = ob.host.round_trip("thread-pipe", "unpinned", rounds=10, warmup=2)
    assert r.spread is not None


def test_round_trip_restores_the_callers_cpu_set() -> None:
    before = os.sched_getaffinity(0)
    ob.host.round_trip("thread-pipe", "same", rounds=20, warmup=5)
    ob.host.round_trip("call", "same", rounds=5, warmup=1)
    assert os.sched_getaffinity(0) == before


# --- statistics ------------------------------------------------------------------------------


def test_spread_orders_and_refuses_empty() -> None:
    s = Spread.of([5.0, 1.0, 3.0, 2.0, 4.0])
    assert (s.min, s.median, s.max, s.n) == (1.0, 3.0, 5.0, 5)
    assert s.p25 <= s.median <= s.p75 <= s.p99 <= s.max
    with pytest.raises(ValueError, match="empty"):
        Spread.of([])


def test_modes_split_a_bimodal_run_and_keep_a_unimodal_one() -> None:
    rng = np.random.default_rng(3)
    fast = rng.normal(6_000, 300, 700)
    slow = rng.normal(60_000, 3_000, 300)
    found = modes(np.concatenate([slow, fast]))
    assert [m.label for m in found] == ["fast", "slow"]
    assert found[0].fraction == pytest.approx(0.7) and found[1].fraction == pytest.approx(0.3)
    assert found[0].spread.median < 7_000 < 50_000 < found[1].spread.median
    one = modes(rng.normal(6_000, 300, 1000))
    assert [m.label for m in one] == ["all"]
    assert modes([]) == []


def test_split_by_placement_uses_reported_cpus() -> None:
    samples = np.array([1.0, 10.0, 2.0, 20.0])
    found = split_by_placement(samples, np.array([0, 0, 1, 1]), np.array([0, 1, 1, 0]))
    assert [(m.label, m.fraction, m.spread.median) for m in found] == [
        ("same CPU", 0.5, 1.5),
        ("different CPUs", 0.5, 15.0),
    ]


# --- page faults, copy-on-write --------------------------------------------------------------


def test_fresh_pages_fault_once_each_and_populate_removes_them(report: ob.host.HostReport) -> None:
    by = {p.prefault: p for p in report.page_faults}
    none, pop = by["none"], by["populate"]
    assert none.pages == none.bytes // report.info.page_size
    assert 0 < none.touch_faults <= none.pages + 8
    assert none.ns_per_fault is not None and none.ns_per_fault > 0
    assert pop.touch_faults < none.touch_faults
    assert all(p.ns_per_page.median > 0 for p in report.page_faults)
    if "hugepage" in by:
        assert by["hugepage"].touch_faults <= none.pages + 8


def test_cow_faults_grow_with_pages_written(report: ob.host.HostReport) -> None:
    assert [c.pages_written for c in report.cow] == [0, 64, 1024]
    for c in report.cow:
        assert c.pages_written <= c.child_minor_faults <= c.pages_written + 16, c
    assert report.cow[-1].child_minor_faults > report.cow[0].child_minor_faults


def test_fault_probes_reject_bad_input() -> None:
    with pytest.raises(ValueError, match="prefault"):
        ob.host.page_faults(1 << 20, "eager")
    with pytest.raises(ValueError, match="nbytes"):
        ob.host.page_faults(0)
    with pytest.raises(ValueError, match="nbytes"):
        _native.host_page_touch(100)
    with pytest.raises(ValueError, match="pages_written"):
        ob.host.cow_faults(100, buffer_bytes=4096 * 10)
    with pytest.raises(ValueError, match="pages_written"):
        ob.host.cow_faults(-1)


# --- memory latency --------------------------------------------------------------------------


def test_memory_latency_points_are_positive(report: ob.host.HostReport) -> None:
    pts = [p for p in report.memory_latency if p.pages == "4 KiB"]
    assert [p.bytes for p in pts] == sorted(p.bytes for p in pts)
    assert pts[0].bytes == 16 << 10 and pts[0].fits == "L1d"
    assert all(p.ns is not None and p.ns.min > 0 for p in report.memory_latency)
    curves = report.figures()["memory_latency"]["curves"]
    assert curves[0]["pages"] == "4 KiB"
    assert len(curves[0]["bytes"]) == len(curves[0]["median_ns"]) == len(pts)
    huge = [p for p in report.memory_latency if p.pages == "huge"]
    assert not huge or [p.bytes for p in huge] == [p.bytes for p in pts]


@settings(max_examples=60, deadline=None)
@given(lines=st.integers(2, 3000), seed=st.integers(0, 2**64 - 1))
def test_chase_cycle_native_equals_reference(lines: int, seed: int) -> None:
    native = ob.host.chase_cycle(lines, seed)
    ref = ob.host.chase_cycle(lines, seed, engine="reference")
    assert native.dtype == ref.dtype == np.uint32
    np.testing.assert_array_equal(native, ref)
    # one cycle through every line
    p, seen = 0, set()
    for _ in range(lines):
        seen.add(p)
        p = int(native[p])
    assert p == 0 and len(seen) == lines


def test_splitmix64_golden() -> None:
    r = reference.SplitMix64(0)
    assert r.next_u64() == 0xE220A8397B1DCDAF
    assert r.next_u64() == 0x6E789E6AA1B965F4


def test_reference_memory_latency_runs() -> None:
    pts = ob.host.memory_latency([16 << 10], loads=2000, repeats=2, engine="reference")
    assert pts[0].engine == "reference" and pts[0].ns is not None and pts[0].ns.median > 0


def test_memory_latency_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="engine"):
        ob.host.memory_latency([1 << 14], engine="fast")
    with pytest.raises(ValueError, match="sizes=64"):
        ob.host.memory_latency([64])
    with pytest.raises(ValueError, match="loads"):
        ob.host.memory_latency([1 << 14], loads=0)
    with pytest.raises(ValueError, match="huge_pages"):
        ob.host.memory_latency([1 << 14], engine="reference", huge_pages=True)
    with pytest.raises(TypeError, match="huge_pages"):
        ob.host.memory_latency([1 << 14], huge_pages=1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="lines"):
        ob.host.chase_cycle(1)
    with pytest.raises(ValueError, match="seed"):
        ob.host.chase_cycle(10, 2**64)
    with pytest.raises(ValueError, match="loads"):
        _native.host_chase(1 << 14, 0)


def test_too_large_working_set_is_not_available() -> None:
    facts = ob.host.info()
    import dataclasses

    small = dataclasses.replace(facts, memory_available=1 << 20)
    pts = ob.host.memory_latency([16 << 10, 1 << 20], loads=100, repeats=1, facts=small)
    assert pts[0].ns is not None and pts[1].ns is None and "memory" in pts[1].reason


# --- report, files, lecture ------------------------------------------------------------------


def test_report_to_dict_is_json(report: ob.host.HostReport) -> None:
    d = json.loads(json.dumps(report.to_dict()))
    assert d["quick"] is True
    assert len(d["load_average"]) == 2
    assert {"info", "isolation", "gil", "round_trips", "page_faults", "cow", "memory_latency", "figures"} <= set(d)
    bars = d["figures"]["round_trips"]
    assert bars and all(b["median_ns"] > 0 for b in bars)


def test_write_creates_json_markdown_and_figures(report: ob.host.HostReport, tmp_path: os.PathLike[str]) -> None:
    out = os.path.join(tmp_path, "host")
    paths = ob.host.write(report, out)
    assert json.loads(paths["json"].read_text())["quick"] is True
    md = paths["markdown"].read_text()
    assert "Demo 3" in md and "round_trips.png" in md
    for key in ("round_trips_png", "memory_latency_png"):
        assert paths[key].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not [f for f in os.listdir(out) if f.endswith(".tmp")]


def test_lecture_tables(report: ob.host.HostReport, monkeypatch: pytest.MonkeyPatch) -> None:
    from osbench.host import lecture
    from osbench.host import report as report_module

    monkeypatch.setattr(report_module, "measure", lambda quick=False: report)
    tables = lecture.tables(quick=True)
    assert [t.key for t in tables[:3]] == ["isolation", "gil", "round_trips"]
    keys = {t.key for t in tables}
    assert {"host", "pingpong_checks", "page_faults", "cow", "memory_latency"} <= keys
    for t in tables:
        assert t.rows and all(len(r) == len(t.columns) for r in t.rows)
        assert t.to_text() and t.to_markdown()


@pytest.mark.parametrize("starter", ["process-pipe", "process-socketpair"])
def test_a_finished_echo_child_is_an_error_not_a_hang(starter: str) -> None:
    ping, finish = roundtrip._STARTERS[starter](1, None)  # the child echoes once, then leaves
    try:
        ping()
        # end of file, or the socket's reset: an error either way
        with pytest.raises((RuntimeError, ConnectionError)):
            ping()
    finally:
        finish()


def test_current_cpu_is_an_allowed_cpu() -> None:
    assert _native.host_current_cpu() in CPUS


def test_refused_fault_probes_become_notes(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import osbench.host.report as report_module

    def refuse(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise OSError("mmap failed: Cannot allocate memory")

    monkeypatch.setattr(report_module, "page_faults", refuse)
    monkeypatch.setattr(report_module, "cow_faults", refuse)
    r = report_module.measure(quick=True)
    assert r.page_faults == () and r.cow == ()
    assert any("page faults (none): not available" in n for n in r.notes)
    assert any("copy-on-write" in n and "not available" in n for n in r.notes)
    assert r.tables() and r.to_dict()["notes"]  # the report still renders
