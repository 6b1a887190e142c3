"""What a report is made of: sections holding tables, figures and the numbers behind them.

Data only: :mod:`osbench.report.sections` computes them, :mod:`osbench.report.render` and
:mod:`osbench.report.folder` turn them into files. The anchors of tables and figures are made
here, once, for the pages and for the findings that link to them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from osbench._table import Table

Progress = Callable[[str], None]
"""Receives one line per step of a long run."""


@dataclass
class Figure:
    """A rendered figure: PNG bytes, a caption that states its takeaway, and its setup
    (workload, size, seed) in one line."""

    name: str
    caption: str
    png: bytes
    setup: str = ""


@dataclass
class Section:
    key: str
    title: str
    intro: str
    tables: list[Table] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)
    results: dict[str, Any] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)
    """What the section would also show, and why it does not here (data that cannot be had)."""


SIMULATED = ("02-sched", "03-mem", "04-cache", "05-radix", "06-serve")
"""The sections that simulate: the same seeds give the same numbers on any machine. The others
(the host, the engines' speeds) measure this machine."""


def table_anchor(section: str, table_key: str, index: int = 0) -> str:
    """The anchor of a table in the pages: its section's key and its own (or its position)."""
    return f"{section}-{table_key or f'table-{index + 1}'}"


def figure_anchor(name: str) -> str:
    return f"figure-{name}"


__all__ = ["SIMULATED", "Figure", "Progress", "Section", "figure_anchor", "table_anchor"]
