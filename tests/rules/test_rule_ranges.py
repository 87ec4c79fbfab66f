"""Every numeric rule has a documented range, and the wire form is canonical."""

from __future__ import annotations

import re
from pathlib import Path

import msgpack
import pytest

from buraco_p2p.rules import PRESETS, RuleError, RuleSet, get_preset
from buraco_p2p.rules.ranges import RANGES

US = get_preset("us")
DOC = (Path(__file__).parents[2] / "docs" / "rules.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("key", sorted(RANGES))
def test_every_range_is_documented(key: str) -> None:
    lo, hi = RANGES[key]
    rows = [line for line in DOC.splitlines() if line.startswith("| ") and f"`{key}`" in line]
    assert any(re.search(rf"\| {lo}\.\.{hi}\b", row) for row in rows), key


@pytest.mark.parametrize("key", sorted(RANGES))
def test_a_value_outside_its_range_is_refused_by_override_and_wire(key: str) -> None:
    lo, hi = RANGES[key]
    for bad in (lo - 1, hi + 1, 2**64 - 1, -(2**63)):
        with pytest.raises(RuleError, match=key):
            US.with_overrides({key: bad})
        with pytest.raises(RuleError):
            RuleSet.from_wire({**US.to_wire(), key: bad})
    for good in (lo, hi):
        try:
            rules = US.with_overrides({key: good})
        except RuleError as e:  # a bound that needs another rule changed too (the stock)
            assert "stock" in str(e)
            continue
        assert RuleSet.from_wire(msgpack.unpackb(msgpack.packb(rules.to_wire()))) == rules


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("no_pot_penalty", 2**64 - 1),
        ("target_score", 2**64 - 1),
        ("initial_meld_min", 2**64 - 1),
        ("pot_size", 1),
        ("clean_run_length_bonus", [[13, -500]]),
        ("clean_run_length_bonus", [[13, 2**64 - 1]]),
    ],
)
def test_values_that_stall_a_hand_or_overflow_a_score_are_refused(key: str, value: object) -> None:
    with pytest.raises(RuleError):
        RuleSet.from_wire({**US.to_wire(), key: value})


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("set_ranks", [13, 1, 11, 12]),  # unsorted
        ("set_ranks", [1, 1, 11, 12, 13]),  # repeated
        ("set_ranks", (1, 11, 12, 13)),  # not a list
        ("clean_run_length_bonus", [{13: 500, 14: 1000}]),  # a map for a pair
        ("clean_run_length_bonus", {13: 500}),
        ("clean_run_length_bonus", [(13, 500)]),  # a tuple for a pair
        ("clean_run_length_bonus", [[14, 1000], [13, 500]]),
    ],
)
def test_a_non_canonical_wire_form_is_refused(key: str, value: object) -> None:
    base = PRESETS["fechado"].to_wire()
    with pytest.raises(RuleError):
        RuleSet.from_wire({**base, key: value})


@pytest.mark.parametrize("name", list(PRESETS))
def test_every_preset_wire_form_is_canonical(name: str) -> None:
    wire = PRESETS[name].to_wire()
    back = msgpack.unpackb(msgpack.packb(wire))
    assert RuleSet.from_wire(back).to_wire() == wire
