"""The policy table and its readers held together: the core's table (which the binding exports
and every Python list derives from), the reference registry, one file per policy on both sides,
and the page that tells a contributor where to add one (docs/adding-a-policy.md). Adding a
policy in fewer than its four places fails here or in the core's table tests."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

import osbench as ob
from osbench import _native
from osbench.cache import (
    COSTED_POLICIES,
    LIBCACHESIM_NAMES,
    LIBCACHESIM_STATISTICAL,
    MIN_CAPACITY,
    OFFLINE,
    PARAMETERS,
    POLICIES,
    RANDOMISED,
    TABLE,
    reference,
)

REPO = Path(__file__).resolve().parents[2]
REFERENCE_DIR = Path(reference.__file__).parent


def test_native_policy_names_match() -> None:
    assert tuple(row["name"] for row in _native.CACHE_POLICIES) == POLICIES
    assert set(reference.POLICY_CLASSES) == set(POLICIES)


def test_the_reference_registry_has_the_tables_names_in_its_order() -> None:
    assert list(reference.POLICY_CLASSES) == list(POLICIES)


def test_one_file_per_policy_on_both_sides() -> None:
    core = REPO / "rust/osbench-core/src/cache/policies"
    files = sorted(p.replace("-", "_") for p in POLICIES)  # belady-size lives in belady_size.rs
    assert sorted(p.stem for p in core.glob("*.rs") if p.stem != "mod") == files
    assert sorted(p.stem for p in REFERENCE_DIR.glob("*.py") if p.stem != "__init__") == files
    for name, cls in reference.POLICY_CLASSES.items():
        assert cls.__module__ == f"osbench.cache.reference.{name.replace('-', '_')}", name


def test_the_derived_lists_are_the_tables() -> None:
    assert MIN_CAPACITY == {p.name: p.min_capacity for p in TABLE.values() if p.min_capacity > 1}
    assert OFFLINE == {p.name for p in TABLE.values() if p.offline}
    assert COSTED_POLICIES == tuple(p.name for p in TABLE.values() if p.takes_costs)
    assert PARAMETERS == {p.name: p.reads for p in TABLE.values()}
    # The golden facts behind them.
    assert (MIN_CAPACITY, OFFLINE, COSTED_POLICIES) == (
        {
            "s3fifo": 10,
            "twoq": 4,
            "slru": 4,
            "lirs": 2,
            "clockpro": 2,
            "cacheus": 2,
            "clock2qplus": 20,
            "flashprob": 20,
            "wtinylfu": 100,
        },
        {"opt", "belady-size"},
        ("gdsf",),
    )
    assert {p: r for p, r in PARAMETERS.items() if r} == {
        "clock": ("bit_on_insert",),
        "random": ("seed",),
        "hyperbolic": ("seed", "samples"),
        "lecar": ("seed",),
        "cacheus": ("seed",),
        "lhd": ("seed",),
        "slru": ("segments",),
        "lruk": ("k",),
        "lruprob": ("seed", "prob"),
        "flashprob": ("seed", "ram_size_ratio", "disk_admit_prob"),
        "mq": ("n_queue", "lifetime", "qout_size_ratio"),
        "clockpro": ("bit_on_insert", "init_ratio_cold"),
        "clock2qplus": ("fifo_size_ratio", "ghost_size_ratio", "move_to_main_threshold", "corr_window_ratio"),
        "wtinylfu": ("window",),
    }
    # A policy is randomised when it reads a seed; its libCacheSim class then agrees in
    # distribution only, so the exact peers leave it out.
    assert (
        RANDOMISED
        == tuple(p.name for p in TABLE.values() if "seed" in p.params)
        == ("random", "hyperbolic", "lecar", "cacheus", "lhd", "lruprob", "flashprob")
    )
    assert LIBCACHESIM_STATISTICAL == {p: TABLE[p].libcachesim for p in RANDOMISED if TABLE[p].libcachesim}
    assert not set(LIBCACHESIM_NAMES) & set(RANDOMISED)


@pytest.mark.parametrize("policy", POLICIES)
def test_each_reference_class_does_what_its_row_says(policy: str) -> None:
    row = TABLE[policy]
    cls = reference.POLICY_CLASSES[policy]
    init = inspect.signature(cls).parameters
    assert all(p in init and init[p].default is not inspect.Parameter.empty for p in row.reads), policy
    # The smallest capacity: refused just below it by the class itself.
    reference.make(policy, row.min_capacity)
    if row.min_capacity > 1:
        with pytest.raises(ValueError, match="capacity"):
            reference.make(policy, row.min_capacity - 1)
    # Offline: an access without its next use is refused.
    cache = reference.make(policy, 4 * row.min_capacity)
    if row.offline:
        with pytest.raises(ValueError, match="next_use"):
            cache.access(1)
    else:
        assert cache.access(1) is False and cache.access(1) is True
    # Costs: only the classes whose row takes them have a cost parameter.
    assert ("cost" in inspect.signature(cache.access).parameters) == row.takes_costs, policy


@pytest.mark.parametrize("policy", POLICIES)
def test_a_parameter_is_taken_by_the_policies_that_read_it_only(policy: str) -> None:
    cap = max(TABLE[policy].min_capacity, 4)
    reads = "bit_on_insert" in TABLE[policy].reads
    calls = [
        lambda: ob.cache.replay([1, 2, 1], policy, cap, bit_on_insert=True),
        lambda: ob.cache.replay([1, 2, 1], policy, cap, bit_on_insert=True, engine="reference"),
        lambda: ob.cache.curve([1, 2, 1], policy, [cap], bit_on_insert=True),
        lambda: ob.cache.stream(policy, cap, bit_on_insert=True),
    ]
    if policy not in OFFLINE:
        calls.append(lambda: ob.cache.new(policy, cap, bit_on_insert=True))
    for call in calls:
        if reads:
            call()
        else:
            with pytest.raises(ValueError, match=rf"bit_on_insert=True is not accepted for policy='{policy}'"):
                call()
    if not reads:
        with pytest.raises(ValueError, match="bit_on_insert"):
            _native.OnlineCache(policy, cap, {"bit_on_insert": True}) if policy not in OFFLINE else _native.CacheStream(
                policy, cap, {"bit_on_insert": True}
            )


def test_an_unknown_keyword_is_refused_with_the_policys_parameters() -> None:
    # neither a parameter nor, for a trace in memory, a file's read option: the refusal lists
    # what the policy does take
    with pytest.raises(TypeError, match=r"disk_cache='clock' is not accepted: it is not a parameter of flashprob "):
        ob.cache.replay([1, 2, 1], "flashprob", 20, disk_cache="clock")
    with pytest.raises(TypeError, match=r"\(its parameters: seed, ram_size_ratio, disk_admit_prob\)"):
        ob.cache.replay([1, 2, 1], "flashprob", 20, disk_cache="clock")
    with pytest.raises(TypeError, match=r"not a parameter of lru \(its parameters: none\)"):
        ob.cache.replay([1, 2, 1], "lru", 4, bogus=3)


def test_the_contributors_page_names_places_that_exist() -> None:
    page = (REPO / "docs/adding-a-policy.md").read_text(encoding="utf-8")
    paths = set(re.findall(r"`((?:rust|python|tests|benches)/[\w/.\-]+)`", page))
    assert len(paths) >= 6
    for path in paths:
        assert (REPO / path).exists(), path
