"""The peers the Makefile installs (its ``PEERS``) are here. Without one, the tests that compare
against it skip; in CI (``CI`` set) that must not pass unseen, so each missing peer fails here."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from typing import Callable

import pytest

MAKEFILE = Path(__file__).resolve().parents[1] / "Makefile"


def makefile_peers() -> list[str]:
    found = re.search(r"^PEERS := (.+)$", MAKEFILE.read_text(), re.M)
    assert found, "the Makefile lists its peers as PEERS := ..."
    return found.group(1).split()


def test_the_peers_include_every_reference_tool() -> None:
    assert {"libcachesim", "cachetools", "ciw", "simpy"} <= set(makefile_peers())


@pytest.mark.parametrize("name", makefile_peers())
def test_peer_is_installed(name: str, missing: Callable[[str], None]) -> None:
    if importlib.util.find_spec(name) is None:
        missing(f"the peer {name} is not installed (make installs it: pip install {name})")


def test_a_missing_peer_fails_in_ci_and_skips_elsewhere(
    missing: Callable[[str], None], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CI", "1")
    with pytest.raises(pytest.fail.Exception, match="not accepted in CI"):
        missing("the peer nope is not installed")
    monkeypatch.delenv("CI")
    with pytest.raises(pytest.skip.Exception, match="nope"):
        missing("the peer nope is not installed")
