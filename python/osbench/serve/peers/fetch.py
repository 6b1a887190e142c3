"""Unpacking a peer's Python sources from its wheel, once, into a folder of the peers cache.

No peer code is part of osbench: the files are read from the released wheel (``pip download``
from PyPI, or a wheel on disk) into ``$OSBENCH_PEERS_DIR/<name>-<version>`` (default
``~/.cache/osbench/peers``), with a stamp naming the release and the files, so that a folder
from another release or file list is not taken for this one.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Optional

from osbench.errors import ArgumentError

STAMP = "osbench-sources.txt"


def peers_dir() -> Path:
    """Where optional peers are kept: ``$OSBENCH_PEERS_DIR``, else ``~/.cache/osbench/peers``."""
    return Path(os.environ.get("OSBENCH_PEERS_DIR") or Path.home() / ".cache" / "osbench" / "peers")


class Wheel:
    """The ``sources`` of release ``version`` of the package ``name``, as its wheel holds them.
    ``pip_options``: how ``pip download`` picks a wheel (any wheel of a release has the same
    Python sources; pick one that installs on the most machines)."""

    def __init__(self, name: str, version: str, sources: Sequence[str], pip_options: Sequence[str] = ()) -> None:
        self.name, self.version, self.sources = name, version, tuple(sources)
        self.pip_options = tuple(pip_options)

    def folder(self) -> Path:
        """The folder holding the sources (``<package>/...`` inside it)."""
        return peers_dir() / f"{self.name}-{self.version}"

    def stamp(self) -> str:
        return "\n".join((f"{self.name} {self.version}", *self.sources)) + "\n"

    def present(self) -> bool:
        stamp = self.folder() / STAMP
        return stamp.is_file() and stamp.read_text() == self.stamp()

    def missing_reason(self, label: str, make_target: str) -> Optional[str]:
        """Why a peer of these sources cannot run here, or ``None`` when it can (``label``: the
        package as its project writes it; ``make_target``: the make target that fetches them)."""
        if not self.present():
            return f"{label} {self.version} sources not found in {self.folder()}: run make {make_target}"
        if sys.version_info < (3, 11):
            return f"the {label} {self.version} sources need Python >= 3.11 (this is {sys.version.split()[0]})"
        return None

    def fetch(self, wheel: Optional[str] = None) -> Path:
        """Unpack the sources into :meth:`folder`, downloading the wheel (``pip download
        <name>==<version> --no-deps``) unless ``wheel`` names one on disk. Does nothing when
        they are already there; the folder appears whole or not at all."""
        target = self.folder()
        if self.present():
            return target
        prefix = f"{self.name}-{self.version}-"
        target.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=target.parent, prefix=f".{self.name}-fetch-") as tmp:
            if wheel is None:
                pip = (sys.executable, "-m", "pip", "download", f"{self.name}=={self.version}", "--no-deps")
                subprocess.run([*pip, "--quiet", *self.pip_options, "--dest", tmp], check=True)
                wheels = sorted(Path(tmp).glob(f"{prefix}*.whl"))
                if not wheels:
                    raise FileNotFoundError(f"pip download left no {self.name} {self.version} wheel in {tmp}")
                wheel = str(wheels[0])
            if prefix not in Path(wheel).name:
                raise ArgumentError(f"wheel={wheel!r} is not accepted: it must be a {prefix[:-1]} wheel")
            staged = Path(tmp) / "sources"
            with zipfile.ZipFile(wheel) as archive:
                for name in self.sources:
                    out = staged / name
                    out.parent.mkdir(parents=True, exist_ok=True)
                    out.write_bytes(archive.read(name))
            (staged / STAMP).write_text(self.stamp())
            if target.exists():
                shutil.rmtree(target)
            os.replace(staged, target)
        return target
