"""The cross-check of the step-time models against Vidur's layer profiles and splitwise-sim's
whole-model step times: the readers (against the data's README), the shapes and the rules, and
the table it reports."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Callable

import numpy as np
import pytest

from osbench.errors import ArgumentError
from osbench.serve import crosscheck
from osbench.serve.crosscheck import Check, SplitwisePoint
from osbench.serve.models import GPU
from osbench.serve.steptime import MBU, MFU

VIDUR = ("vidur-a100-meta-llama-3-8b-mlp", "vidur-a100-llama-2-7b-hf-mlp", "vidur-h100-llama-2-7b-hf-mlp")


@pytest.fixture(scope="module")
def vidur(dataset: Callable[[str], Path]) -> list[dict]:  # type: ignore[type-arg]
    for name in VIDUR:
        dataset(name)
    return crosscheck.vidur_profiles()


@pytest.fixture(scope="module")
def splitwise(dataset: Callable[[str], Path]) -> list[SplitwisePoint]:
    dataset("splitwise-perf-model")
    return crosscheck.splitwise_points()


def test_the_vidur_profiles_read_as_their_readme_counts_them(vidur: list[dict]) -> None:  # type: ignore[type-arg]
    counts: dict[tuple[str, str], int] = defaultdict(int)
    for r in vidur:
        counts[(r["gpu"], r["model"])] += 1
    assert counts == {
        ("a100", "Meta-Llama-3-8B"): 1824,
        ("a100", "Llama-2-7b-hf"): 1044,
        ("h100", "Llama-2-7b-hf"): 1044,
    }
    # The README's example: TP1, 512 tokens, the median of mlp_up_proj, in ms.
    up = {(r["gpu"], r["model"]): r["mlp_up_proj"] for r in vidur if r["tp"] == 1 and r["tokens"] == 512}
    assert up[("a100", "Llama-2-7b-hf")] * 1e3 == pytest.approx(0.402, abs=5e-4)
    assert up[("h100", "Llama-2-7b-hf")] * 1e3 == pytest.approx(0.134, abs=5e-4)
    assert up[("a100", "Meta-Llama-3-8B")] * 1e3 == pytest.approx(0.516, abs=5e-4)


def test_the_linear_layers_are_a_tensor_parallel_shard() -> None:
    llama2 = {"heads": 32, "kv_heads": 32, "hidden": 4096, "inter": 11008, "tp": 2}
    assert crosscheck.linear_shape(llama2, "attn_pre_proj") == ((16 + 2 * 16) * 128, 4096)
    assert crosscheck.linear_shape(llama2, "attn_post_proj") == (4096, 16 * 128)
    assert crosscheck.linear_shape(llama2, "mlp_up_proj") == (11008, 4096)
    assert crosscheck.linear_shape(llama2, "mlp_down_proj") == (4096, 5504)
    # Llama-3-8B's 8 KV heads on 8 GPUs: one each
    llama3 = {"heads": 32, "kv_heads": 8, "hidden": 4096, "inter": 14336, "tp": 8}
    assert crosscheck.linear_shape(llama3, "attn_pre_proj") == ((4 + 2 * 1) * 128, 4096)


def test_the_roofline_of_one_gemm_is_its_flops_or_its_bytes() -> None:
    h100 = GPU.preset("h100-sxm")
    big = crosscheck.gemm_roofline(h100, 4096, 8192, 8192)
    assert big == pytest.approx(2 * 4096 * 8192 * 8192 / (h100.peak_flops("bf16") * MFU))
    one = crosscheck.gemm_roofline(h100, 1, 8192, 8192)
    assert one == pytest.approx(2 * (8192 + 8192 * 8192 + 8192) / (h100.bandwidth * MBU))


def test_the_splitwise_points_are_the_medians_of_their_rows(dataset: Callable[[str], Path]) -> None:
    path = dataset("splitwise-perf-model")
    points = crosscheck.splitwise_points(str(path))
    assert len(points) == 12 * 19 and sum(p.repeats for p in points) == 1260
    with open(path, newline="") as f:
        rows = [
            r
            for r in csv.DictReader(f)
            if (r["model"], r["hardware"], r["tensor_parallel"]) == ("llama2-70b", "a100-80gb", "2")
        ]
    centre = [
        float(r["prompt_time"])
        for r in rows
        if (r["prompt_size"], r["batch_size"], r["token_size"]) == ("512", "1", "128")
    ]
    (p,) = [
        p
        for p in points
        if (p.model, p.hardware, p.tp, p.prompt, p.batch, p.output) == ("llama2-70b", "a100-80gb", 2, 512, 1, 128)
    ]
    assert p.repeats == len(centre) and p.prompt_time == pytest.approx(np.median(centre) * 1e-3)


def test_only_the_points_no_gpu_could_have_measured_are_left_out(splitwise: list[SplitwisePoint]) -> None:
    odd = [
        (p.hardware, p.tp, p.prompt, p.batch, p.output)
        for p in splitwise
        if p.model in crosscheck.SPLITWISE_MODELS
        and p.hardware in crosscheck.SPLITWISE_GPUS
        and crosscheck.impossible(p)
    ]
    # 64 prompts of 512 tokens through Llama2-70B on 2 GPUs in under a second: beyond their peak FLOP/s
    assert odd == [("a100-80gb", 2, 512, 64, 128), ("h100-80gb", 2, 512, 64, 128)]
    kept = crosscheck.checkable(splitwise)
    assert len(kept) == 6 * 19 - 2 and all(p.model == "llama2-70b" and p.hardware != "h100-80gb-pcap" for p in kept)


def test_a_decode_iteration_is_the_mean_over_the_output() -> None:
    p = SplitwisePoint(
        "llama2-70b", "h100-80gb", 2, prompt=512, batch=4, output=128, prompt_time=0.1, token_time=0.03, repeats=5
    )
    steps = crosscheck.decode_steps(p)
    assert len(steps) == crosscheck.DECODE_SAMPLES
    assert all(s.decode_seqs == 4 and s.prefill_seqs == 0 for s in steps)
    contexts = [s.context_tokens // 4 for s in steps]
    assert contexts == sorted(contexts) and 512 <= contexts[0] and contexts[-1] < 512 + 128
    assert crosscheck.prefill_step(p).prefill_chunks == ((512, 0),) * 4
    short = SplitwisePoint("llama2-70b", "h100-80gb", 2, 512, 1, 3, 0.1, 0.03, 5)
    assert len(crosscheck.decode_steps(short)) == 3


def test_the_calibrated_model_is_reported_only_off_its_half(
    splitwise: list[SplitwisePoint], dataset: Callable[[str], Path]
) -> None:
    dataset("aic-h100_sxm-gemm")
    checks = crosscheck.splitwise_checks(splitwise)
    kept = crosscheck.checkable(splitwise)
    groups: dict[tuple, list[SplitwisePoint]] = defaultdict(list)  # type: ignore[type-arg]
    for p in kept:
        groups[(p.hardware, p.tp)].append(p)
    fitted = {
        (crosscheck.SPLITWISE_GPUS[p.hardware], p.tp, p.prompt, p.batch, p.output)
        for g in groups.values()
        for i, p in enumerate(g)
        if crosscheck.in_calibration_half(i)
    }
    calibrated = {(c.gpu, c.tp, c.context, c.batch, c.output) for c in checks if c.kind == "calibrated"}
    assert calibrated and not calibrated & fitted
    # the roofline on every point kept, twice (prefill, decode); the measured model where there are tables
    assert sum(c.kind == "roofline" for c in checks) == 2 * len(kept)
    assert {c.gpu for c in checks if c.kind == "measured"} == {"h100-sxm"}
    assert all(c.measured > 0 and c.predicted > 0 for c in checks)


def test_an_unknown_model_kind_is_refused() -> None:
    with pytest.raises(ArgumentError, match="kinds="):
        crosscheck.splitwise_checks([], kinds=("fitted",))


def test_the_table_is_the_mean_absolute_error_of_each_group() -> None:
    def check(gpu: str, what: str, measured: float, predicted: float) -> Check:
        return Check("vidur", gpu, "m", 1, what, 8, 1, 0, 0, measured, "roofline", predicted)

    checks = [
        check("a100-80gb", "mlp_up_proj", 1.0, 1.1),
        check("a100-80gb", "mlp_down_proj", 1.0, 0.7),
        check("h100-sxm", "mlp_up_proj", 2.0, 2.0),
    ]
    rows = {(r["gpu"], r["what"]): r for r in crosscheck.summary(checks)}
    assert rows[("a100-80gb", "all")]["mape"] == pytest.approx(20.0)
    assert rows[("a100-80gb", "all")]["mean_error"] == pytest.approx(-10.0)
    assert rows[("all", "all")]["points"] == 3 and rows[("all", "all")]["mape"] == pytest.approx(40.0 / 3)
    assert rows[("h100-sxm", "mlp_up_proj")]["mape"] == 0.0


def test_the_command_writes_every_check(
    tmp_path: Path, vidur: list[dict], splitwise: list[SplitwisePoint], dataset: Callable[[str], Path]
) -> None:  # type: ignore[type-arg]
    dataset("aic-h100_sxm-gemm")
    out = tmp_path / "cc.csv"
    done = subprocess.run(
        [sys.executable, "-m", "osbench", "serve", "crosscheck", "--json", "--out", str(out)],
        capture_output=True,
        text=True,
        check=True,
    )
    table = json.loads(done.stdout)["summary"]
    assert {(r["source"], r["kind"]) for r in table} >= {("vidur", "tables"), ("splitwise", "calibrated")}
    with open(out, newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == sum(r["points"] for r in table if r["gpu"] == r["what"] == "all")
