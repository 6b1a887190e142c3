"""Optional packages: imported where a feature needs one, and when one is missing, a one-line
error that names the package and the extra that brings it (``pip install 'osbench[zstd]'``),
never a traceback. Which extra brings which package is read from osbench's own metadata (the
``[project.optional-dependencies]`` of pyproject.toml), not restated here."""

from __future__ import annotations

import importlib
import re
from types import ModuleType
from typing import Optional

from osbench.errors import OsbenchError


class MissingDependency(OsbenchError, ImportError):
    """An optional package a feature needs is not installed."""


def extra_of(package: str) -> Optional[str]:
    """The extra of osbench that installs ``package`` (its distribution name), or None (it is a
    dependency of osbench itself, or not one osbench declares)."""
    import importlib.metadata  # only when a package is missing: it is slow to import

    try:
        requires = importlib.metadata.requires("osbench") or []
    except importlib.metadata.PackageNotFoundError:
        return None
    extras = []
    for line in requires:
        name = re.match(r"[A-Za-z0-9._-]+", line)
        marker = re.search(r"""extra\s*==\s*['"]([^'"]+)['"]""", line)
        if name and marker and name.group(0).lower() == package.lower():
            extras.append(marker.group(1))
    # An extra named for the feature beats the catch-all "test" extra.
    extras.sort(key=lambda e: e == "test")
    return extras[0] if extras else None


def install_hint(package: str) -> str:
    """What to run to have ``package``: the osbench extra that brings it, else the package."""
    extra = extra_of(package)
    return f"pip install 'osbench[{extra}]'" if extra else f"pip install {package}"


def require(module: str, feature: str) -> ModuleType:
    """``import module``, or :class:`MissingDependency` saying that ``feature`` needs it and how
    to install it."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name != module.split(".")[0]:
            raise  # the package is there but broken, or the name is osbench's own: a bug
        package = module.split(".")[0]  # osbench's optional packages import under their own names
        raise MissingDependency(
            f"{feature} needs the {package} package, which is not installed: {install_hint(package)}"
        ) from None


__all__ = ["MissingDependency", "extra_of", "install_hint", "require"]
