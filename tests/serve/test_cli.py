"""``osbench serve simulate`` and ``osbench serve sweep``: the same numbers as the Python API, every
engine option a flag, the per-request CSV, one-line errors, Ctrl-C, resumable sweeps."""

from __future__ import annotations

import concurrent.futures as cf
import csv
import dataclasses
import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest
from interrupts import interrupted

import osbench as ob
from osbench.cli.serve import simulate as cli
from osbench.serve import source
from osbench.serve import sweep as serve_sweep


def osbench(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "osbench", *args], capture_output=True, text=True, cwd=cwd, timeout=600
    )


def run_json(*args: str) -> dict[str, Any]:
    out = osbench("serve", "simulate", *args, "--json")
    assert out.returncode == 0, out.stderr
    data: dict[str, Any] = json.loads(out.stdout)
    return data


def summary_of(result: ob.serve.ServeResult, **slo: float) -> dict[str, Any]:
    """The summary as the command line's JSON has it (NaN and all)."""
    data: dict[str, Any] = json.loads(json.dumps(result.summary(**slo).to_dict()))
    return data


def test_generated_requests_give_the_api_numbers() -> None:
    data = run_json(
        "--poisson", "300,8", "--prompt-len", "lognormal:800,1.0,4000", "--output-len", "200", "--seed", "5"
    )
    reqs = ob.serve.Requests.poisson(300, 8.0, prompt_len=ob.serve.Lognormal(800, 1.0, 4000), output_len=200, seed=5)
    assert data["summary"] == summary_of(ob.serve.simulate(reqs, model=ob.serve.models.DEFAULT_MODEL, gpu="h100"))
    assert data["requests"] == json.loads(json.dumps(reqs.to_dict())) and data["left_out"] == 0
    assert run_json("--poisson", "300,8", "--seed", "6")["summary"] != data["summary"]  # the seed reaches it


def test_the_measured_clock_is_a_flag(measured_tables: None) -> None:
    # --step-time measured serves on the GPU's kernel tables, as simulate(step_time="measured")
    # and as the StepTime itself; the summary names the clock
    data = run_json("--poisson", "200,8", "--seed", "4", "--model", "gpt-oss-120b", "--step-time", "measured")
    reqs = ob.serve.Requests.poisson(200, 8.0, seed=4)
    named = ob.serve.simulate(reqs, model="gpt-oss-120b", gpu="h100", step_time="measured")
    built = ob.serve.simulate(
        reqs, model="gpt-oss-120b", gpu="h100", step_time=ob.serve.StepTime.measured("gpt-oss-120b", "h100")
    )
    assert data["summary"] == summary_of(named) == summary_of(built)
    assert data["summary"] != run_json("--poisson", "200,8", "--seed", "4", "--model", "gpt-oss-120b")["summary"]
    out = osbench("serve", "simulate", "--poisson", "20,8", "--step-time", "measured")
    assert out.returncode == 0 and "native engine, measured step time:" in out.stdout, out.stderr
    out = osbench("serve", "simulate", "--poisson", "20,8", "--step-time", "measured", "--gpu", "l40s")
    assert out.returncode == 2 and "gpu='l40s' is not accepted for the measured step time" in out.stderr
    assert "h100, h100-sxm, h200, rtx-pro-6000" in out.stderr and out.stderr.count("\n") == 1


def test_closed_loop_clients_give_the_api_numbers() -> None:
    args = ("--poisson", "120,40", "--seed", "3", "--concurrency", "6", "--turnaround", "0.002", "--warmup", "12")
    data = run_json(*args, "--replicas", "2")
    reqs = ob.serve.Requests.poisson(120, 40.0, seed=3)
    clients = ob.serve.Clients(6, 0.002, warmup=12)
    expected = ob.serve.simulate_cluster(
        reqs, replicas=2, router="round-robin", model=ob.serve.models.DEFAULT_MODEL, gpu="h100", concurrency=clients
    )
    assert data["summary"] == summary_of(expected.merged)
    assert data["clients"] == {"count": 6, "turnaround": 0.002, "warmup": 12}
    assert run_json("--poisson", "120,40", "--seed", "3", "--replicas", "2")["summary"] != data["summary"]


def test_conversations_and_system_prompts_reach_the_generator() -> None:
    args = ("--conversations", "40,1", "--turns", "2,4", "--think-time", "5", "--system-prompts", "3,300,0.5")
    data = run_json(*args, "--engine", "reference", "--model", "qwen2.5-7b", "--gpu", "l40s")
    reqs = ob.serve.Requests.conversations(
        40, 1.0, turns=(2, 4), think_time=5.0, system_prompts=ob.serve.SystemPrompts(3, 300, 0.5), seed=1
    )
    assert data["summary"] == summary_of(ob.serve.simulate(reqs, model="qwen2.5-7b", gpu="l40s"))
    assert data["summary"]["prefix_hit_rate"] > 0.3  # turns share their history


def test_every_engine_option_is_a_flag_and_reaches_the_engine() -> None:
    text = " ".join(osbench("serve", "simulate", "--help").stdout.split())
    for f in dataclasses.fields(ob.serve.EngineConfig):
        assert "--" + f.name.replace("_", "-") in text, f.name
    for name in [*ob.serve.MODELS, *ob.serve.GPUS, *ob.serve.config.POLICIES]:
        assert name in text
    data = run_json(
        "--poisson", "200,5", "--block-size", "32", "--num-blocks", "4000", "--max-num-batched-tokens", "1024",
        "--max-num-seqs", "64", "--max-model-len", "4096", "--long-prefill-token-threshold", "256",
        "--no-enable-prefix-caching", "--policy", "priority", "--watermark", "0.01",
        "--no-scheduler-reserve-full-isl", "--aging", "0.5", "--mlfq-levels", "3", "--mlfq-quantum", "32",
        "--mlfq-growth", "4", "--mlfq-boost", "100", "--prediction", "noisy", "--prediction-sigma", "0.5",
        "--prediction-bucket", "64", "--prediction-seed", "3", "--preemption", "swap", "--swap-space", "2",
        "--link", "pcie4", "--swap-bandwidth", "2e10", "--kv-block-bytes", "65536",
        "--kv-tiers", "0.5:pcie4:sieve", "--kv-tiers", "2:nvme-gen5:gdsf", "--block-flops", "1e9",
        "--block-flops-step", "1e6",
    )  # fmt: skip
    media = ob.serve.KV_TIER_MEDIA
    assert data["config"] == {
        "num_blocks": 4000,
        "block_size": 32,
        "max_num_batched_tokens": 1024,
        "max_num_seqs": 64,
        "max_model_len": 4096,
        "enable_chunked_prefill": True,
        "long_prefill_token_threshold": 256,
        "enable_prefix_caching": False,
        "policy": "priority",
        "watermark": 0.01,
        "scheduler_reserve_full_isl": False,
        "aging": 0.5,
        "mlfq_levels": 3,
        "mlfq_quantum": 32,
        "mlfq_growth": 4,
        "mlfq_boost": 100,
        "prediction": "noisy",
        "prediction_sigma": 0.5,
        "prediction_bucket": 64,
        "prediction_seed": 3,
        "preemption": "swap",
        "swap_space": 2.0,
        "link": "pcie4",
        "swap_bandwidth": 2e10,
        "kv_block_bytes": 65536,
        "kv_tiers": [
            {"gib": 0.5, "medium": "pcie4", "policy": "sieve", "bandwidth": media["pcie4"].bandwidth,
             "latency": media["pcie4"].latency, "costs": False},
            {"gib": 2.0, "medium": "nvme-gen5", "policy": "gdsf", "bandwidth": media["nvme-gen5"].bandwidth,
             "latency": media["nvme-gen5"].latency, "costs": True},
        ],
        "block_flops": 1e9,
        "block_flops_step": 1e6,
    }  # fmt: skip
    # Left out, the budgets are vLLM's for the GPU and max_model_len the model's, as simulate() has them.
    defaults = run_json("--poisson", "20,5", "--gpu", "l40s", "--model", "qwen2.5-7b")["config"]
    assert (defaults["max_num_batched_tokens"], defaults["max_num_seqs"]) == (2048, 256)
    assert defaults["max_model_len"] == ob.serve.MODELS["qwen2.5-7b"].max_model_len
    assert defaults["kv_block_bytes"] == 16 * ob.serve.MODELS["qwen2.5-7b"].kv_bytes_per_token()


def test_help_text_comes_from_the_dataclass() -> None:
    docs = cli._field_docs(ob.serve.EngineConfig)
    assert set(docs) == {f.name for f in dataclasses.fields(ob.serve.EngineConfig)}
    assert cli._field_help(docs["block_size"]) == "Tokens per KV block"
    assert cli._field_help(docs["max_num_seqs"]) == "Requests running at once"


def test_a_trace_limited_fitted_and_rescaled(dataset: Callable[[str], Path], tmp_path: Path) -> None:
    dataset("mooncake-conversation")
    out = tmp_path / "requests.csv"
    args = ("--trace", "mooncake-conversation", "--model", "llama-3-8b", "--limit", "400", "--fit", "--rate", "2")
    data = run_json(*args, "--no-enable-prefix-caching", "--out", str(out))
    reqs_all = ob.serve.Requests.read("mooncake-conversation")[:400]
    fits = (reqs_all.prompt_len + reqs_all.output_len) <= 8192
    reqs = reqs_all[fits].at_rate(2.0)
    result = ob.serve.simulate(reqs, model="llama-3-8b", gpu="h100", enable_prefix_caching=False)
    assert data["left_out"] == int((~fits).sum()) > 0
    lengths = reqs_all.prompt_len.astype(np.int64) + reqs_all.output_len
    assert data["left_out_tokens"] == int(lengths[~fits].sum())
    assert data["summary"] == summary_of(result)
    with open(out, newline="") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == list(cli.REQUEST_CSV_COLUMNS) and len(rows) == len(reqs)
    for column in ("arrival", "first_token", "finish", "ttft", "e2e"):
        assert [float(r[column]) for r in rows] == getattr(result, column).tolist(), column  # exact round trip
    assert [int(r["preemptions"]) for r in rows] == result.preemptions.tolist()
    tpot = [float(r["tpot"]) if r["tpot"] else np.nan for r in rows]
    np.testing.assert_array_equal(tpot, result.tpot)
    assert [p.name for p in tmp_path.iterdir()] == ["requests.csv"]  # written atomically, nothing left beside
    # Without --fit the long requests are refused, and the message says what to do.
    refused = osbench(
        "serve", "simulate", "--trace", "mooncake-conversation", "--model", "llama-3-8b", "--limit", "400"
    )
    assert refused.returncode == 2 and "--fit" in refused.stderr and refused.stderr.count("\n") == 1


def test_the_summary_is_printed_readably() -> None:
    out = osbench("serve", "simulate", "--gamma", "400,6,2", "--slo-ttft", "0.5", "--slo-tpot", "0.05")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("gamma(n=400, rate=6, cv=2): 400 requests over")
    for label in (
        "throughput",
        "TTFT",
        "TPOT",
        "end to end",
        "queueing",
        "goodput",
        "KV cache",
        "prefix cache",
        "steps",
    ):
        assert any(line.strip().startswith(label) for line in lines), label
    assert "meet TTFT <= 500 ms and TPOT <= 50 ms" in out.stdout
    assert not any(len(word.rstrip(",.)")) > 9 and word[:1].isdigit() for line in lines[2:] for word in line.split())


@pytest.mark.parametrize(
    "args, message",
    [
        (["--poisson", "10,1", "--block-size", "0"], "block_size=0 is not accepted"),
        (["--poisson", "10,1", "--model", "gpt-5"], "model='gpt-5' is not accepted: use one of llama-3-8b"),
        (["--poisson", "10,1", "--gpu", "tpu"], "gpu='tpu' is not accepted"),
        (["--poisson", "10,a"], "poisson='10,a' is not accepted"),
        (["--poisson", "10,1", "--prompt-len", "zipf:3"], "prompt_len='zipf:3' is not accepted: give TOKENS"),
        (["--poisson", "10,1", "--turns", "3"], "turns='3' is not accepted with poisson"),
        (["--trace", "azure-conv-2023", "--prompt-len", "100"], "prompt_len='100' is not accepted with a trace"),
        (["--poisson", "10,1", "--format", "azure"], "format='azure' is not accepted with poisson"),
        (["--trace", "/no/such/log.csv"], "not found"),
        (["--poisson", "10,1", "--tp", "3"], "tp=3 is not accepted"),
        (["--poisson", "10,1", "--slo-ttft", "-1"], "slo_ttft=-1.0 is not accepted"),
        (["--poisson", "10,1", "--rate", "0"], "qps=0.0 is not accepted"),
        (["--poisson", "10,1", "--max-model-len", "100"], "exceeds max_model_len=100"),
        (["--poisson", "10,1", "--warmup", "3"], "--warmup is not accepted without --concurrency"),
        (["--poisson", "10,1", "--concurrency", "2", "--turnaround", "-1"], "turnaround=-1.0 is not accepted"),
    ],
)
def test_errors_are_one_line(args: list[str], message: str) -> None:
    out = osbench("serve", "simulate", *args)
    assert out.returncode == 2, out.stderr
    assert message in out.stderr and out.stderr.count("\n") == 1 and "Traceback" not in out.stderr


def test_ctrl_c_exits_130() -> None:
    done = interrupted(
        "sys.exit(cli.main(['serve', 'simulate', '--poisson', '3000000,200', '--prompt-len', 'lognormal:512,1,2000', "
        "'--output-len', 'lognormal:512,1,2000', '--no-enable-prefix-caching', '--num-blocks', '4000']))",
        setup="from osbench import cli",
        settle=1.5,  # into the run (about half a minute of work)
    )
    assert done.returncode == 130, done.stderr
    assert "interrupted" in done.stderr and "Traceback" not in done.stderr


def test_ctrl_c_while_generating_exits_130() -> None:
    done = interrupted(
        # 10M conversations of one-token messages: seconds of generating before the run
        "sys.exit(cli.main(['serve', 'simulate', '--conversations', '10000000,100', '--prompt-len', '1', "
        "'--output-len', '1', '--no-enable-prefix-caching']))",
        setup="from osbench import cli",
        settle=0.5,
    )
    assert done.returncode == 130, done.stderr
    assert done.stderr == "osbench: interrupted\n" and done.stdout == ""


@pytest.mark.parametrize("command", [["serve", "simulate"], ["serve", "sweep"]])
def test_help_has_an_example(command: list[str]) -> None:
    out = osbench(*command, "--help")
    assert out.returncode == 0 and "example: osbench serve" in out.stdout and "--json" in out.stdout


def test_source_fit_uses_the_max_model_len_simulate_runs_with() -> None:
    reqs = ob.serve.Requests.poisson(400, 5.0, prompt_len=ob.serve.Lognormal(3000, 1.5), output_len=500, seed=2)
    for options in (
        {"model": "llama-3-8b", "gpu": "h100"},
        {"model": "qwen2.5-7b", "gpu": "h100"},
        {"model": "llama-3-8b", "gpu": "h100", "max_model_len": 5000},
    ):
        limit = source.max_model_len(options)
        kept, left_out = source.fit(reqs, limit)
        lengths = reqs.prompt_len.astype(np.int64) + reqs.output_len
        assert left_out.requests == int((lengths > limit).sum()) > 0
        assert left_out.tokens == int(lengths[lengths > limit].sum()) and left_out.total_tokens == int(lengths.sum())
        assert left_out.token_share == left_out.tokens / left_out.total_tokens
        assert ob.serve.simulate(kept, **options).config.max_model_len == limit  # every request kept fits
        with pytest.raises(ValueError, match="exceeds max_model_len"):
            ob.serve.simulate(reqs, **options)


# ---------------------------------------------------------------------------- sweeps


@pytest.fixture(scope="module")
def spec() -> dict[str, Any]:
    return {
        "requests": {"poisson": [300, 6.0], "prompt_len": "lognormal:1024,1.0,6000", "output_len": 200, "seed": 3},
        "rates": [4, 12],
        "slo_ttft": 1.0,
        "slo_tpot": 0.05,
        "base": {"model": "llama-3-8b", "gpu": "l40s"},
        "configs": {"default": {}, "small-budget": {"max_num_batched_tokens": 512, "max_num_seqs": 128}},
    }


def same(a: Any, b: Any) -> bool:
    """Equal as JSON text: NaN (an empty length class's slowdown) equals NaN."""
    return json.dumps(a) == json.dumps(b)


def direct(spec: dict[str, Any]) -> list[dict[str, Any]]:
    """Each cell served by simulate() itself, configuration by configuration, rate by rate."""
    d = spec["requests"]
    reqs = ob.serve.Requests.poisson(
        d["poisson"][0], d["poisson"][1], prompt_len=ob.serve.Lognormal(1024, 1.0, 6000), output_len=200, seed=3
    )
    out = []
    for options in spec["configs"].values():
        for qps in spec["rates"]:
            r = ob.serve.simulate(reqs.at_rate(qps), **spec["base"], **options)
            out.append(summary_of(r, slo_ttft=spec["slo_ttft"], slo_tpot=spec["slo_tpot"]))
    return out


class CountingPool(cf.ThreadPoolExecutor):
    def __init__(self) -> None:
        super().__init__(max_workers=2)
        self.submitted = 0

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> cf.Future:  # type: ignore[override]
        self.submitted += 1
        return super().submit(fn, *args, **kwargs)


def test_sweep_cells_equal_direct_runs_and_resume(spec: dict[str, Any], tmp_path: Path) -> None:
    seen: list[tuple[int, int]] = []
    results = serve_sweep.run(spec, tmp_path / "r.jsonl", workers=2, progress=lambda d, t: seen.append((d, t)))
    assert same([r["summary"] for r in results], direct(spec))
    assert [(r["config"], r["rate"]) for r in results] == [
        ("default", 4.0),
        ("default", 12.0),
        ("small-budget", 4.0),
        ("small-budget", 12.0),
    ]
    assert seen[0] == (0, 4) and seen[-1] == (4, 4)
    lines = (tmp_path / "r.jsonl").read_text().splitlines()
    partial = tmp_path / "partial.jsonl"
    partial.write_text(lines[0] + "\n" + lines[1][:40])  # killed mid-write
    pool = CountingPool()
    assert same(serve_sweep.run(spec, partial, executor=pool), results) and pool.submitted == 3
    pool = CountingPool()
    assert same(serve_sweep.run(spec, partial, executor=pool), results) and pool.submitted == 0
    pytest.importorskip("matplotlib")
    serve_sweep.figure(results, tmp_path / "r.png")
    assert (tmp_path / "r.png").read_bytes()[:4] == b"\x89PNG"


def test_a_sweep_over_clocks(spec: dict[str, Any], tmp_path: Path, measured_tables: None) -> None:
    clocks = {**spec, "base": {"model": "llama-3-8b", "gpu": "h100"}}
    clocks["configs"] = {"roofline": {}, "measured": {"step_time": "measured"}}
    results = serve_sweep.run(clocks, tmp_path / "r.jsonl", workers=2)
    assert same([r["summary"] for r in results], direct(clocks))
    assert results[0]["summary"] != results[2]["summary"]  # the clock reaches the cells


def test_a_sweep_over_semantics(spec: dict[str, Any], tmp_path: Path) -> None:
    """One configuration per semantics: each cell is simulate() under its semantics, and an
    option of the other semantics is refused naming it."""
    both = dict(spec, configs={"vllm": {}, "sglang": {"semantics": "sglang", "schedule_policy": "lpm"}})
    results = serve_sweep.run(both, tmp_path / "r.jsonl", executor=cf.ThreadPoolExecutor(max_workers=2))
    assert same([r["summary"] for r in results], direct(both))
    assert [r["config"] for r in results] == ["vllm", "vllm", "sglang", "sglang"]
    assert results[0]["summary"] != results[2]["summary"]  # two schedulers, two runs
    wrong = dict(spec, configs={"x": {"schedule_policy": "lpm"}})
    with pytest.raises(TypeError, match="schedule_policy='lpm' is not accepted"):
        serve_sweep.run(wrong, tmp_path / "w.jsonl", executor=cf.ThreadPoolExecutor(max_workers=1))


def test_sweep_on_dask(spec: dict[str, Any], tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    small = dict(spec, configs={"default": {}})
    results = serve_sweep.run(small, tmp_path / "d.jsonl", executor="dask", workers=2)
    assert same([r["summary"] for r in results], direct(small))


def test_sweep_command_runs_and_resumes(spec: dict[str, Any], tmp_path: Path) -> None:
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    out = tmp_path / "results.jsonl"
    first = osbench("serve", "sweep", str(tmp_path / "spec.json"), "--out", str(out), "--workers", "1", "--json")
    assert first.returncode == 0, first.stderr
    assert same([r["summary"] for r in json.loads(first.stdout)], direct(spec))
    again = osbench("serve", "sweep", str(tmp_path / "spec.json"), "--out", str(out), "--json")
    assert same(json.loads(again.stdout), json.loads(first.stdout)) and len(out.read_text().splitlines()) == 4
    assert out.with_suffix(".png").exists()
    (tmp_path / "bad.toml").write_text('requests = "azure-conv-2023"\nrates = [0]\n')
    bad = osbench("serve", "sweep", str(tmp_path / "bad.toml"), "--out", str(tmp_path / "x.jsonl"))
    assert bad.returncode == 2 and "rates=0.0 is not accepted" in bad.stderr and bad.stderr.count("\n") == 1


def test_the_example_spec_is_valid() -> None:
    checked = serve_sweep.load_spec(Path(__file__).resolve().parents[2] / "examples" / "serve-sweep.toml")
    assert len(serve_sweep.cells(checked)) == len(checked["rates"]) * len(checked["configs"]) > 1


@pytest.mark.parametrize(
    "change, message",
    [
        ({"requests": None}, "needs requests"),
        ({"rates": []}, "rates=[] is not accepted"),
        ({"rates": [-2]}, "rates=-2.0 is not accepted"),
        ({"configs": {"x": {"block_sz": 8}}}, "configs.x.block_sz=8 is not accepted"),
        ({"base": {"engine": "reference"}}, "base.engine='reference' is not accepted"),
        ({"slo_ttft": 0}, "slo_ttft=0.0 is not accepted"),
        ({"engine": "fast"}, "engine='fast' is not accepted"),
        ({"budget": 3}, "budget=3 is not accepted: a serving sweep spec has"),
        ({"fit": "yes"}, "fit='yes' is not accepted"),
        ({"requests": ["a.csv"]}, "requests=['a.csv'] is not accepted"),
        ({"requests": {"poisson": [10, 1], "rates": [3]}}, "requests.rates=[3] is not accepted"),
    ],
)
def test_bad_sweep_specs(spec: dict[str, Any], change: dict[str, Any], message: str) -> None:
    with pytest.raises((ValueError, TypeError), match=message.replace("[", r"\[").replace("]", r"\]")):
        serve_sweep.load_spec({**spec, **change})


def test_the_summary_says_what_the_kv_tiers_did() -> None:
    """With KV tiers the summary has a line of them, each tier's size, medium, policy, blocks hit
    and stored, then the tiers' hit rate and load time: the API's numbers; without, none."""
    args = ("--conversations", "60,1", "--turns", "2,6", "--think-time", "5", "--num-blocks", "300")
    tiers = ("--kv-tiers", "0.5:pcie5:lru", "--kv-tiers", "4:nvme-gen4:s3fifo")
    out = osbench("serve", "simulate", *args, *tiers)
    assert out.returncode == 0, out.stderr
    reqs = ob.serve.Requests.conversations(60, 1.0, turns=(2, 6), think_time=5.0, seed=1)
    s = ob.serve.simulate(
        reqs,
        model=ob.serve.models.DEFAULT_MODEL,
        gpu="h100",
        num_blocks=300,
        kv_tiers=("0.5:pcie5:lru", "4:nvme-gen4:s3fifo"),
    ).summary()
    assert all(t.loaded_blocks > 0 for t in s.tiers) and s.tier_hit_rate > 0
    line = next(x for x in out.stdout.splitlines() if x.startswith("  KV tiers"))
    fast, slow = s.tiers
    assert line == (
        f"  KV tiers     0.5 GiB pcie5 lru ({ob._format.number(fast.capacity_blocks)} blocks): "
        f"{ob._format.number(fast.loaded_blocks)} blocks hit, {ob._format.number(fast.stored_blocks)} stored "
        f"({ob._format.number(fast.inserted_blocks)} new); 4 GiB nvme-gen4 s3fifo "
        f"({ob._format.number(slow.capacity_blocks)} blocks): {ob._format.number(slow.loaded_blocks)} blocks hit, "
        f"{ob._format.number(slow.stored_blocks)} stored ({ob._format.number(slow.inserted_blocks)} new); "
        f"{ob._format.percent(s.tier_hit_rate)} of prompt tokens from the tiers, {ob._format.duration(s.tier_time)} "
        "of loads"
    )
    plain = osbench("serve", "simulate", *args)
    assert plain.returncode == 0 and "KV tiers" not in plain.stdout
