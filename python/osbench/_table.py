"""A small table type: what every topic's ``lecture.tables()`` returns.

The computing code builds :class:`Table` values; the CLI prints them as text and the report
writes them as Markdown and HTML. Nothing here does I/O.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from typing import Any


def _cell(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}" if abs(v) < 1e5 else f"{v:,.0f}"
    if isinstance(v, int) and not isinstance(v, bool):
        return f"{v:,}"
    return str(v)


@dataclass
class Table:
    """A titled table. ``rows`` hold raw values (numbers stay numbers for results.json);
    ``note`` says what to notice, in a sentence or two."""

    title: str
    columns: list[str]
    rows: list[list[Any]]
    note: str = ""
    key: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"title": self.title, "columns": self.columns, "rows": self.rows, "note": self.note, **self.extra}

    def to_text(self) -> str:
        cells = [[_cell(v) for v in row] for row in self.rows]
        widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(self.columns)]
        line = lambda items: "  ".join(s.rjust(w) if i else s.ljust(w) for i, (s, w) in enumerate(zip(items, widths)))  # noqa: E731
        out = [self.title, line(self.columns), line(["-" * w for w in widths])]
        out += [line(r) for r in cells]
        if self.note:
            out.append(self.note)
        return "\n".join(out)

    def to_markdown(self) -> str:
        out = [f"**{self.title}**", "", "| " + " | ".join(self.columns) + " |", "|" + "---|" * len(self.columns)]
        out += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in self.rows]
        if self.note:
            out += ["", self.note]
        return "\n".join(out)

    def to_html(self) -> str:
        head = "".join(f"<th>{html.escape(c)}</th>" for c in self.columns)
        body = "".join(
            "<tr>" + "".join(f"<td>{html.escape(_cell(v))}</td>" for v in row) + "</tr>" for row in self.rows
        )
        note = f"<p>{html.escape(self.note)}</p>" if self.note else ""
        return f"<h4>{html.escape(self.title)}</h4><table><tr>{head}</tr>{body}</table>{note}"
