"""The one formatter of numbers for people: every table (text, Markdown, HTML) and every finding.

- Significant digits by magnitude: ``0.911``, ``31.3``, ``925``, ``12,346`` (three significant
  digits, but the digits left of the point are never rounded away), thousands separators.
- A value exactly halfway at the fourth digit (``12.25``, an exact answer) is shown whole rather
  than rounded either way.
- Units chosen per value: durations in ns, us, ms or s; bytes in B, KiB, MiB, GiB or TiB; rates
  per second with k, M, G; ratios as ``3.1x``; fractions as percentages.
- ``None`` and NaN (what could not be read or computed) print as ``unknown``, never as 0.

The raw values stay raw where they are stored (``results.json``); only what a person reads goes
through here.
"""

from __future__ import annotations

import math
import numbers
from typing import Any, Callable, Optional

UNKNOWN = "unknown"

DIGITS = 3
"""Significant digits of a measured or computed value."""

UNITS = ("", "ns", "s", "B", "x", "%", "/s")
"""The units :func:`quantity` scales (any other unit string is printed after the number)."""

_TIME = ((1e9, "s"), (1e6, "ms"), (1e3, "us"), (1.0, "ns"))
_BYTES = ((1 << 40, "TiB"), (1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB"))
_RATE = ((1e9, "G"), (1e6, "M"), (1e3, "k"))


def _is_number(v: Any) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, bool) and type(v).__name__ != "bool_"


def _halfway(v: float, digits: int) -> bool:
    """``v`` is a short decimal of ``digits + 1`` significant digits ending in 5 (``12.25``):
    rounding it to ``digits`` would move an exact value by half a unit either way."""
    text = repr(v).lstrip("-")
    if "e" in text or "inf" in text or "nan" in text:
        return False
    significant = text.replace(".", "").lstrip("0")
    return len(significant) == digits + 1 and significant.endswith("5")


def number(v: Any, digits: int = DIGITS) -> str:
    """A plain number for a person (see the module docstring); ``None`` and NaN: ``unknown``."""
    if v is None:
        return UNKNOWN
    if not _is_number(v):
        return str(v)
    if isinstance(v, numbers.Integral):
        return f"{int(v):,}"
    x = float(v)
    if math.isnan(x):
        return UNKNOWN
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if x == 0:
        return "0"
    if x.is_integer() and abs(x) < 1e15:
        return f"{int(x):,}"
    magnitude = math.floor(math.log10(abs(x)))
    if magnitude >= digits - 1:
        return f"{round(x):,}"
    if _halfway(x, digits) and magnitude >= -3:
        return _group(repr(x))
    if magnitude < -3:
        return f"{x:.{digits - 1}e}".replace("e-0", "e-")
    decimals = digits - 1 - magnitude
    text = f"{x:,.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def _group(text: str) -> str:
    """Thousands separators in the integer part of a decimal string."""
    sign = "-" if text.startswith("-") else ""
    whole, _, frac = text.lstrip("-").partition(".")
    return f"{sign}{int(whole):,}" + (f".{frac}" if frac else "")


def _scaled(x: float, scales: tuple[tuple[float, str], ...], base_unit: str, sep: str = " ") -> str:
    for factor, unit in scales:
        if abs(x) >= factor:
            return f"{number(x / factor)}{sep}{unit}"
    return f"{number(x)}{sep}{base_unit}"


def duration_ns(ns: Optional[float]) -> str:
    """``850 ns``, ``5.93 us``, ``48.1 us``, ``1.23 ms``, ``2.5 s``."""
    if ns is None or not _is_number(ns) or math.isnan(float(ns)):
        return UNKNOWN
    return _scaled(float(ns), _TIME, "ns")


def duration(seconds: Optional[float]) -> str:
    """A duration given in seconds, in the unit that suits it."""
    if seconds is None or not _is_number(seconds):
        return UNKNOWN
    return duration_ns(float(seconds) * 1e9)


def size(n_bytes: Optional[float]) -> str:
    """``512 B``, ``32 KiB``, ``1.5 MiB``, ``24 GiB`` (binary prefixes)."""
    if n_bytes is None or not _is_number(n_bytes) or math.isnan(float(n_bytes)):
        return UNKNOWN
    return _scaled(float(n_bytes), _BYTES, "B")


def rate(per_second: Optional[float]) -> str:
    """``950/s``, ``12.3 k/s``, ``48 M/s``."""
    if per_second is None or not _is_number(per_second) or math.isnan(float(per_second)):
        return UNKNOWN
    x = float(per_second)
    for factor, prefix in _RATE:
        if abs(x) >= factor:
            return f"{number(x / factor)} {prefix}/s"
    return f"{number(x)}/s"


def ratio(x: Optional[float]) -> str:
    """``0.911x``, ``103x``, ``1,172x``."""
    text = number(x)
    return text if text == UNKNOWN else f"{text}x"


def percent(fraction: Optional[float]) -> str:
    """A fraction (0.458) as a percentage (``45.8%``)."""
    if fraction is None or not _is_number(fraction):
        return UNKNOWN
    text = number(100.0 * float(fraction))
    return text if text == UNKNOWN else f"{text}%"


_BY_UNIT: dict[str, Callable[[Any], str]] = {
    "ns": duration_ns,
    "s": duration,
    "B": size,
    "x": ratio,
    "%": percent,
    "/s": rate,
}
"""The formatter of each unit that has its own (``UNITS`` but ""); any other unit follows the number."""


def quantity(v: Any, unit: str = "") -> str:
    """``v`` (a raw value in ``unit``) for a person: the one entry point of the tables.

    Text stays text (``"-"`` is "not applicable", which is not the same as unknown)."""
    if v is None:
        return UNKNOWN
    if not _is_number(v):
        return str(v)
    if unit in _BY_UNIT:
        return _BY_UNIT[unit](v)
    text = number(v)
    return f"{text} {unit}" if unit and text != UNKNOWN else text


def span(low: Any, high: Any, unit: str = "") -> str:
    """A range: ``1.98 - 2.1 us``, or ``980 ns - 1.2 us`` when its ends need two units."""
    a, b = quantity(low, unit), quantity(high, unit)
    head, _, tail = a.rpartition(" ")
    if head and b.endswith(f" {tail}") and not tail[:1].isdigit():
        a = head
    return f"{a} - {b}"


__all__ = [
    "DIGITS",
    "UNITS",
    "UNKNOWN",
    "duration",
    "duration_ns",
    "number",
    "percent",
    "quantity",
    "rate",
    "ratio",
    "size",
    "span",
]
