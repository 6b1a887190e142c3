"""``osbench serve validate``: one measured point replayed from the command line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

from osbench.cli import main


def test_validate_one_point(dataset: Callable[[str], Path], capsys: object, tmp_path: Path) -> None:
    dataset("aic-silicon-sample")
    dataset("aic-h200_sxm-gemm")
    out = tmp_path / "points.csv"
    code = main(
        ["serve", "validate", "--model", "llama-3.1-70b-fp8", "--gpu", "h200", "--limit", "1", "--step-time", "measured",
         "--rounds", "1", "--json", "--out", str(out)]
    )  # fmt: skip
    assert code == 0
    data = json.loads(capsys.readouterr().out)  # type: ignore[attr-defined]
    (point,) = data["points"]
    assert point["model"] == "llama-3.1-70b-fp8" and point["predicted_tpot"] > 0 and point["step_time"] == "measured"
    assert {r["gpu"] for r in data["summary"]} == {"h200", "all"}
    assert out.read_text().splitlines()[0].startswith("id,model,gpu,tp") and data["host"] is None
    assert data["left_out"]["no clients"] == 3  # the rows not replayed, by reason


def test_validate_says_which_rows_it_leaves_out(dataset: Callable[[str], Path], capsys: object) -> None:
    dataset("aic-silicon-sample")
    code = main(
        ["serve", "validate", "--model", "qwen3-32b", "--limit", "1", "--step-time", "roofline", "--rounds", "1"]
    )
    assert code == 0
    first = capsys.readouterr().out.splitlines()[0]  # type: ignore[attr-defined]
    assert first.startswith("silicon_sample.csv: 367 points replayable; rows left out: ") and "3 no clients" in first


def test_validate_reports_the_fitted_host_work(dataset: Callable[[str], Path], capsys: object) -> None:
    dataset("aic-silicon-sample")
    dataset("aic-h100_sxm-gemm")
    code = main(
        ["serve", "validate", "--model", "qwen3-32b", "--limit", "1", "--step-time", "fitted", "--rounds", "1", "--json"]
    )  # fmt: skip
    assert code == 0
    data = json.loads(capsys.readouterr().out)  # type: ignore[attr-defined]
    assert set(data["host"]) == {"step", "request"} and data["host"]["step"] > 0 and data["host"]["request"] >= 0
    assert [p["step_time"] for p in data["points"]] == ["fitted"]


def test_validate_refuses_an_unknown_step_time(capsys: object) -> None:
    assert main(["serve", "validate", "--step-time", "cubic"]) == 2
    assert "--step-time cubic is not accepted" in capsys.readouterr().err  # type: ignore[attr-defined]


def test_validate_refuses_rounds_below_one(capsys: object) -> None:
    assert main(["serve", "validate", "--rounds", "0"]) == 2
    assert "rounds=0 is not accepted" in capsys.readouterr().err  # type: ignore[attr-defined]
