"""The report as text: Markdown, self-contained HTML, and the JSON of every number."""

from __future__ import annotations

import base64
import html
import platform
import sys
from typing import Any

from osbench import _native
from osbench.host.info import info as host_info
from osbench.report.model import Section


def _host_facts() -> dict[str, Any]:
    return {"python": sys.version.split()[0], "platform": platform.platform(), **host_info().to_dict()}


def _anchor(title: str) -> str:
    """The anchor Markdown renderers give a heading: lower case, spaces to dashes, no punctuation."""
    return "".join(c for c in title.lower().replace(" ", "-") if c.isalnum() or c == "-")


def _skipped_summary(sections: list[Section]) -> list[str]:
    """One line at the top when some sections left something out (data that cannot be had)."""
    titles = [s.title for s in sections if s.skipped]
    if not titles:
        return []
    return [
        f"This run left out what needs data it could not have, in: {'; '.join(titles)} (each section says what "
        "and why). 'osbench datasets fetch all', or OSBENCH_DATA_DIR, brings it back."
    ]


def to_markdown(sections: list[Section]) -> str:
    out = [
        "# osbench report",
        "",
        f"osbench {_native.__version__}; {platform.platform()}; Python {sys.version.split()[0]}",
        "",
    ]
    out += [f"- [{s.title}](#{_anchor(s.title)})" for s in sections] + [""]
    out += [f"> {line}\n" for line in _skipped_summary(sections)]
    for s in sections:
        out += [f"## {s.title}", "", s.intro, ""]
        out += [f"> {note}\n" for note in s.skipped]
        for t in s.tables:
            out += [t.to_markdown(), ""]
        for f in s.figures:
            out += [f"![{f.caption}](figures/{f.name}.png)", "", f"*{f.caption}*", ""]
    return "\n".join(out)


def to_html(sections: list[Section]) -> str:
    style = (
        "body{font-family:system-ui,sans-serif;max-width:60em;margin:2em auto;padding:0 1em;color:#222}"
        "table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:.2em .6em;text-align:right}"
        "td:first-child,th:first-child{text-align:left}img{max-width:100%}figcaption{font-style:italic}"
    )
    body = [
        f"<h1>osbench report</h1><p>osbench {html.escape(_native.__version__)}; {html.escape(platform.platform())}</p>"
    ]
    body.append("<ul>" + "".join(f'<li><a href="#{s.key}">{html.escape(s.title)}</a></li>' for s in sections) + "</ul>")
    body += [f'<p class="skipped">{html.escape(line)}</p>' for line in _skipped_summary(sections)]
    for s in sections:
        body.append(f'<h2 id="{s.key}">{html.escape(s.title)}</h2><p>{html.escape(s.intro)}</p>')
        body += [f'<p class="skipped">{html.escape(note)}</p>' for note in s.skipped]
        body += [t.to_html() for t in s.tables]
        for f in s.figures:
            data = base64.b64encode(f.png).decode("ascii")
            body.append(
                f'<figure><img alt="{html.escape(f.caption)}" src="data:image/png;base64,{data}"><figcaption>{html.escape(f.caption)}</figcaption></figure>'
            )
    return f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>osbench report</title><style>{style}</style></head><body>{''.join(body)}</body></html>\n"


def results_json(sections: list[Section], quick: bool, seed: int) -> dict[str, Any]:
    return {
        "osbench": _native.__version__,
        "quick": quick,
        "seed": seed,
        "host": _host_facts(),
        "sections": {
            s.key: {
                "title": s.title,
                "tables": [t.to_dict() for t in s.tables],
                "figures": [f.name for f in s.figures],
                "skipped": s.skipped,
                **s.results,
            }
            for s in sections
        },
    }
