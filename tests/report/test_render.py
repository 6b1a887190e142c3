"""The Markdown and the HTML of a quick report: findings first, every link and figure in place,
every table and figure captioned, every number readable without counting digits."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from osbench.report.model import figure_anchor, table_anchor

NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")


def unreadable(text: str) -> list[str]:
    """The numbers in ``text`` a person would have to count the digits of: more than four
    significant digits after the point, or five digits or more without a thousands separator."""
    out = []
    for token in NUMBER.findall(text):
        whole, _, frac = token.partition(".")
        significant = (whole.replace(",", "") + frac).lstrip("0")
        if ("," not in whole and len(whole) > 4) or (frac and len(significant) > 4):
            out.append(token)
    return out


def test_the_check_of_readable_numbers() -> None:
    assert unreadable("0.9109 x 925.4 and 123456 or 0.000123456") == ["123456", "0.000123456"]
    assert unreadable("0.911x, 12,346, 0.0741, 12.25, 1.96 us, 2026") == []
    assert unreadable("0.91092") == ["0.91092"]


@pytest.fixture(scope="module")
def results(quick_report: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((quick_report / "results.json").read_text())
    return data


class Page(HTMLParser):
    """Ids, internal links, and the text of each table cell (with its class and section)."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: list[str] = []
        self.links: list[str] = []
        self.cells: list[tuple[str, str, str]] = []  # (section, class, text)
        self.captions: dict[str, str] = {}
        self.section = ""
        self.table = ""
        self._cell: list[str] | None = None
        self._css = ""
        self._caption: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if a.get("id"):
            self.ids.append(a["id"] or "")
            if tag == "section" and a.get("class") == "table":
                self.table = a["id"] or ""
            elif tag == "section":
                self.section = a["id"] or ""
        if tag == "a" and (a.get("href") or "").startswith("#"):
            self.links.append((a["href"] or "")[1:])
        if tag == "td":
            self._cell, self._css = [], a.get("class") or ""
        if tag == "p" and a.get("class") == "caption":
            self._caption = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "td" and self._cell is not None:
            self.cells.append((self.section, self._css, "".join(self._cell)))
            self._cell = None
        if tag == "p" and self._caption is not None:
            self.captions[self.table] = "".join(self._caption)
            self._caption = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)
        if self._caption is not None:
            self._caption.append(data)


@pytest.fixture(scope="module")
def page(quick_report: Path) -> Page:
    p = Page()
    p.feed((quick_report / "index.html").read_text())
    return p


def test_html_links_resolve_and_every_table_and_figure_has_its_anchor(page: Page, results: dict[str, Any]) -> None:
    assert not [link for link in page.links if link not in page.ids]
    assert len(page.ids) == len(set(page.ids))
    for key, s in results["sections"].items():
        assert key in page.ids
        for i, t in enumerate(s["tables"]):
            assert table_anchor(key, t["key"], i) in page.ids
        for name in s["figures"]:
            assert figure_anchor(name) in page.ids


def test_every_table_says_what_it_shows(page: Page, results: dict[str, Any]) -> None:
    for key, s in results["sections"].items():
        for i, t in enumerate(s["tables"]):
            caption = page.captions.get(table_anchor(key, t["key"], i), "")
            assert caption.strip(), f"{key}: {t['title']} has no caption"
            if t["seed"] is not None:
                assert f"seed {t['seed']}" in caption
        for name, c in s["figure_captions"].items():
            assert c["caption"] and c["setup"], name


def test_numbers_are_readable(page: Page) -> None:
    """Every number a table shows goes through the formatter: no raw float, no ungrouped digits.
    (Long text cells written by the lecture modules, and the manifest's checksums, are text.)"""
    numbers = [(s, text) for s, css, text in page.cells if css != "prose" and s != "manifest"]
    assert len(numbers) > 500
    assert [(s, text) for s, text in numbers if unreadable(text)] == []
    # The examples: no "max 0" for a frequency nobody could read, no bare speedup digits.
    assert not any("(max 0)" in text for _, _, text in page.cells)


def test_markdown_links_figures_and_order(quick_report: Path, results: dict[str, Any]) -> None:
    md = (quick_report / "report.md").read_text()
    anchors = set(re.findall(r'<a id="([^"]+)"></a>', md))
    links = re.findall(r"\]\(#([^)]+)\)", md)
    assert links and not [link for link in links if link not in anchors]
    images = re.findall(r"!\[[^\]]*\]\((figures/[^)]+\.png)\)", md)
    assert len(images) == sum(len(s["figures"]) for s in results["sections"].values())
    assert all((quick_report / path).is_file() for path in images)
    headings = re.findall(r"^## (.+)$", md, flags=re.M)
    assert headings == [
        "What this run found",
        "Contents",
        *[s["title"] for s in results["sections"].values()],
        "Run manifest",
    ]
    rows = [line for line in md.splitlines() if line.startswith("| ") and "---" not in line]
    cells = [c.strip() for r in rows for c in r.strip("|").split(" | ")]
    assert cells and [c for c in cells if unreadable(c) and len(c) <= 24] == []  # short cells: numbers, labels
