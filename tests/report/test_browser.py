"""index.html in a real browser (headless Chromium): every figure loads, every link of the
contents and the findings resolves, nothing overflows the page width. Skipped where Chromium is
not installed (Debian: ``apt-get install chromium``)."""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any, Optional

import pytest

CHROMIUM = next((p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None)
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium is not installed")

# Runs in the page once it has loaded, and leaves what it found in a <pre> for --dump-dom.
CHECK = """
window.addEventListener('load', () => {
  const out = {};
  const images = [...document.images];
  out.images = images.length;
  out.broken = images.filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.alt);
  const links = [...document.querySelectorAll('a[href^="#"]')];
  out.links = links.map(a => a.getAttribute('href').slice(1));
  out.contents = [...document.querySelectorAll('nav a')].map(a => a.getAttribute('href').slice(1));
  out.dangling = out.links.filter(id => !document.getElementById(id));
  const root = document.documentElement;
  out.viewport = root.clientWidth;
  out.scrollWidth = root.scrollWidth;
  const body = document.body.getBoundingClientRect();
  const right = body.right - parseFloat(getComputedStyle(document.body).paddingRight) + 1;
  // Wide tables scroll inside their own box (.wide); everything else stays in the text column.
  // An element overflows when its box passes the column, or its content passes its box.
  out.overflowing = [...document.body.querySelectorAll('*')].filter(e => {
    if (e.closest('.wide')) return e.classList.contains('wide') && e.getBoundingClientRect().right > right;
    const r = e.getBoundingClientRect();
    return r.width > 0 && (r.right > right || (e.clientWidth > 0 && e.scrollWidth > e.clientWidth + 1));
  }).map(e => `${e.tagName}#${e.id}: ${(e.textContent || '').slice(0, 80)}`);
  out.first = document.body.firstElementChild.nextElementSibling.id;
  const pre = document.createElement('pre');
  pre.id = 'osbench-check';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
"""


def render(page: Path, width: int) -> dict[str, Any]:
    """Load ``page`` (with the check added) in headless Chromium at ``width`` pixels."""
    probe = page.with_name(f".{page.stem}-check.html")
    probe.write_text(page.read_text().replace("</body>", f"<script>{CHECK}</script></body>"))
    try:
        assert CHROMIUM is not None
        done = subprocess.run(
            [
                CHROMIUM,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                f"--window-size={width},900",
                "--virtual-time-budget=10000",
                "--dump-dom",
                probe.as_uri(),
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        probe.unlink()
    found: Optional[re.Match[str]] = re.search(r'<pre id="osbench-check">(.*?)</pre>', done.stdout, flags=re.S)
    assert found, f"the page did not finish loading in Chromium: {done.stderr[-2000:]}"
    result: dict[str, Any] = json.loads(html.unescape(found.group(1)))
    return result


@pytest.mark.parametrize("width", [1280, 500])
def test_the_report_in_a_browser(quick_report: Path, width: int) -> None:
    results = json.loads((quick_report / "results.json").read_text())
    figures = [f for s in results["sections"].values() for f in s["figures"]]
    page = render(quick_report / "index.html", width)
    assert page["images"] == len(figures) and page["broken"] == []
    assert page["dangling"] == []
    assert page["contents"] == [*results["sections"], "manifest"]
    assert {f["target"] for f in results["findings"]} <= set(page["links"])
    assert page["scrollWidth"] <= page["viewport"] and page["overflowing"] == []
    assert page["first"] == "findings"  # what a reader sees first, after the title


def test_the_check_catches_what_it_looks_for(tmp_path: Path) -> None:
    """A page with a broken figure, a dangling link and a line too wide fails each check."""
    bad = tmp_path / "index.html"
    bad.write_text(
        "<!DOCTYPE html><html><head><style>body{max-width:30em;margin:auto;padding:0 1em}</style></head><body>"
        "<h1>t</h1><section id='findings'><nav><a href='#nowhere'>x</a></nav>"
        "<img alt='lost' src='data:image/png;base64,AAAA'>"
        f"<p style='white-space:nowrap'>{'wide ' * 80}</p>"
        "<div class='wide'><table><tr><td style='white-space:nowrap'>"
        f"{'scrolls inside its box ' * 40}</td></tr></table></div></section></body></html>"
    )
    page = render(bad, 800)
    assert page["broken"] == ["lost"] and page["dangling"] == ["nowhere"]
    # The paragraph, and the section it widens; not the table scrolling in its .wide box.
    assert [o.split(":")[0] for o in page["overflowing"]] == ["SECTION#findings", "P#"]
    assert page["scrollWidth"] > page["viewport"]
