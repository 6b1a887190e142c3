"""The traces the cache tests replay: seeded generators of the right shape, and the oracleGeneral files the peers read."""

from __future__ import annotations

import numpy as np
import pytest

import osbench as ob


def test_generators_are_seeded_and_shaped() -> None:
    a, b = ob.traces.zipf(100, 1.0, 1000, seed=7), ob.traces.zipf(100, 1.0, 1000, seed=7)
    assert np.array_equal(a.keys, b.keys) and a.keys.min() >= 0 and a.keys.max() < 100
    assert not np.array_equal(a.keys, ob.traces.zipf(100, 1.0, 1000, seed=8).keys)
    # rank 1 is the most popular
    counts = np.bincount(a.keys, minlength=100)
    assert counts[0] == counts.max()
    assert ob.traces.loop(3, 7).keys.tolist() == [0, 1, 2, 0, 1, 2, 0]
    s = ob.traces.scan(5, 100, scan_length=10, period=20, seed=1).keys
    assert len(s) == 100 and set(s[20:30].tolist()) == set(range(5, 15))
    d = ob.traces.drift(100, 1000, n_hot=10, phases=2, p_hot=1.0, seed=1).keys
    assert set(d[:500].tolist()) <= set(range(10)) and set(d[500:].tolist()) <= set(range(10, 20))
    with pytest.raises(ValueError, match="alpha"):
        ob.traces.zipf(10, -1.0, 10)
    with pytest.raises(ValueError, match="n_hot"):
        ob.traces.drift(10, 10, n_hot=6, phases=2)


def test_oracle_general_round_trip(tmp_path) -> None:  # type: ignore[no-untyped-def]
    t = ob.traces.zipf(50, 1.0, 500, seed=2)
    path = tmp_path / "t.oracleGeneral.bin"
    ob.traces.write_oracle_general(t, path)
    back = ob.traces.read_oracle_general(path)
    assert np.array_equal(back.keys.astype(np.int64), t.keys) and back.sizes.tolist() == [1] * 500
    path.write_bytes(path.read_bytes()[:-5])
    with pytest.raises(ValueError, match="byte offset 11976"):
        ob.traces.read_oracle_general(path)
