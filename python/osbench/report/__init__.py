"""``osbench report``: every section computed, then written as one folder.

The folder holds ``index.html`` (self-contained: figures embedded), ``report.md`` with
``figures/*.png`` beside it, and ``results.json`` with every number shown. Nothing is written
until every section is computed, and each file is written atomically, so an interrupted run
leaves the previous report (or nothing) behind, never half a file.
"""

from osbench.report.folder import build, run, write
from osbench.report.model import Figure, Progress, Section
from osbench.report.render import results_json, to_html, to_markdown

__all__ = ["Figure", "Progress", "Section", "build", "results_json", "run", "to_html", "to_markdown", "write"]
