"""The one formatter of numbers: significant digits, separators, units, unknown."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from osbench import _format as fmt


@pytest.mark.parametrize(
    "value, text",
    [
        (0.910923, "0.911"),  # the raw speedup
        (925.4, "925"),  # digits left of the point are never rounded away ...
        (12345.6, "12,346"),  # ... and are grouped
        (31.27, "31.3"),
        (2.1334330115966353, "2.13"),
        (5.000000000000001, "5"),  # what floating point leaves of an exact 5
        (12.25, "12.25"),  # an exact answer halfway at the fourth digit is not rounded either way
        (9.25, "9.25"),
        (6.5, "6.5"),
        (85.68, "85.7"),
        (0.00123, "0.00123"),
        (1.5e-5, "1.50e-5"),
        (0.0, "0"),
        (-1234.5, "-1,234"),
        (113872, "113,872"),
        (np.int64(2_000_000), "2,000,000"),
        (np.float64(0.4583), "0.458"),
        (None, "unknown"),
        (float("nan"), "unknown"),
        (float("inf"), "inf"),
        ("-", "-"),  # text stays text: "not applicable" is not "unknown"
    ],
)
def test_number(value: object, text: str) -> None:
    assert fmt.number(value) == text


@pytest.mark.parametrize(
    "value, unit, text",
    [
        (19.3, "ns", "19.3 ns"),
        (5930.0, "ns", "5.93 us"),
        (48123.0, "ns", "48.1 us"),
        (1_234_567.0, "ns", "1.23 ms"),
        (2.5e9, "ns", "2.5 s"),
        (0.0324, "s", "32.4 ms"),
        (125.0, "s", "125 s"),
        (512, "B", "512 B"),
        (32 << 10, "B", "32 KiB"),
        (1536 << 10, "B", "1.5 MiB"),
        (25 * 2**30 + 123_456_789, "B", "25.1 GiB"),
        (3 << 40, "B", "3 TiB"),
        (0.910923, "x", "0.911x"),
        (1172.7, "x", "1,173x"),
        (0.4583, "%", "45.8%"),
        (12_345_678, "/s", "12.3 M/s"),
        (950.4, "/s", "950/s"),
        (2696.0, "MHz", "2,696 MHz"),
        (None, "ns", "unknown"),
        (None, "B", "unknown"),
        (None, "MHz", "unknown"),
        ("-", "ns", "-"),
    ],
)
def test_quantity(value: object, unit: str, text: str) -> None:
    assert fmt.quantity(value, unit) == text


def test_span_names_the_unit_once_when_both_ends_share_it() -> None:
    assert fmt.span(1950.0, 2010.0, "ns") == "1.95 - 2.01 us"
    assert fmt.span(980.0, 1200.0, "ns") == "980 ns - 1.2 us"
    assert fmt.span(1.0, 2.0) == "1 - 2"


def _parse(text: str) -> float:
    return float(text.replace(",", ""))


@given(st.floats(min_value=1e-3, max_value=1e15, allow_nan=False) | st.floats(min_value=-1e15, max_value=-1e-3))
def test_number_keeps_three_significant_digits(x: float) -> None:
    text = fmt.number(x)
    assert _parse(text) == pytest.approx(x, rel=5e-3)
    digits = text.lstrip("-").split(".")[0].replace(",", "")
    if len(digits) > 3:  # grouped by thousands, so nobody counts digits
        assert "," in text


@given(st.floats(min_value=0.5, max_value=1e14, allow_nan=False))
def test_durations_pick_the_unit_that_keeps_the_mantissa_small(ns: float) -> None:
    value, unit = fmt.duration_ns(ns).split(" ")
    scale = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}[unit]
    assert _parse(value) * scale == pytest.approx(ns, rel=5e-3)
    if unit != "s":
        assert _parse(value) < 1000


@given(st.floats(min_value=0, max_value=2.0**60))
def test_sizes_use_binary_prefixes(n: float) -> None:
    value, unit = fmt.size(n).split(" ")
    scale = {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}[unit]
    assert _parse(value) * scale == pytest.approx(n, rel=5e-3, abs=0.5)
    if unit != "TiB":
        assert _parse(value) < 1024


@given(st.one_of(st.none(), st.floats(), st.integers(), st.text(max_size=5)), st.sampled_from([*fmt.UNITS, "MHz"]))
def test_quantity_never_fails(v: object, unit: str) -> None:
    text = fmt.quantity(v, unit)
    assert text == v if isinstance(v, str) else bool(text)
    if v is None or (isinstance(v, float) and math.isnan(v)):
        assert text == "unknown"
