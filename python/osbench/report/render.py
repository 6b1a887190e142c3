"""The report as text: Markdown, self-contained HTML, and the JSON of every number.

Both pages open with what the run found (each finding links to the table or figure behind it),
then the contents, the sections, and the run manifest at the end. Every number a person reads
goes through :mod:`osbench._format`; results.json keeps the raw values.
"""

from __future__ import annotations

import base64
import html
from typing import Any

from osbench._format import UNKNOWN, number
from osbench._table import Table
from osbench.report import manifest as run_manifest
from osbench.report.findings import Finding
from osbench.report.model import Figure, Section, figure_anchor, table_anchor

TITLE = "osbench report"
FINDINGS_ID = "findings"
CONTENTS_ID = "contents"
MANIFEST_ID = "manifest"

STYLE = """
*{box-sizing:border-box}
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;max-width:62em;margin:0 auto;padding:1em 1.2em 3em;
  color:#1d1d1f;line-height:1.45}
h1{margin:.3em 0 .1em}h2{margin-top:2em;border-bottom:1px solid #ddd;padding-bottom:.2em}
h4{margin:1.6em 0 .3em}
.byline{color:#555;margin-top:0}
.findings{background:#f4f7fb;border:1px solid #d5e0ee;border-radius:8px;padding:.8em 1.2em .8em 2.6em}
.findings li{margin:.35em 0}
.see{font-size:.85em;margin-left:.3em}.see::before{content:"\u2192\u00a0"}
.badge{font-size:.8em;border-radius:4px;padding:0 .35em;margin-left:.3em;white-space:nowrap}
.agrees{background:#e3f4e6;color:#1e6b2e}.disagrees{background:#fdecd9;color:#8a4b00}
.wide{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;margin:.4em 0;font-variant-numeric:tabular-nums}
td,th{border:1px solid #d0d0d0;padding:.2em .6em;text-align:left;vertical-align:top;white-space:nowrap}
th{background:#f3f3f3;white-space:normal}
td.n,th.n{text-align:right}td.prose{white-space:normal;min-width:14em}
.caption{margin:.2em 0 .4em}.note{color:#444;font-size:.93em;margin:.3em 0 1em}
details{margin:.2em 0 .6em}summary{cursor:pointer;color:#2456a4}
figure{margin:1.5em 0}img{max-width:100%;height:auto}
figcaption{font-size:.95em}
.skipped{background:#fff7e0;border-left:4px solid #e0b000;padding:.4em .8em}
nav ol{columns:2;column-gap:2em}
@media (max-width:40em){nav ol{columns:1}}
"""


def _byline(manifest: dict[str, Any]) -> str:
    m = manifest
    osb, run, machine = m.get("osbench") or {}, m.get("run") or {}, m.get("machine") or {}
    cpus = machine.get("usable_cpus") or []
    return (
        f"osbench {osb.get('version') or UNKNOWN} ({osb.get('build_profile') or UNKNOWN} build); "
        f"{'quick' if run.get('quick') else 'full'} run, seed {run.get('seed')}, started {run.get('started') or UNKNOWN}; "
        f"{machine.get('cpu_model') or UNKNOWN}, {number(len(cpus))} usable CPUs; {machine.get('os') or UNKNOWN}"
    )


def _skipped_summary(sections: list[Section]) -> list[str]:
    """One line at the top when some sections left something out (data that cannot be had)."""
    titles = [s.title for s in sections if s.skipped]
    if not titles:
        return []
    return [
        f"This run left out what needs data it could not have, in: {'; '.join(titles)} (each section says what "
        "and why). 'osbench datasets fetch all', or OSBENCH_DATA_DIR, brings it back."
    ]


def _verdict(f: Finding) -> str:
    if f.agrees is None or not f.against:
        return ""
    return f"agrees with {f.against}" if f.agrees else f"differs from {f.against}"


def _sentence(text: str) -> str:
    return text if text.endswith((".", "!", "?")) else f"{text}."


def _figure_caption(f: Figure) -> str:
    return _sentence(f.caption) + (f" Setup: {f.setup}." if f.setup else "")


# --- Markdown --------------------------------------------------------------------------------


def to_markdown(sections: list[Section], findings: list[Finding], manifest: dict[str, Any]) -> str:
    out = [f"# {TITLE}", "", _byline(manifest), "", f'<a id="{FINDINGS_ID}"></a>', "", "## What this run found", ""]
    for i, finding in enumerate(findings, 1):
        verdict = _verdict(finding)
        out.append(
            f"{i}. **{finding.label}.** {finding.text} ([{finding.target_title}](#{finding.target}))"
            + (f" *({verdict})*" if verdict else "")
        )
    out += ["", "## Contents", ""]
    out += [f"- [{s.title}](#{s.key})" for s in sections] + [f"- [Run manifest](#{MANIFEST_ID})", ""]
    out += [f"> {line}\n" for line in _skipped_summary(sections)]
    for s in sections:
        out += [f'<a id="{s.key}"></a>', "", f"## {s.title}", "", s.intro, ""]
        out += [f"> {note}\n" for note in s.skipped]
        for i, t in enumerate(s.tables):
            out += [f'<a id="{table_anchor(s.key, t.key, i)}"></a>', "", t.to_markdown(), ""]
        for f in s.figures:
            out += [
                f'<a id="{figure_anchor(f.name)}"></a>',
                "",
                f"![{f.caption}](figures/{f.name}.png)",
                "",
                f"*{_figure_caption(f)}*",
                "",
            ]
    out += [f'<a id="{MANIFEST_ID}"></a>', "", "## Run manifest", ""]
    out += [t.to_markdown() + "\n" for t in run_manifest.tables(manifest)]
    return "\n".join(out)


# --- HTML ------------------------------------------------------------------------------------


def _findings_html(findings: list[Finding]) -> str:
    items = []
    for f in findings:
        verdict = _verdict(f)
        badge = (
            f' <span class="badge {"agrees" if f.agrees else "disagrees"}">{html.escape(verdict)}</span>'
            if verdict
            else ""
        )
        kind = "figure" if f.target.startswith(figure_anchor("")) else "table"
        items.append(
            f"<li><strong>{html.escape(f.label)}.</strong> {html.escape(f.text)}{badge} "
            f'<a class="see" href="#{html.escape(f.target)}" title="{html.escape(f.target_title)}">{kind}</a></li>'
        )
    return (
        f'<section id="{FINDINGS_ID}"><h2>What this run found</h2><ol class="findings">{"".join(items)}</ol></section>'
    )


def _figure_html(f: Figure) -> str:
    data = base64.b64encode(f.png).decode("ascii")
    setup = f" Setup: {html.escape(f.setup)}." if f.setup else ""
    return (
        f'<figure id="{html.escape(figure_anchor(f.name))}"><img alt="{html.escape(f.caption)}" '
        f'src="data:image/png;base64,{data}"><figcaption><strong>{html.escape(_sentence(f.caption))}</strong>{setup}'
        "</figcaption></figure>"
    )


def _tables_html(section: str, tables: list[Table]) -> list[str]:
    return [t.to_html(anchor=table_anchor(section, t.key, i)) for i, t in enumerate(tables)]


def to_html(sections: list[Section], findings: list[Finding], manifest: dict[str, Any]) -> str:
    body = [f"<header><h1>{TITLE}</h1><p class='byline'>{html.escape(_byline(manifest))}</p></header>"]
    body.append(_findings_html(findings))
    contents = [f'<li><a href="#{html.escape(s.key)}">{html.escape(s.title)}</a></li>' for s in sections]
    contents.append(f'<li><a href="#{MANIFEST_ID}">Run manifest</a></li>')
    body.append(f'<nav id="{CONTENTS_ID}"><h2>Contents</h2><ol>{"".join(contents)}</ol></nav>')
    body += [f'<p class="skipped">{html.escape(line)}</p>' for line in _skipped_summary(sections)]
    for s in sections:
        body.append(f'<section id="{html.escape(s.key)}"><h2>{html.escape(s.title)}</h2><p>{html.escape(s.intro)}</p>')
        body += [f'<p class="skipped">{html.escape(note)}</p>' for note in s.skipped]
        body += _tables_html(s.key, s.tables)
        body += [_figure_html(f) for f in s.figures]
        body.append("</section>")
    body.append(f'<section id="{MANIFEST_ID}"><h2>Run manifest</h2>')
    body += _tables_html(MANIFEST_ID, run_manifest.tables(manifest))
    body.append("</section>")
    return page(TITLE, "".join(body))


def page(title: str, body: str) -> str:
    """A self-contained HTML page in the report's style."""
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{html.escape(title)}</title><style>{STYLE}</style></head><body>{body}</body></html>\n"
    )


# --- JSON ------------------------------------------------------------------------------------


def sections_json(sections: list[Section]) -> dict[str, Any]:
    """Every section's tables, figures and raw results, by key: what findings are computed from."""
    return {
        s.key: {
            "title": s.title,
            "tables": [t.to_dict() for t in s.tables],
            "figures": [f.name for f in s.figures],
            "figure_captions": {f.name: {"caption": f.caption, "setup": f.setup} for f in s.figures},
            "skipped": s.skipped,
            **s.results,
        }
        for s in sections
    }


def results_json(sections: list[Section], findings: list[Finding], manifest: dict[str, Any]) -> dict[str, Any]:
    return {
        "manifest": manifest,
        "findings": [f.to_dict() for f in findings],
        "sections": sections_json(sections),
    }


__all__ = ["page", "results_json", "sections_json", "to_html", "to_markdown"]
