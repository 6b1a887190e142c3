"""The native round-trip mechanisms: declared once in the core's table, each measured by one
entry per mode (threads, processes) of Python's round-trip registry."""

from __future__ import annotations

import sys

import pytest

from osbench import _native

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="host probes are Linux-only")


def test_every_native_mechanism_has_its_round_trips_and_no_other() -> None:
    from osbench.host import MECHANISMS

    native = {name for name, m in MECHANISMS.items() if m.engine == "native"}
    assert native == {f"native-{way}-{m}" for m in _native.HOST_MECHANISMS for way in ("thread", "process")}
