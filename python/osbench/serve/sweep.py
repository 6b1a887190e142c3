"""Serving sweeps: request rate x configuration, on any executor, resumable.

A spec (a dict, or a TOML or JSON file) names the cells::

    requests = "azure-conv-2023"        # a trace (dataset name or path), or a table:
    # [requests]  poisson = [2000, 10.0]  prompt_len = "lognormal:1024,1.0,6000"  seed = 1  limit = 5000
    rates = [4, 8, 12, 16]              # requests/s: the arrivals rescaled to each (Requests.at_rate);
                                        # left out: the requests' own rate
    fit = true                          # leave out requests longer than max_model_len (counted)
    slo_ttft = 2.0                      # seconds; goodput counts the requests within both SLOs
    slo_tpot = 0.1
    engine = "native"

    [base]                              # simulate() options of every configuration
    model = "llama-3-8b"
    gpu = "h100"

    [configs.default]                   # one table per configuration, its options over base
    [configs.no-prefix-caching]
    enable_prefix_caching = false

The requests table takes what :mod:`osbench.serve.source` describes. A configuration's options
are :func:`~osbench.serve.simulate`'s: ``model``, ``gpu``, ``tp``, ``num_blocks``, ``step_time``
by name (``"measured"``: the GPU's kernel tables; a sweep over clocks) and the
:class:`~osbench.serve.EngineConfig` fields, or ``semantics = "sglang"`` and SGLang's (a sweep
over semantics: one configuration per semantics). :func:`run` serves each cell (a worker builds its
requests itself, so nothing large travels) on a local process pool, a Dask cluster or any
``concurrent.futures`` executor, with :mod:`osbench._sweep`'s runner: each result is appended to
the results file as it finishes, and a rerun skips the cells already there.
"""

from __future__ import annotations

import dataclasses
import io
import json
import os
from pathlib import Path
from typing import Any, Callable, Optional, Union

from osbench import _checks, _files, _sweep
from osbench._optional import require
from osbench._sweep import SpecLike, finished
from osbench.errors import ArgumentError, ArgumentTypeError
from osbench.serve import source
from osbench.serve.engines import ENGINES
from osbench.serve.simulate import simulate

OPTIONS = tuple(
    dict.fromkeys(
        [
            "model",
            "gpu",
            "tp",
            "num_blocks",
            "semantics",
            "step_time",
            *(f.name for row in ENGINES.values() for f in dataclasses.fields(row.module().Config)),
        ]
    )
)
"""What a configuration may set: :func:`~osbench.serve.simulate`'s options, ``semantics`` and
every semantics' configuration fields (a field of another semantics than the configuration's is
refused by :func:`~osbench.serve.simulate`, naming it)."""

KEYS = ("requests", "rates", "fit", "slo_ttft", "slo_tpot", "engine", "base", "configs")
"""Every key a spec may have."""


def _options(where: str, value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ArgumentTypeError(f"{where}={value!r} is not accepted: it must be a table of simulate() options")
    unknown = [k for k in value if k not in OPTIONS]
    if unknown:
        raise ArgumentError(
            f"{where}.{unknown[0]}={value[unknown[0]]!r} is not accepted: a configuration sets {', '.join(OPTIONS)}"
        )
    return dict(value)


def _slo(name: str, value: Any) -> Optional[float]:
    return None if value is None else _checks.positive_float(name, value)


def load_spec(spec: SpecLike) -> dict[str, Any]:
    """A serving sweep spec from a dict, or a ``.toml`` or ``.json`` file, checked."""
    raw = _sweep.read_spec(spec)
    unknown = [k for k in raw if k not in KEYS]
    if unknown:
        raise ArgumentError(
            f"{unknown[0]}={raw[unknown[0]]!r} is not accepted: a serving sweep spec has {', '.join(KEYS)}"
        )
    if raw.get("requests") is None:
        raise ArgumentError("spec is not accepted: it needs requests (a trace, or a generator table)")
    if not isinstance(raw["requests"], (str, dict)):
        raise ArgumentTypeError(
            f"requests={raw['requests']!r} is not accepted: a trace (dataset name or path) or a table describing them"
        )
    described = raw["requests"] if isinstance(raw["requests"], dict) else {"trace": raw["requests"]}
    unknown = [k for k in described if k not in source.KEYS]
    if unknown:
        raise ArgumentError(
            f"requests.{unknown[0]}={described[unknown[0]]!r} is not accepted: requests take {', '.join(source.KEYS)}"
        )
    for k in ("fit", "rate"):
        if k in described:
            raise ArgumentError(f"requests.{k} is not accepted: give {'rates' if k == 'rate' else k} at the top")
    rates = raw.get("rates")
    if rates is None:
        rates = [None]
    elif not isinstance(rates, list) or not rates:
        raise ArgumentError(f"rates={rates!r} is not accepted: a non-empty list of requests per second")
    else:
        rates = [_checks.positive_float("rates", r) for r in rates]
    base = _options("base", raw.get("base"))
    configs = raw.get("configs") or {"default": {}}
    if not isinstance(configs, dict):
        raise ArgumentTypeError(f"configs={configs!r} is not accepted: a table of named configurations")
    checked = {str(name): {**base, **_options(f"configs.{name}", options)} for name, options in configs.items()}
    fit = raw.get("fit", False)
    if not isinstance(fit, bool):
        raise ArgumentTypeError(f"fit={fit!r} is not accepted: it must be true or false")
    return {
        "requests": described,
        "rates": rates,
        "fit": fit,
        "slo_ttft": _slo("slo_ttft", raw.get("slo_ttft")),
        "slo_tpot": _slo("slo_tpot", raw.get("slo_tpot")),
        "engine": _checks.engine(raw.get("engine", "native")),
        "configs": checked,
    }


def cells(spec: dict[str, Any]) -> list[dict[str, Any]]:
    """Every cell of a checked spec, configuration by configuration, rate by rate; ``key``
    identifies a cell across reruns (everything that decides its result)."""
    out = []
    for name, options in spec["configs"].items():
        for rate in spec["rates"]:
            cell = {
                "requests": {**spec["requests"], "fit": spec["fit"], "rate": rate},
                "config": name,
                "options": options,
                "rate": rate,
                "slo_ttft": spec["slo_ttft"],
                "slo_tpot": spec["slo_tpot"],
                "engine": spec["engine"],
            }
            out.append({"key": json.dumps(cell, sort_keys=True), **cell})
    return out


def run_cell(cell: dict[str, Any]) -> dict[str, Any]:
    """Serve one cell (in a worker): build its requests, run, summarise."""
    reqs, left_out = source.requests(cell["requests"], cell["options"])
    result = simulate(reqs, engine=cell["engine"], **cell["options"])
    summary = result.summary(slo_ttft=cell["slo_ttft"], slo_tpot=cell["slo_tpot"])
    return {
        "key": cell["key"],
        "config": cell["config"],
        "options": cell["options"],
        "rate": reqs.rate if cell["rate"] is None else cell["rate"],
        "requests": len(reqs),
        "left_out": left_out.requests,
        "left_out_tokens": left_out.tokens,
        "num_blocks": result.num_blocks,
        "summary": summary.to_dict(),
    }


def run(
    spec: SpecLike,
    out: Union[str, os.PathLike[str]],
    executor: Any = None,
    *,
    workers: Optional[int] = None,
    progress: Optional[Callable[[int, int], None]] = None,
) -> list[dict[str, Any]]:
    """Run every cell of ``spec`` not already in the results file ``out`` (JSON lines), appending
    each result as it finishes; returns all results in cell order. ``executor``, ``workers`` and
    ``progress`` as :func:`osbench.cache.sweep.run` takes them."""
    return _sweep.run(cells(load_spec(spec)), run_cell, out, executor, workers=workers, progress=progress)


FIGURE_PANELS = (("ttft", "TTFT (s)"), ("tpot", "TPOT (s)"), ("goodput", "requests/s"))


def figure(results: list[dict[str, Any]], path: Union[str, os.PathLike[str]]) -> None:
    """Latency and goodput against the request rate, one line per configuration: TTFT and TPOT
    (p50 solid, p99 dashed, log scale), and goodput beside throughput. Saved to ``path`` (the
    format from its suffix). Needs matplotlib."""
    matplotlib = require("matplotlib", "the sweep's figure")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(15, 4))
    for i, config in enumerate(dict.fromkeys(r["config"] for r in results)):
        rows = sorted((r for r in results if r["config"] == config), key=lambda r: r["rate"])
        rates = [r["rate"] for r in rows]
        color = f"C{i}"
        for ax, (name, _) in zip(axes[:2], FIGURE_PANELS):
            ax.plot(rates, [r["summary"][name]["p50"] for r in rows], marker=".", color=color, label=f"{config} p50")
            ax.plot(
                rates, [r["summary"][name]["p99"] for r in rows], "--", marker=".", color=color, label=f"{config} p99"
            )
        axes[2].plot(rates, [r["summary"]["goodput"] for r in rows], marker=".", color=color, label=f"{config} goodput")
        axes[2].plot(
            rates,
            [r["summary"]["request_throughput"] for r in rows],
            ":",
            color=color,
            label=f"{config} throughput",
        )
    for ax, (name, unit) in zip(axes, FIGURE_PANELS):
        ax.set_xlabel("request rate (requests/s)")
        ax.set_ylabel(unit)
        ax.set_title(name.upper() if name != "goodput" else "goodput and throughput")
        if name != "goodput":
            ax.set_yscale("log")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format=Path(path).suffix.lstrip(".") or "png")
    plt.close(fig)
    _files.write_bytes(path, buf.getvalue())


__all__ = ["KEYS", "OPTIONS", "cells", "figure", "finished", "load_spec", "run", "run_cell"]
