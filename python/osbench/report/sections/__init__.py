"""The report's sections, in the lecture's order: one module per topic (``host``, ``sched``,
``mem``, ``cache``, ``radix``, ``serve``, ``engines``), each with its ``KEY``, its place in the
report (``ORDER``) and ``build(quick, seed, progress) -> Section``. A new section is one new
module here."""

from __future__ import annotations

import importlib
import pkgutil
from typing import Callable

from osbench.report.model import Section

Builder = Callable[..., Section]
"""``build(quick: bool, seed: int, progress: Optional[Progress] = None) -> Section``."""


def _builders() -> list[tuple[str, Builder]]:
    modules = [
        importlib.import_module(f"{__name__}.{m.name}")
        for m in pkgutil.iter_modules(__path__)
        if not m.name.startswith("_")
    ]
    return [(m.KEY, m.build) for m in sorted(modules, key=lambda m: m.ORDER)]


BUILDERS: list[tuple[str, Builder]] = _builders()
"""Every section's key and builder, in the report's order."""

__all__ = ["BUILDERS", "Builder"]
