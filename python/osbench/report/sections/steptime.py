"""Section 07: time you can trust. The serving engine's step time against measured vLLM runs:
AIConfigurator's silicon_sample.csv replayed with closed-loop clients (osbench.serve.validate),
predicted against measured TTFT and TPOT, by GPU, model, vLLM version and step-time model; and
one kernel or one step against Vidur's and splitwise-sim's measurements (osbench.serve.crosscheck)."""

from __future__ import annotations

import dataclasses
from typing import Any, Optional

from osbench import datasets
from osbench._files import figure_png
from osbench._format import duration, number, percent
from osbench._table import Table
from osbench.report.model import Figure, Progress, Section
from osbench.report.sections._shared import pyplot
from osbench.serve import crosscheck, kernels, validate

KEY = "07-steptime"
ORDER = 65

QUICK_POINTS = 4
"""Points replayed by ``--quick``, without the fitted model: of each dense model and GPU, its
point of the fewest output tokens in flight (the cheapest to replay)."""


def _points(points: list[validate.Point], quick: bool) -> list[validate.Point]:
    if not quick:
        return points
    cheapest: dict[tuple[str, str], validate.Point] = {}
    for p in sorted(points, key=lambda p: (p.concurrency * p.osl, p.id)):
        if not p.moe and not validate.in_fit_split(p):
            cheapest.setdefault((p.model, p.gpu), p)
    return list(cheapest.values())[:QUICK_POINTS]


def build(quick: bool, seed: int, progress: Optional[Progress] = None) -> Section:
    section = Section(
        KEY,
        "07 Time you can trust: the step time against measured vLLM runs",
        "Every measured vLLM serving run of AIConfigurator's silicon_sample.csv with a model and GPU that have "
        "presets and kernel tables, replayed through the serving engine with clients at the measured concurrency "
        "sending what each source's benchmark sent (InferenceMAX's random lengths and cold start for its "
        "Llama-3.1-70B, gpt-oss-120b and MiniMax-M2.5 sweeps; for AIConfigurator's own runs, AIPerf's fixed lengths after a drained warm-up, every "
        "client sending at once, with a pool of repeated prompts where the throughput proves it): predicted "
        "against measured mean TTFT and TPOT. The roofline uses assumed "
        "utilisations; the measured model reads every kernel from the GPU's operator tables (vLLM 0.24.0) with "
        "BLIS's published host overhead; the fitted one fits that host overhead (per step and per request) on a named split "
        f"({' '.join(map(str, validate.FIT_SPLIT))}); every model is reported only on the other points. The runs were "
        "measured under older vLLM releases than the tables (0.12.0, and rows whose release is not stated).",
    )
    try:
        read = validate.survey()
        points = _points(read.points, quick)
        kinds = [k for k in validate.STEP_TIMES if not (quick and k == "fitted")]
        host = None
        if "fitted" in kinds:
            if progress:
                progress("07-steptime: fitting the host overhead on the named split")
            host = validate.fit_host([p for p in read.points if validate.in_fit_split(p)])
        predictions: list[validate.Prediction] = []
        for q in validate.replay(points, kinds, host):
            if progress and len(predictions) % len(kinds) == 0:
                progress(f"07-steptime: point {len(predictions) // len(kinds) + 1}/{len(points)}")
            predictions.append(q)
    except (datasets.DatasetError, kernels.TablesMissing) as exc:
        section.skipped.append(f"the validation needs the measured datasets and pyarrow: {exc}")
        return section
    summary = validate.summary(predictions)
    section.tables.append(
        Table(
            "Predicted against measured: MAPE by step-time model, GPU, model, vLLM version, benchmark and kind",
            ["step time", "GPU", "model", "vLLM", "benchmark", "kind", "points", "TTFT MAPE", "TPOT MAPE"],
            [
                [
                    r["step_time"],
                    r["gpu"],
                    r["model"],
                    r["version"],
                    r["benchmark"],
                    r["kind"],
                    r["points"],
                    r["ttft_mape"] / 100,
                    r["tpot_mape"] / 100,
                ]
                for r in summary
            ],
            note=_note(summary, host),
            key="07-1",
            units={"TTFT MAPE": "%", "TPOT MAPE": "%"},
            setup=f"{number(len(points))} measured points (rows not replayed: "
            + ", ".join(f"{number(n)} {reason}" for reason, n in read.left_out.items() if n)
            + f"); AIPerf points: {validate.AIPERF_CLIENTS.rounds} measured requests per client "
            f"after a drained warm-up; InferenceMAX points: {validate.INFERENCEMAX_CLIENTS.prompts_per_client} per client, all measured; "
            f"every client's turnaround {duration(validate.CLIENT_TURNAROUND)}",
        )
    )
    fitted = None if host is None else dataclasses.asdict(host)
    section.results = {"summary": summary, "host": fitted, "points": [q.to_dict() for q in predictions]}
    section.results["left_out"] = read.left_out
    section.figures.append(_scatter(predictions))
    if progress:
        progress("07-steptime: the cross-check against Vidur's and splitwise-sim's measurements")
    try:
        table = crosscheck.summary(crosscheck.vidur_checks() + crosscheck.splitwise_checks())
    except (datasets.DatasetError, kernels.TablesMissing) as exc:
        section.skipped.append(f"the cross-check needs Vidur's and splitwise-sim's datasets: {exc}")
        return section
    section.tables.append(
        Table(
            "Cross-check: one kernel or one step, predicted against measurements that are not AIConfigurator's",
            ["source", "GPU", "timed", "model", "points", "MAPE", "mean error"],
            [
                [r["source"], r["gpu"], r["what"], r["kind"], r["points"], r["mape"] / 100, r["mean_error"] / 100]
                for r in table
                if r["gpu"] != "all"
            ],
            note=_crosscheck_note(table),
            key="07-2",
            units={"MAPE": "%", "mean error": "%"},
            setup="Vidur's layer profiles (fp16, Sarathi-Serve, PyTorch profiler medians): the four linear layers by the GEMM "
            "tables and by the roofline of one GEMM; splitwise-sim's Llama2-70B steps (medians of the repeated rows): "
            "the roofline, the measured model, and the corrected roofline calibrated on every other point of each GPU "
            "and TP, reported on the others",
        )
    )
    section.results["crosscheck"] = table
    return section


def _crosscheck_note(table: list[dict[str, Any]]) -> str:
    row = {(r["source"], r["gpu"], r["what"], r["kind"]): r for r in table}
    tables = row.get(("vidur", "h100-sxm", "all", "tables"))
    measured = row.get(("splitwise", "h100-sxm", "decode", "measured"))
    calibrated = [row.get(("splitwise", "all", what, "calibrated")) for what in ("decode", "prefill")]
    if tables is None or measured is None or None in calibrated:
        return "The cross-check's datasets gave no comparable rows."
    decode, prefill = calibrated
    assert decode is not None and prefill is not None
    return (
        f"On the H100, the GEMM tables (vLLM 0.24.0's kernels) read {percent(-tables['mean_error'] / 100)} faster on "
        f"average than Vidur's profiles of the same shapes (MAPE {percent(tables['mape'] / 100)}). splitwise-sim's "
        f"2023 engine decoded {percent(-measured['mean_error'] / 100)} slower than the measured model on average: the "
        "tables describe a software stack, not only a GPU. Calibrated on half of its points (StepTime.fit), the "
        f"corrected roofline predicts the other half's decode steps to {percent(decode['mape'] / 100)} MAPE and "
        f"their prefills to {percent(prefill['mape'] / 100)}."
    )


def _note(summary: list[dict[str, Any]], host: Optional[validate.HostCost]) -> str:
    overall = {(r["step_time"], r["kind"]): r for r in summary if r["gpu"] == r["benchmark"] == "all"}
    measured = overall.get(("measured", "dense"))
    roofline = overall.get(("roofline", "dense"))
    if measured is None or roofline is None:
        return "No dense point could be replayed."
    text = (
        f"Over {number(measured['points'])} dense points (those of the fit split left out) the measured kernels give a TPOT MAPE of "
        f"{percent(measured['tpot_mape'] / 100)} and a TTFT MAPE of {percent(measured['ttft_mape'] / 100)}, against "
        f"{percent(roofline['tpot_mape'] / 100)} and {percent(roofline['ttft_mape'] / 100)} for the roofline."
    )
    fitted = overall.get(("fitted", "dense"))
    if fitted is not None and host is not None:
        text += (
            f" With the host overhead fitted on the named split ({duration(host.step)} per step and "
            f"{duration(host.request)} per request), "
            f"TPOT {percent(fitted['tpot_mape'] / 100)} and TTFT {percent(fitted['ttft_mape'] / 100)} on the "
            f"{number(fitted['points'])} dense points it was not fitted on."
        )
    return text


def _scatter(predictions: list[validate.Prediction]) -> Figure:
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.6))
    for ax, metric in zip(axes, ("tpot", "ttft")):
        for kind in validate.STEP_TIMES:
            mine = [q for q in predictions if q.step_time == kind and not validate.in_fit_split(q.point)]
            if mine:
                ax.scatter(
                    [getattr(q.point, metric) for q in mine],
                    [getattr(q, metric) for q in mine],
                    s=12,
                    alpha=0.7,
                    label=kind,
                )
        values = [getattr(q.point, metric) for q in predictions] + [getattr(q, metric) for q in predictions]
        low, high = min(values), max(values)
        ax.plot([low, high], [low, high], color="grey", linewidth=1)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(f"measured {metric.upper()} (s)")
        ax.set_ylabel(f"predicted {metric.upper()} (s)")
        ax.grid(True, alpha=0.3)
        ax.legend()
    fig.suptitle("Predicted against measured, one point per silicon_sample.csv run (the diagonal: exact)")
    return Figure(
        "steptime-validation",
        "Predicted against measured TPOT and TTFT: points on the diagonal are exact",
        figure_png(fig),
        f"{number(len({q.point.id for q in predictions}))} measured vLLM runs on H100 and H200",
    )
