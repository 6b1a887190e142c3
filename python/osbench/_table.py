"""A small table type: what every topic's ``lecture.tables()`` returns.

The computing code builds :class:`Table` values with raw numbers in their rows (they go to
results.json as they are); the CLI prints them as text and the report writes them as Markdown and
HTML, every cell through the one formatter, :func:`osbench._format.quantity`. Nothing here does
I/O.
"""

from __future__ import annotations

import html
import numbers
import re
from dataclasses import dataclass, field
from typing import Any, Optional

from osbench._format import quantity

FOLD_AFTER = 12
"""The HTML folds a table longer than this: its key rows stay visible, the rest in a details."""

VISIBLE_ROWS = 6
"""Rows left visible in a folded table that names no key rows."""

PROSE = 24
"""A text cell longer than this may wrap in the HTML; numbers and short labels never do."""

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(\"'])")


def first_sentence(text: str) -> tuple[str, str]:
    """``text`` split after its first sentence: (the sentence, the rest)."""
    parts = _SENTENCE_END.split(text.strip(), maxsplit=1)
    return parts[0], parts[1] if len(parts) > 1 else ""


def _is_number(v: Any) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


def _css_class(v: Any, numeric_column: bool) -> str:
    """``prose`` for text long enough to wrap, ``n`` (right-aligned) in a column of numbers, else none."""
    if isinstance(v, str) and len(v) > PROSE:
        return "prose"
    return "n" if numeric_column else ""


@dataclass
class Table:
    """A titled table. ``rows`` hold raw values (numbers stay numbers for results.json).

    ``note`` says what to notice; its first sentence is the table's takeaway, shown as its
    caption. ``units`` gives the unit of a column's raw values (``"ns"``, ``"s"``, ``"B"``,
    ``"x"``, ``"%"`` for a fraction, ``"/s"``; see :data:`osbench._format.UNITS`), so that each
    value is printed in the unit that suits it. ``setup`` states the workload and its size, and
    ``seed`` the seed it was drawn with (None: nothing random). ``key_rows`` are the rows that
    stay visible when the HTML folds a long table (default: the first few)."""

    title: str
    columns: list[str]
    rows: list[list[Any]]
    note: str = ""
    key: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    units: dict[str, str] = field(default_factory=dict)
    setup: str = ""
    seed: Optional[int] = None
    key_rows: Optional[list[int]] = None

    @property
    def takeaway(self) -> str:
        """The first sentence of the note."""
        return first_sentence(self.note)[0]

    @property
    def setup_line(self) -> str:
        """The setup and the seed, in one line ("" when the table states neither)."""
        seed = "" if self.seed is None else f"seed {self.seed}"
        return "; ".join(p for p in (self.setup, seed) if p)

    def records(self) -> list[dict[str, Any]]:
        """The rows as dicts by column name, so that code reads a cell by its column's name
        rather than by its position."""
        return [dict(zip(self.columns, row)) for row in self.rows]

    def cells(self) -> list[list[str]]:
        """Every row as the text a person reads."""
        units = [self.units.get(c, "") for c in self.columns]
        return [[quantity(v, units[i] if i < len(units) else "") for i, v in enumerate(row)] for row in self.rows]

    def to_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "title": self.title,
            "columns": self.columns,
            "units": self.units,
            "rows": self.rows,
            "note": self.note,
            "setup": self.setup,
            "seed": self.seed,
            **self.extra,
        }

    def _numeric(self) -> list[bool]:
        """Which columns hold numbers (right-aligned in text and HTML)."""
        return [any(_is_number(row[i]) for row in self.rows if i < len(row)) for i in range(len(self.columns))]

    def to_text(self) -> str:
        cells = self.cells()
        widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(self.columns)]
        right = self._numeric()
        line = lambda items: "  ".join(  # noqa: E731
            s.rjust(w) if right[i] else s.ljust(w) for i, (s, w) in enumerate(zip(items, widths))
        ).rstrip()
        out = [self.title, line(self.columns), line(["-" * w for w in widths])]
        out += [line(r) for r in cells]
        if self.setup_line:
            out.append(f"Setup: {self.setup_line}.")
        if self.note:
            out.append(self.note)
        return "\n".join(out)

    def to_markdown(self) -> str:
        out = [f"**{self.title}**", ""]
        takeaway, rest = first_sentence(self.note)
        caption = " ".join(p for p in (f"*{takeaway}*" if takeaway else "", self._setup_sentence()) if p)
        if caption:
            out += [caption, ""]
        out += ["| " + " | ".join(self.columns) + " |", "|" + "---|" * len(self.columns)]
        out += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in self.cells()]
        if rest:
            out += ["", rest]
        return "\n".join(out)

    def to_html(self, anchor: str = "") -> str:
        """The table with its caption (takeaway and setup); a long one folds, its key rows visible."""
        takeaway, rest = first_sentence(self.note)
        caption = (f"<strong>{html.escape(takeaway)}</strong> " if takeaway else "") + html.escape(
            self._setup_sentence()
        )
        numeric = self._numeric()
        cells = [
            [(c, _css_class(v, numeric[i] if i < len(numeric) else False)) for i, (c, v) in enumerate(zip(row, raw))]
            for row, raw in zip(self.cells(), self.rows)
        ]
        head = (
            "<tr>"
            + "".join(
                ("<th class='n'>" if n else "<th>") + f"{html.escape(c)}</th>" for c, n in zip(self.columns, numeric)
            )
            + "</tr>"
        )

        def table(rows: list[list[tuple[str, str]]]) -> str:
            body = "".join(
                "<tr>"
                + "".join((f"<td class='{css}'>" if css else "<td>") + f"{html.escape(c)}</td>" for c, css in row)
                + "</tr>"
                for row in rows
            )
            return f'<div class="wide"><table>{head}{body}</table></div>'

        if len(cells) > FOLD_AFTER:
            keep = self.key_rows if self.key_rows else list(range(VISIBLE_ROWS))
            shown = table([cells[i] for i in keep if 0 <= i < len(cells)])
            shown += f"<details><summary>All {len(cells)} rows</summary>{table(cells)}</details>"
        else:
            shown = table(cells)
        ident = f' id="{html.escape(anchor)}"' if anchor else ""
        return (
            f'<section class="table"{ident}><h4>{html.escape(self.title)}</h4>'
            + (f'<p class="caption">{caption}</p>' if caption.strip() else "")
            + shown
            + (f'<p class="note">{html.escape(rest)}</p>' if rest else "")
            + "</section>"
        )

    def _setup_sentence(self) -> str:
        return f"Setup: {self.setup_line}." if self.setup_line else ""
