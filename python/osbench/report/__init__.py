"""``osbench report``: every section computed, then written as one folder.

The folder holds ``index.html`` (self-contained: figures embedded), ``report.md`` with
``figures/*.png`` beside it, and ``results.json`` with every number shown, the findings and the
run manifest. Nothing is written until every section is computed, and each file is written
atomically, so an interrupted run leaves the previous report (or nothing) behind, never half a
file. :func:`compare` sets two saved runs side by side (``osbench report --compare A B``).
"""

from osbench.report.compare import Comparison, NotResultsError, compare
from osbench.report.findings import Finding
from osbench.report.folder import build, results, run, write, write_comparison
from osbench.report.model import Figure, Progress, Section
from osbench.report.render import results_json, to_html, to_markdown

__all__ = [
    "Comparison",
    "Figure",
    "Finding",
    "NotResultsError",
    "Progress",
    "Section",
    "build",
    "compare",
    "results",
    "results_json",
    "run",
    "to_html",
    "to_markdown",
    "write",
    "write_comparison",
]
