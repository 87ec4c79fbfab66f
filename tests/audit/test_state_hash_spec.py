"""docs/protocol.md 4.9 against the engine: after every move of whole hands in every preset, the
engine's public state changes as the spec's independent reading (`state_model`) says, every
view holds the same public state, and the state hash is SHA-256 of its canonical encoding."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from state_model import check_shape, check_step, state_hash

from buraco_p2p.bots import HeuristicBot, play_match
from buraco_p2p.engine.local import LocalTable
from buraco_p2p.rules import PRESETS, get_preset


@pytest.mark.parametrize("preset", list(PRESETS))
def test_every_move_of_a_hand_follows_the_spec(preset: str) -> None:
    bot = HeuristicBot()
    record = play_match(get_preset(preset), [bot] * 4, random.Random(preset), max_hands=1)
    hand = record.hands[0]
    table = LocalTable(hand.setup, hand.permutation)
    before = table.views[0].public_state()
    check_shape(before, 4)
    kinds = set()
    for move in hand.moves:
        table.push(move)
        states = [v.public_state() for v in table.views]
        assert all(s == states[0] for s in states), "views disagree on the public state"
        after = states[0]
        check_step(before, list(move.to_wire()), after)
        assert state_hash(after) == table.views[0].state_hash()
        kinds.add(move.to_wire()[0])
        before = after
    assert {0, 3, 5} <= kinds
    assert before[4] == "ended"


def test_a_changed_list_order_is_caught() -> None:
    """The model is not vacuous: a hand whose order differs from the spec's is refused."""
    bot = HeuristicBot()
    record = play_match(get_preset("classic"), [bot] * 4, random.Random(3), max_hands=1)
    hand = record.hands[0]
    table = LocalTable(hand.setup, hand.permutation)
    before = table.views[0].public_state()
    move = hand.moves[0]
    table.push(move)
    after = table.views[0].public_state()
    seat = move.to_wire()[1]
    after[6][seat] = [after[6][seat][-1], *after[6][seat][:-1]]
    with pytest.raises(AssertionError):
        check_step(before, list(move.to_wire()), after)


def test_the_spec_has_one_row_per_element_of_the_public_state() -> None:
    """docs/protocol.md 4.9's table lists every element the engine hashes, in order."""
    doc = (Path(__file__).resolve().parents[2] / "docs" / "protocol.md").read_text("utf-8")
    section = doc[doc.index("### 4.9 ") :]
    section = section[: section.index("\n### ")]
    rows = re.findall(r"^\| (\d+) \|", section, flags=re.M)
    bot = HeuristicBot()
    record = play_match(get_preset("classic"), [bot] * 4, random.Random(5), max_hands=1)
    state = LocalTable(record.hands[0].setup, record.hands[0].permutation).views[0].public_state()
    assert [int(r) for r in rows] == list(range(len(state)))
