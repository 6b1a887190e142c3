"""Host facts: CPU, cores, caches, memory, kernel, Python build (issue item 6).

Read from psutil, :mod:`platform`, ``/proc`` and ``/sys``; anything unreadable is ``None``.
"""

from __future__ import annotations

import dataclasses
import os
import platform
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import numpy as np

from osbench import _native
from osbench._record import Record


@dataclass(frozen=True)
class CacheLevel:
    """One CPU cache as ``/sys/devices/system/cpu/cpu0/cache/index*`` describes it."""

    level: int
    kind: str  # Data, Instruction, Unified
    size_bytes: int
    line_bytes: Optional[int]
    shared_cpus: str

    @property
    def name(self) -> str:
        suffix = {"Data": "d", "Instruction": "i"}.get(self.kind, "")
        return f"L{self.level}{suffix}"

    def to_dict(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "name": self.name}


@dataclass(frozen=True)
class HostInfo(Record):
    """What this machine is. ``usable_cpus`` is the affinity set: the real cap on parallelism."""

    cpu_model: Optional[str]
    logical_cpus: Optional[int]
    physical_cores: Optional[int]
    usable_cpus: tuple[int, ...]
    freq_mhz: Optional[dict[str, float]]
    caches: tuple[CacheLevel, ...]
    memory_total: Optional[int]
    memory_available: Optional[int]
    page_size: int
    kernel: str
    os: str
    virtualization: Optional[str]
    clocksource: Optional[str]
    thp_enabled: Optional[str]
    thp_defrag: Optional[str]
    python: str
    python_implementation: str
    python_build: str  # "free-threaded" or "with GIL"
    gil_enabled: bool
    numpy: str
    osbench_build: str

    def to_dict(self) -> dict[str, Any]:
        d = super().to_dict()
        d["caches"] = [c.to_dict() for c in self.caches]
        d["usable_cpus"] = list(self.usable_cpus)
        return d

    def cache_bytes(self, name: str) -> Optional[int]:
        """Size of ``L1d``, ``L2``, ``L3``... or None."""
        for c in self.caches:
            if c.name == name:
                return c.size_bytes
        return None


def _read(path: str | Path) -> Optional[str]:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return None


def _size(text: Optional[str]) -> Optional[int]:
    """``32K`` -> 32768; ``32768K`` -> 33554432."""
    if not text:
        return None
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    t = text.strip().upper()
    if t[-1] in units:
        return int(t[:-1]) * units[t[-1]]
    return int(t) if t.isdigit() else None


def selected(text: Optional[str]) -> Optional[str]:
    """The bracketed choice of a sysfs setting: ``always [madvise] never`` -> ``madvise``."""
    if text is None:
        return None
    for word in text.split():
        if word.startswith("[") and word.endswith("]"):
            return word[1:-1]
    return text


def caches(cpu: int = 0) -> tuple[CacheLevel, ...]:
    """The caches CPU ``cpu`` sees, from sysfs (empty where sysfs does not say)."""
    out = []
    base = Path(f"/sys/devices/system/cpu/cpu{cpu}/cache")
    for d in sorted(base.glob("index*")):
        level, kind, size = _read(d / "level"), _read(d / "type"), _size(_read(d / "size"))
        if level is None or kind is None or size is None:
            continue
        line = _read(d / "coherency_line_size")
        out.append(
            CacheLevel(
                int(level),
                kind,
                size,
                int(line) if line and line.isdigit() else None,
                _read(d / "shared_cpu_list") or "",
            )
        )
    return tuple(out)


def _cpu_model() -> Optional[str]:
    text = _read("/proc/cpuinfo") or ""
    for line in text.splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or None


def _virtualization() -> Optional[str]:
    vendor = _read("/sys/class/dmi/id/sys_vendor")
    flags = _read("/proc/cpuinfo") or ""
    if " hypervisor" in flags:
        return f"virtual machine ({vendor})" if vendor else "virtual machine"
    return None


def usable_cpus() -> tuple[int, ...]:
    """The CPUs this process may run on (its affinity), or all CPUs where affinity is unknown."""
    try:
        return tuple(sorted(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return tuple(range(os.cpu_count() or 1))


def thp() -> tuple[Optional[str], Optional[str]]:
    """Transparent huge pages: the ``enabled`` and ``defrag`` settings (None if absent)."""
    base = "/sys/kernel/mm/transparent_hugepage"
    return selected(_read(f"{base}/enabled")), selected(_read(f"{base}/defrag"))


def info() -> HostInfo:
    """Collect the host facts. Cheap (reads a few files), no measurement."""
    try:
        import psutil  # type: ignore[import-untyped]
    except ImportError:  # psutil is a declared dependency; stay useful without it
        psutil = None
    logical = psutil.cpu_count(logical=True) if psutil else os.cpu_count()
    physical = psutil.cpu_count(logical=False) if psutil else None
    freq = None
    if psutil:
        try:
            f = psutil.cpu_freq()
            if f is not None:
                freq = {"current": float(f.current), "min": float(f.min), "max": float(f.max)}
        except (OSError, NotImplementedError, AttributeError):
            freq = None
    mem_total = mem_avail = None
    if psutil:
        vm = psutil.virtual_memory()
        mem_total, mem_avail = int(vm.total), int(vm.available)
    free_threaded = bool(sysconfig.get_config_var("Py_GIL_DISABLED"))
    gil_check = getattr(sys, "_is_gil_enabled", None)
    enabled, defrag = thp()
    return HostInfo(
        cpu_model=_cpu_model(),
        logical_cpus=logical,
        physical_cores=physical,
        usable_cpus=usable_cpus(),
        freq_mhz=freq,
        caches=caches(),
        memory_total=mem_total,
        memory_available=mem_avail,
        page_size=os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096,
        kernel=platform.release(),
        os=platform.platform(),
        virtualization=_virtualization(),
        clocksource=_read("/sys/devices/system/clocksource/clocksource0/current_clocksource"),
        thp_enabled=enabled,
        thp_defrag=defrag,
        python=platform.python_version(),
        python_implementation=platform.python_implementation(),
        python_build="free-threaded" if free_threaded else "with GIL",
        gil_enabled=bool(gil_check()) if gil_check else True,
        numpy=np.__version__,
        osbench_build=_native.BUILD_PROFILE,
    )
