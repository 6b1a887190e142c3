"""What a report is made of: sections holding tables, figures and the numbers behind them.

Data only: :mod:`osbench.report.sections` computes them, :mod:`osbench.report.render` and
:mod:`osbench.report.folder` turn them into files.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from osbench._table import Table

Progress = Callable[[str], None]
"""Receives one line per step of a long run."""


@dataclass
class Figure:
    """A rendered figure: PNG bytes and a caption."""

    name: str
    caption: str
    png: bytes


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


__all__ = ["Figure", "Progress", "Section"]
