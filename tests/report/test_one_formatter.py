"""Every number a person reads goes through osbench._format: the report's pages and the command
line's output are scanned for numbers the formatter would not have written (more than three
significant digits, a long integer without separators, decimal byte units, raw "bytes")."""

from __future__ import annotations

import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

NUMBER = re.compile(r"(?<![\w.,:/#+-])(\d[\d,]*(?:\.\d+)?)(?![\w.:/-]|,\d)(?:\s?(KB|MB|GB|TB|PB|bytes)\b)?")
"""A number standing alone (not part of a name such as H100-SXM5, a version, a date, a hash or
a path), and the byte unit after it if any."""

IDS = re.compile(r"\b(seed|seeds|request|line|lines|pid|PID|port)\s+$")
"""Words after which a number is an identifier, not a quantity."""


def leaks(text: str) -> list[str]:
    """The numbers in ``text`` that the formatter would not have written."""
    found = []
    for line in text.splitlines():
        for m in NUMBER.finditer(line):
            token, unit = m.group(1).rstrip(","), m.group(2)
            if IDS.search(line[: m.start()]):
                continue
            digits = token.replace(",", "")
            if unit:
                found.append(f"{token} {unit}")
            elif "." in digits:
                significant = digits.replace(".", "").lstrip("0")
                # Three significant digits, or four for an exact value halfway (12.25), and
                # never fewer than the integer part has.
                whole = len(digits.split(".")[0].lstrip("0"))
                if len(significant) > max(3, whole) and not (len(significant) == 4 and significant.endswith("5")):
                    found.append(token)
            elif len(digits) > 4 and "," not in token:
                found.append(token)
            elif "," in token and not re.fullmatch(r"\d{1,3}(,\d{3})+", token):
                # Not a number with separators: a list (1,2,3,4,1,2,5), each item a small number.
                if any(len(item) > 3 for item in token.split(",")):
                    found.append(token)
    return found


def test_the_scan_finds_what_bypasses_the_formatter() -> None:
    bad = "7.8851 us, 0.4580, 69358.5103, capacity 65536, 2,029,769 bytes, 4 KB, 1,0000"
    assert leaks(bad) == ["7.8851", "0.4580", "69358.5103", "65536", "2,029,769 bytes", "4 KB", "1,0000"]
    good = "1,2,3,4,1,2,5, 7.89 us, 0.458, 69,359, 12.25, 1.23e-5, 2.5x, 45.8%, 1,000 ms - 1.33 s, H100-SXM5-80GB, seed 12345, 3.11.2"
    assert leaks(good) == []


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self.skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.skip += tag in ("style", "script")

    def handle_endtag(self, tag: str) -> None:
        self.skip -= tag in ("style", "script")

    def handle_data(self, data: str) -> None:
        if not self.skip:
            self.parts.append(data)


def test_the_report_pages_use_the_formatter(quick_report: Path) -> None:
    markdown = "\n".join(line for line in (quick_report / "report.md").read_text().splitlines() if "](" not in line)
    assert leaks(markdown) == []
    page = _Text()
    page.feed((quick_report / "index.html").read_text())
    assert leaks("\n".join(page.parts)) == []


@pytest.mark.parametrize(
    "command",
    [
        ["cache", "replay"],
        ["cache", "curve"],
        ["sched", "simulate", "--jobs", "20000"],
        ["mem", "alloc"],
        ["radix", "replay", "--conversations", "100"],
        ["serve", "simulate", "--poisson", "300,8"],
        ["datasets", "list"],
        ["lecture", "03"],
        ["lecture", "04"],
    ],
)
def test_the_command_line_uses_the_formatter(command: list[str]) -> None:
    out = subprocess.run([sys.executable, "-m", "osbench", *command], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    assert leaks(out.stdout) == []
